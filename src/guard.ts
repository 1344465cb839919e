/**
 * The enforcement helpers (docs/api.md and docs/interceptors.md): `guardTool` runs a tool only after an
 * ALLOW or WARN whose permit verifies, then its `after` interceptors and the optional result check;
 * `guardText` resolves with the text to use. Everything else throws a {@link PolicyEnforcementError}.
 * @internal
 */

import { ABORT_CAUSES, type Outcome } from './core/exchange.js';
import { type CompiledInterceptor, runAfter } from './core/interceptors.js';
import {
  checkToolName,
  isAbortSignal,
  isSessionId,
  type Payload,
  type Snapshot,
  takeSnapshot,
} from './core/request.js';
import {
  type FailClosedCode,
  isTextStage,
  type PolicyDecision,
  type Stage,
  synthesizeBlock,
  type TextStage,
} from './decision.js';
import { PolicyBlockedError, PolicyEscalatedError } from './errors.js';
import type { CallOptions, EgressCallOptions } from './options/pep.js';
import type { PermitChecker, PermitExpectation } from './permit/verifier.js';

/** What `guardTool`'s `execute` receives besides the args. */
export interface ToolExecutionContext {
  /** The verified permit to present to the side-effecting service (undefined only with `permits: false`). */
  permitId: string | undefined;
  /** The PDP's decision (ALLOW or WARN). */
  decision: PolicyDecision;
  /** The caller's signal, if any. */
  signal: AbortSignal | undefined;
}

/** A tool wrapped by `guardTool`: authorizes, verifies the permit, then executes. */
export type GuardedTool<R> = (args: Record<string, unknown>, opts?: CallOptions) => Promise<R>;

/** Options of `guardTool`. */
export interface GuardToolOptions<R> {
  /**
   * Check the tool's result at `context_egress` (with `tool: name`) before it is returned, after the
   * `after` interceptors: `true` sends it as text (a string as is, anything else as JSON), a function
   * turns it into the text to check. WARN returns `transformedContent` in place of the result; BLOCK
   * and ESCALATE throw. This is where a tool output carrying an injected instruction or a secret is
   * stopped before it reaches the model. @defaultValue false
   */
  checkResult?: boolean | ((result: R) => string);
}

/** What the helpers need from the client that made them. */
export interface GuardDeps {
  readonly agentId: string;
  readonly session: string;
  readonly timeoutMs: number;
  /** `undefined` when `permits` is not configured, `false` when explicitly off. */
  readonly permits: 'on' | 'off' | undefined;
  checker(): PermitChecker;
  /** One observed decision, with the args that were sent after the interceptors. */
  run(stage: Stage, payload: Payload, rawOpts: unknown, snapshot?: Snapshot): Promise<Outcome>;
  observe(outcome: Outcome, started: number, tool: string | undefined): PolicyDecision;
  readonly after: readonly CompiledInterceptor[];
}

const SIMULATED = 'a simulated decision can never be enforced';
const CALLER_ABORTED = Symbol('caller aborted');

/** `check`, or a rejection with {@link CALLER_ABORTED} as soon as `signal` fires. */
function untilAborted<T>(check: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    check.catch(() => undefined);
    return Promise.reject(CALLER_ABORTED);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(CALLER_ABORTED);
    signal.addEventListener('abort', onAbort, { once: true });
    check.then(resolve, reject).finally(() => {
      try {
        signal.removeEventListener('abort', onAbort);
      } catch {
        // a caller's signal that throws here changes nothing
      }
    });
  });
}

/** The caller's signal and session as the decision read them (an invalid one was already a BLOCK). */
function readCall(callOpts: unknown, fallback: string): { signal: AbortSignal | undefined; session: string } {
  try {
    const o = callOpts as CallOptions | undefined;
    const s = o?.signal;
    const session = o?.session;
    return { signal: isAbortSignal(s) ? s : undefined, session: isSessionId(session) ? session : fallback };
  } catch {
    return { signal: undefined, session: fallback };
  }
}

