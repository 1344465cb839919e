/**
 * `createPep`: the five stage methods, `guardTool`, `guardText`, `withSession` and `close`.
 * Data flows one way: stage method -> request -> transport -> wire validation -> enforceability
 * checks -> decision -> observers.
 * @packageDocumentation
 */
import { randomUUID } from 'node:crypto';
import {
  type FailClosedCode,
  isTextStage,
  type PolicyDecision,
  type Stage,
  synthesizeBlock,
  type TextStage,
} from './decision.js';
import { type SentRequest, toDecision } from './enforce.js';
import { PolicyBlockedError, PolicyEscalatedError } from './errors.js';
import { AttemptFailure } from './internal/failure.js';
import { NotJsonError, snapshotJsonObject } from './internal/json.js';
import {
  type CallOptions,
  type DecisionEvent,
  type PepOptions,
  type ResolvedOptions,
  resolveOptions,
} from './options.js';
import { normalizeToolName } from './permit/normalize.js';
import { createPermitChecker, type PermitChecker } from './permit/verify.js';
import { withRetries } from './retry.js';
import { Abort, type AbortLike } from './transport/abort.js';
import { type AbortCause, AbortReason, HttpTransport } from './transport/http.js';
import { VERSION } from './version.js';
import { type AuthorizeRequest, encodeRequest, parseResponse } from './wire.js';

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

/** The PEP client returned by {@link createPep}. */
export interface Pep {
  /**
   * Asks the PDP whether the tool call may run. Never rejects.
   * @param tool - the tool name as the agent proposed it (sent as is; the PDP normalizes)
   * @param args - the call's arguments: a plain object of JSON values (snapshotted before sending)
   * @param opts - `{ signal, session, simulated }`
   * @returns the decision; ALLOW/WARN carry `permitId` (not on simulated requests)
   */
  authorizeAction(tool: string, args: Record<string, unknown>, opts?: CallOptions): Promise<PolicyDecision>;
  /** Checks user input (stage `input`). Never rejects. */
  checkInput(content: string, opts?: CallOptions): Promise<PolicyDecision>;
  /** Checks context about to be sent out to a model (stage `context_egress`). Never rejects. */
  checkContextEgress(content: string, opts?: CallOptions): Promise<PolicyDecision>;
  /** Checks a model's draft output (stage `output`). Never rejects. */
  checkOutput(content: string, opts?: CallOptions): Promise<PolicyDecision>;
  /** Checks the final message before it is delivered (stage `delivery`). Never rejects. */
  checkDelivery(content: string, opts?: CallOptions): Promise<PolicyDecision>;
  /**
   * Wraps a tool so that it runs only after an ALLOW or WARN whose permit verifies.
   * @param name - the tool name (must normalize to something)
   * @param execute - the side effect; receives the effective args (`transformedArgs` or the snapshot)
   * @returns `(args, opts?) => Promise<R>`
   * @throws TypeError at creation when `permits` is not configured (unless `permits: false`), or `name` is bad
   */
  guardTool<R>(
    name: string,
    execute: (args: Record<string, unknown>, ctx: ToolExecutionContext) => R | Promise<R>,
  ): GuardedTool<R>;
  /**
   * Checks text at a stage and resolves with the text to use (original on ALLOW, transformed on WARN).
   * @throws PolicyBlockedError on BLOCK (PDP or synthesized) or a simulated decision
   * @throws PolicyEscalatedError on ESCALATE
   */
  guardText(stage: TextStage, content: string, opts?: CallOptions): Promise<string>;
  /** A client bound to another session, sharing this client's connection pool. @throws TypeError on an empty id */
  withSession(session: string): Pep;
  /** Releases the connection pool; in-flight and later decisions resolve BLOCK `pdp_unreachable`. */
  close(): Promise<void>;
}

interface Shared {
  readonly opts: ResolvedOptions;
  readonly transport: HttpTransport;
  readonly userAgent: string;
  readonly inflight: Set<(cause: AbortCause) => void>;
  closed: boolean;
  checker: PermitChecker | undefined;
}

type Payload = { content: unknown } | { tool: unknown; args: unknown };

/** An outcome before observers: the decision and the attempts it took. */
interface Outcome {
  decision: PolicyDecision;
  attempts: number;
}

const SIMULATED = 'a simulated decision can never be enforced';

const ABORT_CODES: Record<AbortCause, FailClosedCode> = {
  deadline: 'pdp_timeout',
  attempt_timeout: 'pdp_timeout',
  caller: 'aborted',
  closed: 'pdp_unreachable',
};
const ABORT_MESSAGES: Record<AbortCause, string> = {
  deadline: 'PDP decision deadline passed',
  attempt_timeout: 'PDP attempt timed out',
  caller: 'aborted by the caller',
  closed: 'client closed',
};

function isAbortSignal(v: unknown): v is AbortSignal {
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as AbortSignal).aborted === 'boolean' &&
    typeof (v as AbortSignal).addEventListener === 'function'
  );
}

class InvalidRequest extends Error {}

/** Args read once: their snapshot, or why they could not be taken. */
type Snapshot = { ok: true; args: Record<string, unknown> } | { ok: false; error: unknown };

function takeSnapshot(args: unknown): Snapshot {
  try {
    return { ok: true, args: snapshotJsonObject(args) };
  } catch (error) {
    return { ok: false, error };
  }
}

/** Names the kind of value that is not JSON; never copies a message the args themselves threw. */
function argsMessage(error: unknown): string {
  return error instanceof NotJsonError
    ? `args are not a plain object of JSON values: ${error.message}`
    : 'args could not be read as a plain object of JSON values';
}

function readCallOptions(
  raw: unknown,
  defaults: { session: string; simulated: boolean },
): { signal: AbortSignal | undefined; session: string; simulated: boolean } {
  if (raw === undefined) return { signal: undefined, session: defaults.session, simulated: defaults.simulated };
  if (typeof raw !== 'object' || raw === null) throw new InvalidRequest('call options must be an object');
  const o = raw as CallOptions;
  if (o.signal !== undefined && !isAbortSignal(o.signal)) throw new InvalidRequest('signal must be an AbortSignal');
  if (
    o.session !== undefined &&
    (typeof o.session !== 'string' || o.session.trim() === '' || !o.session.isWellFormed())
  ) {
    throw new InvalidRequest('session must be a non-empty string');
  }
  if (o.simulated !== undefined && typeof o.simulated !== 'boolean')
    throw new InvalidRequest('simulated must be a boolean');
  return { signal: o.signal, session: o.session ?? defaults.session, simulated: o.simulated ?? defaults.simulated };
}

function redactForObserver(d: PolicyDecision): DecisionEvent['decision'] {
  const { permitId: _p, transformedArgs: _a, transformedContent: _c, ...rest } = d;
  if (rest.synthesized) rest.synthesized = { ...rest.synthesized };
  if (rest.latches) rest.latches = [...rest.latches];
  return rest;
}

/**
 * Creates a PEP client that sends every step to the PDP and enforces its verdict, failing closed.
 *
 * @param options - see {@link PepOptions}; `pdpUrl`, `agentId` and `session` are required
 * @returns a {@link Pep} with its own keep-alive connection pool
 * @throws TypeError synchronously on a bad option (missing or non-http(s) `pdpUrl`, empty `agentId`
 *   or `session`, negative or non-integer numbers, `none`/HMAC permit algorithms, ...)
 * @remarks The five stage methods never reject. A PDP that is down, slow, answers anything but a
 * valid, enforceable decision (CONTRACT.md section 3, rules 1-5; RFC 7493 I-JSON), or a caller's abort
 * yields a synthesized BLOCK with a {@link FailClosedCode}, never an ALLOW.
 * @example
 * ```ts
 * const pep = createPep({ pdpUrl: 'http://127.0.0.1:8787', agentId: 'support-ai', session: 'sess_demo',
 *   permits: { keys: 'http://127.0.0.1:8787/.well-known/jwks.json', issuer: 'http://127.0.0.1:8787' } });
 * const d = await pep.checkInput('Where is my order?');
 * if (d.verdict === 'BLOCK') console.log(d.synthesized?.code ?? d.reason);
 * await pep.close();
 * ```
 */