/** The result as the text `checkResult` sends: a string as is, anything else as JSON. */
function resultText<R>(result: R, checkResult: true | ((result: R) => string)): string {
  if (typeof checkResult === 'function') {
    const text = checkResult(result);
    if (typeof text !== 'string') throw new TypeError('checkResult must return a string');
    return text;
  }
  if (typeof result === 'string') return result;
  const json = JSON.stringify(result);
  return json === undefined ? '' : json;
}

/**
 * Builds `guardTool` and `guardText` over one client.
 * @internal
 */
export function makeGuards(deps: GuardDeps): {
  guardTool<R>(
    name: string,
    execute: (args: Record<string, unknown>, ctx: ToolExecutionContext) => R | Promise<R>,
    options?: GuardToolOptions<R>,
  ): GuardedTool<R>;
  guardText(stage: TextStage, content: string, opts?: CallOptions): Promise<string>;
} {
  /**
   * A BLOCK the helpers make from a decision they refuse to enforce (simulated, a permit that fails,
   * an abort, an `after` interceptor); observers see it too, after the PDP's decision.
   */
  function refuse(
    decision: PolicyDecision,
    code: FailClosedCode,
    message: string,
    started: number,
    tool?: string,
    interceptor?: string,
  ): PolicyDecision {
    const blocked = synthesizeBlock(decision.stage, decision.requestId, code, message, 0);
    if (decision.decisionId !== undefined) blocked.decisionId = decision.decisionId;
    if (decision.latches !== undefined) blocked.latches = decision.latches;
    if (decision.simulated) blocked.simulated = true;
    if (interceptor !== undefined) blocked.interceptor = interceptor;
    return deps.observe({ decision: blocked, attempts: 0 }, started, tool);
  }

  /** Throws for anything but an enforceable ALLOW or WARN. */
  function enforce(decision: PolicyDecision, started: number, tool?: string): void {
    if (decision.verdict === 'ESCALATE') throw new PolicyEscalatedError(decision, tool);
    if (decision.verdict === 'BLOCK') throw new PolicyBlockedError(decision, tool);
    if (decision.simulated) throw new PolicyBlockedError(refuse(decision, 'simulated', SIMULATED, started, tool), tool);
  }

  async function checkText(stage: TextStage, content: string, opts: EgressCallOptions | unknown, tool?: string) {
    const started = performance.now();
    const { decision } = await deps.run(stage, { content }, opts);
    enforce(decision, started, tool);
    return decision.verdict === 'WARN' ? (decision.transformedContent as string) : content;
  }

  return {
    guardTool<R>(
      name: string,
      execute: (args: Record<string, unknown>, ctx: ToolExecutionContext) => R | Promise<R>,
      options?: GuardToolOptions<R>,
    ): GuardedTool<R> {
      if (typeof name !== 'string') throw new TypeError('guardTool: name must be a string');
      try {
        checkToolName(name);
      } catch {
        throw new TypeError(
          'guardTool: name must be a tool name of at most 256 characters that normalizes to something',
        );
      }
      if (typeof execute !== 'function') throw new TypeError('guardTool: execute must be a function');
      if (options !== undefined && (typeof options !== 'object' || options === null)) {
        throw new TypeError('guardTool: options must be an object');
      }
      for (const key of Object.keys(options ?? {})) {
        if (key !== 'checkResult') throw new TypeError(`guardTool: unknown option ${JSON.stringify(key.slice(0, 40))}`);
      }
      const checkResult = options?.checkResult;
      if (checkResult !== undefined && typeof checkResult !== 'boolean' && typeof checkResult !== 'function') {
        throw new TypeError('guardTool: checkResult must be a boolean or a function');
      }
      if (deps.permits === undefined) {
        throw new TypeError(
          'guardTool: configure `permits` (or pass `permits: false` explicitly to skip verification)',
        );
      }
      const verifier = deps.permits === 'on' ? deps.checker() : undefined;
      return async (args, callOpts) => {
        // One read of the args: a failed snapshot is answered invalid_request without a network call.
        const snapshot = takeSnapshot(args);
        const started = performance.now();
        const { decision, args: sentArgs, bound } = await deps.run('action', { tool: name, args }, callOpts, snapshot);
        // An interceptor's substitute: its result, without running the tool or asking the PDP (section 7).
        if (decision.substitute !== undefined && decision.interceptor !== undefined) {
          return decision.substitute.result as R;
        }
        enforce(decision, started, name);
        // The args the permit binds: transformedArgs, else what was sent (the snapshot, or an interceptor's replacement).
        const effective = decision.transformedArgs ?? sentArgs;
        if (effective === undefined) throw new PolicyBlockedError(decision, name);
        const { signal, session } = readCall(callOpts, deps.session);
        if (verifier) {
          try {
            const permit = decision.permitId as string;
            const expected: PermitExpectation = { tool: name, args: effective, subject: deps.agentId, session };
            // What rule 5 decoded and hashed, when it was this permit and these very args (the checker
            // compares both again); the signature and every claim are still checked.
            if (bound !== undefined && bound.permit === permit && bound.args === effective) expected.bound = bound;
            const check = verifier.check(permit, expected);
            await (signal ? untilAborted(check, signal) : check);
          } catch (cause) {
            if (cause === CALLER_ABORTED) {
              throw new PolicyBlockedError(
                refuse(decision, 'aborted', ABORT_CAUSES.caller.message, started, name),
                name,
              );
            }
            const code = (cause as { code?: unknown }).code;
            const message = `permit failed verification (${String(code ?? 'error')})`;
            throw new PolicyBlockedError(refuse(decision, 'permit_invalid', message, started, name), name, { cause });
          }
        }
        if (signal?.aborted) {
          throw new PolicyBlockedError(refuse(decision, 'aborted', ABORT_CAUSES.caller.message, started, name), name);
        }
        let result: unknown = await execute(effective, { permitId: decision.permitId, decision, signal });

        if (deps.after.length > 0) {
          const afterStarted = performance.now();
          const out = await runAfter(
            deps.after,
            { stage: 'action', session, tool: checkToolName(name), args: effective, content: undefined },
            result,
            { deadlineAt: afterStarted + deps.timeoutMs, signal: undefined },
          );
          if (out.kind === 'deny') {
            const denied: PolicyDecision = {
              verdict: 'BLOCK',
              stage: 'action',
              requestId: decision.requestId,
              reason: out.reason,
              interceptor: out.name,
            };
            if (decision.decisionId !== undefined) denied.decisionId = decision.decisionId;
            throw new PolicyBlockedError(deps.observe({ decision: denied, attempts: 0 }, afterStarted, name), name);
          }
          if (out.kind === 'failed') {
            const message = `interceptor '${out.name}' ${out.why}`;
            throw new PolicyBlockedError(
              refuse(decision, 'interceptor_failed', message, afterStarted, name, out.name),
              name,
            );
          }
          result = out.result;
        }

        if (checkResult !== undefined && checkResult !== false) {
          let text: string;
          try {
            text = resultText(result as R, checkResult);
          } catch (cause) {
            const message = 'the tool result could not be turned into text to check';
            throw new PolicyBlockedError(refuse(decision, 'invalid_request', message, started, name), name, { cause });
          }
          const egressOpts: EgressCallOptions = { session, tool: name };
          if (signal !== undefined) egressOpts.signal = signal;
          const checked = await checkText('context_egress', text, egressOpts, name);
          return (checked === text ? result : checked) as R;
        }
        return result as R;
      };
    },

    async guardText(stage, content, o) {
      if (!isTextStage(stage))
        throw new TypeError('guardText: stage must be input, context_egress, output or delivery');
      return checkText(stage, content, o);
    },
  };
}