export function createPep(options: PepOptions): Pep {
  const opts = resolveOptions(options);
  const shared: Shared = {
    opts,
    transport: new HttpTransport({
      origin: opts.origin,
      path: opts.path,
      maxResponseBytes: opts.maxResponseBytes,
      dispatcher: opts.dispatcher,
      connections: opts.connections,
    }),
    userAgent: `agent-pep/${VERSION}`,
    inflight: new Set(),
    closed: false,
    checker: undefined,
  };
  // Built now so that a bad key (private, secret, unknown algorithm) is a TypeError at construction.
  if (typeof opts.permits === 'object') shared.checker = createPermitChecker(opts.permits);
  return bindClient(shared, opts.session);
}

function bindClient(shared: Shared, session: string): Pep {
  const { opts } = shared;
  const checkBinding = typeof opts.permits === 'object';

  function decide(stage: Stage, payload: Payload, rawOpts: unknown, snapshot?: Snapshot): Promise<Outcome> {
    const started = performance.now();
    const requestId = randomUUID();
    const block = (code: FailClosedCode, message: string, attempts = 0, status?: number): Outcome => ({
      decision: synthesizeBlock(stage, requestId, code, message, attempts, status),
      attempts,
    });

    let call: ReturnType<typeof readCallOptions>;
    const req: AuthorizeRequest = { agentId: opts.agentId, session, stage, requestId };
    const sent: SentRequest = { stage, requestId, agentId: opts.agentId, session, simulated: false };
    try {
      call = readCallOptions(rawOpts, { session, simulated: opts.simulated });
      req.session = sent.session = call.session;
      if ('content' in payload) {
        const { content } = payload;
        if (typeof content !== 'string') throw new InvalidRequest('content must be a string');
        if (!content.isWellFormed()) throw new InvalidRequest('content contains a lone surrogate');
        req.content = content;
      } else {
        const { tool } = payload;
        if (typeof tool !== 'string' || !tool.isWellFormed()) throw new InvalidRequest('tool must be a string');
        let normalized: string;
        try {
          normalized = normalizeToolName(tool);
        } catch {
          throw new InvalidRequest('tool name normalizes to nothing');
        }
        // Args are read once: a snapshot guardTool already took (or failed to take) is never re-read.
        const taken = snapshot ?? takeSnapshot(payload.args);
        if (!taken.ok) throw new InvalidRequest(argsMessage(taken.error));
        const args = taken.args;
        req.tool = tool;
        req.args = args;
        sent.tool = normalized;
        sent.args = args;
      }
      if (call.simulated) req.simulated = sent.simulated = true;
      if (call.signal?.aborted) return Promise.resolve(block('aborted', 'aborted by the caller'));
    } catch (err) {
      const message = err instanceof InvalidRequest ? err.message : 'the call could not be turned into a request';
      return Promise.resolve(block('invalid_request', message));
    }
    if (shared.closed) return Promise.resolve(block('pdp_unreachable', 'client closed'));
    const { signal } = call;

    let body: string;
    try {
      body = encodeRequest(req);
    } catch {
      return Promise.resolve(block('invalid_request', 'the request could not be serialized'));
    }
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json',
      'x-request-id': requestId,
      'user-agent': shared.userAgent,
    };
    if (opts.apiKey !== undefined) headers.authorization = `Bearer ${opts.apiKey}`;

    return new Promise<Outcome>((resolve) => {
      // Not an AbortController: see transport/abort.ts (this is the per-decision hot path).
      const ctrl = new Abort();
      let attempts = 0;
      let done = false;
      const finish = (o: Outcome): void => {
        if (done) return;
        done = true;
        resolve(o);
        clearTimeout(timer);
        shared.inflight.delete(stop);
        try {
          signal?.removeEventListener('abort', onCallerAbort);
        } catch {
          // a caller's signal that throws here cannot keep the decision from resolving
        }
      };
      // Ends the decision at once; the attempt in flight is aborted and its outcome ignored.
      const stop = (cause: AbortCause): void => {
        if (done) return;
        ctrl.abort(new AbortReason(cause));
        finish(block(ABORT_CODES[cause], ABORT_MESSAGES[cause], attempts));
      };
      const onCallerAbort = (): void => stop('caller');
      const timer = setTimeout(stop, opts.timeoutMs, 'deadline');
      shared.inflight.add(stop);
      try {
        signal?.addEventListener('abort', onCallerAbort, { once: true });
      } catch {
        finish(block('invalid_request', 'signal must be an AbortSignal'));
        return;
      }
      const deadlineAt = started + opts.timeoutMs;

      const attempt = async (n: number): Promise<PolicyDecision> => {
        attempts = n;
        let attemptSignal: AbortLike = ctrl;
        let attemptTimer: NodeJS.Timeout | undefined;
        let unlink: (() => void) | undefined;
        if (opts.attemptTimeoutMs < deadlineAt - performance.now()) {
          const per = new Abort();
          const forward = (): void => per.abort(ctrl.reason);
          ctrl.addEventListener('abort', forward);
          unlink = () => ctrl.removeEventListener('abort', forward);
          attemptTimer = setTimeout(() => per.abort(new AbortReason('attempt_timeout')), opts.attemptTimeoutMs);
          attemptSignal = per;
        }
        try {
          const res = await shared.transport.send(body, headers, attemptSignal);
          const { response, raw } = parseResponse(res.body);
          return toDecision(response, raw, sent, res.headers['x-request-id'], checkBinding);
        } finally {
          if (attemptTimer) clearTimeout(attemptTimer);
          unlink?.();
        }
      };

      withRetries(attempt, { retries: opts.retries, deadlineAt, signal: () => ctrl.signal }).then(
        (decision) => finish({ decision, attempts }),
        (err: unknown) => {
          if (err instanceof AttemptFailure) finish(block(err.code, err.message, attempts, err.status));
          else if (ctrl.aborted) stop('deadline');
          else finish(block('pdp_unreachable', 'PDP request failed', attempts));
        },
      );
    });
  }

  function observe(outcome: Outcome, started: number, tool: string | undefined): PolicyDecision {
    const { decision } = outcome;
    const observer = opts.onDecision;
    if (observer) {
      try {
        const event: DecisionEvent = {
          stage: decision.stage,
          requestId: decision.requestId,
          decision: redactForObserver(decision),
          latencyMs: performance.now() - started,
          attempts: outcome.attempts,
        };
        if (tool !== undefined) event.tool = tool;
        const r = observer(event) as unknown;
        if (r && typeof (r as Promise<unknown>).then === 'function') (r as Promise<unknown>).then(undefined, () => {});
      } catch {
        // An observer cannot change the outcome.
      }
    }
    return decision;
  }

  async function run(stage: Stage, payload: Payload, rawOpts: unknown, snapshot?: Snapshot): Promise<PolicyDecision> {
    const started = performance.now();
    let outcome: Outcome;
    try {
      outcome = await decide(stage, payload, rawOpts, snapshot);
    } catch {
      // Unreachable by design; a bug must still fail closed.
      outcome = { decision: synthesizeBlock(stage, randomUUID(), 'invalid_request', 'internal error', 0), attempts: 0 };
    }
    const tool = 'tool' in payload && typeof payload.tool === 'string' ? payload.tool : undefined;
    return observe(outcome, started, tool);
  }

  /**
   * A BLOCK the guard helpers make from a PDP decision they refuse to enforce (simulated, or a permit
   * that fails verification); observers see it too, after the PDP's decision.
   */
  function refuseLocally(
    decision: PolicyDecision,
    code: FailClosedCode,
    message: string,
    started: number,
    tool?: string,
  ): PolicyDecision {
    const blocked = synthesizeBlock(decision.stage, decision.requestId, code, message, 0);
    if (decision.decisionId !== undefined) blocked.decisionId = decision.decisionId;
    if (decision.latches !== undefined) blocked.latches = decision.latches;
    if (decision.simulated) blocked.simulated = true;
    return observe({ decision: blocked, attempts: 0 }, started, tool);
  }

  function checker(): PermitChecker {
    if (!shared.checker) {
      if (typeof opts.permits !== 'object') throw new TypeError('permits are not configured');
      shared.checker = createPermitChecker(opts.permits);
    }
    return shared.checker;
  }

  const client: Pep = {
    authorizeAction: (tool, args, o) => run('action', { tool, args }, o),
    checkInput: (content, o) => run('input', { content }, o),
    checkContextEgress: (content, o) => run('context_egress', { content }, o),
    checkOutput: (content, o) => run('output', { content }, o),
    checkDelivery: (content, o) => run('delivery', { content }, o),

    guardTool<R>(
      name: string,
      execute: (args: Record<string, unknown>, ctx: ToolExecutionContext) => R | Promise<R>,
    ): GuardedTool<R> {
      if (typeof name !== 'string') throw new TypeError('guardTool: name must be a string');
      normalizeToolName(name);
      if (typeof execute !== 'function') throw new TypeError('guardTool: execute must be a function');
      if (opts.permits === undefined) {
        throw new TypeError(
          'guardTool: configure `permits` (or pass `permits: false` explicitly to skip verification)',
        );
      }
      const verifier = opts.permits === false ? undefined : checker();
      return async (args, callOpts) => {
        // One read of the args: a failed snapshot is answered invalid_request without a network call.
        const snapshot = takeSnapshot(args);
        const started = performance.now();
        const decision = await run('action', { tool: name, args }, callOpts, snapshot);
        if (decision.verdict === 'ESCALATE') throw new PolicyEscalatedError(decision, name);
        if (decision.verdict === 'BLOCK' || !snapshot.ok) throw new PolicyBlockedError(decision, name);
        if (decision.simulated) {
          throw new PolicyBlockedError(refuseLocally(decision, 'simulated', SIMULATED, started, name), name);
        }
        const effective = decision.transformedArgs ?? snapshot.args;
        const signal = readSignal(callOpts);
        if (verifier) {
          try {
            const check = verifier.check(decision.permitId as string, {
              tool: name,
              args: effective,
              subject: opts.agentId,
              session: callSession(callOpts, session),
            });
            await (signal ? untilAborted(check, signal) : check);
          } catch (cause) {
            if (cause === CALLER_ABORTED) {
              throw new PolicyBlockedError(
                refuseLocally(decision, 'aborted', ABORT_MESSAGES.caller, started, name),
                name,
              );
            }
            const code = (cause as { code?: unknown }).code;
            const message = `permit failed verification (${String(code ?? 'error')})`;
            throw new PolicyBlockedError(refuseLocally(decision, 'permit_invalid', message, started, name), name, {
              cause,
            });
          }
        }
        if (signal?.aborted) {
          throw new PolicyBlockedError(refuseLocally(decision, 'aborted', ABORT_MESSAGES.caller, started, name), name);
        }
        return execute(effective, { permitId: decision.permitId, decision, signal });
      };
    },

    async guardText(stage, content, o) {
      if (!isTextStage(stage))
        throw new TypeError('guardText: stage must be input, context_egress, output or delivery');
      const started = performance.now();
      const decision = await run(stage, { content }, o);
      if (decision.verdict === 'ESCALATE') throw new PolicyEscalatedError(decision);
      if (decision.verdict === 'BLOCK') throw new PolicyBlockedError(decision);
      if (decision.simulated) throw new PolicyBlockedError(refuseLocally(decision, 'simulated', SIMULATED, started));
      return decision.verdict === 'WARN' ? (decision.transformedContent as string) : content;
    },

    withSession(id) {
      if (typeof id !== 'string' || id.trim() === '' || !id.isWellFormed()) {
        throw new TypeError('withSession: expected a non-empty session id');
      }
      return bindClient(shared, id);
    },

    async close() {
      shared.closed = true;
      for (const stop of [...shared.inflight]) stop('closed');
      await shared.transport.close();
    },
  };
  return client;
}

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

/** The caller's signal (already validated by the decision: an invalid one is an invalid_request BLOCK). */
function readSignal(callOpts: unknown): AbortSignal | undefined {
  try {
    const s = (callOpts as CallOptions | undefined)?.signal;
    return isAbortSignal(s) ? s : undefined;
  } catch {
    return undefined;
  }
}

function callSession(callOpts: unknown, fallback: string): string {
  const s = (callOpts as CallOptions | undefined)?.session;
  return typeof s === 'string' ? s : fallback;
}
