/**
 * THE enforcement layer (docs/adapters.md): every guard helper and adapter decides through it, so that
 * a rule holds the same everywhere. It returns results, never throws: an action is verified (run these
 * args with this verified permit), substituted, or refused; a text passes or is refused. The simulated
 * rule, the args-that-run rule (`transformedArgs ?? snapshot`), the text that continues
 * (`transformedContent ?? original`), the `after` chain, the result check, refusal texts and the
 * observer and telemetry call for every refusal of its own live here once.
 * @internal
 */
import type { ClientInternals } from '../core/client.js';
import { ABORT_CAUSES } from '../core/exchange.js';
import { runAfter } from '../core/interceptors.js';
import { afterPdp, modelRequestJson, readModelRequest, runModelRequestChain } from '../core/model-request.js';
import { type CallContext, checkToolName, InvalidRequest, takeSnapshot } from '../core/request.js';
import {
  type FailClosedCode,
  type PolicyDecision,
  type SandboxRoute,
  type Stage,
  synthesizeBlock,
  type TextStage,
} from '../decision.js';
import { PermitVerificationError } from '../errors.js';
import type { EgressCallOptions } from '../options/pep.js';
import type { PermitExpectation } from '../permit/verifier.js';
import {
  type ActionResult,
  type FinishResult,
  type ModelResult,
  type RefusalSite,
  type Refused,
  refusedBy,
  type TextResult,
  type Verified,
} from './results.js';
import { actionRule, type Rule, SIMULATED_MESSAGE, textRule } from './rules.js';
import { resultText } from './text.js';

/**
 * What the kernel needs from the client that made it: the core client's internals (one decision with
 * the args sent after the interceptors, the observer path for the kernel's own refusals, the permit
 * checker and the `after` chain).
 */
export type KernelDeps = ClientInternals;

/** How a tool's result is checked at context_egress: not at all, as the model reads it, or through a function. */
export type ResultCheck = boolean | ((result: never) => string);

/** The enforcement layer of one client. Nothing here rejects. */
export interface Kernel {
  /**
   * Decides an action and, on ALLOW or WARN, verifies its permit against the args that will run.
   * `runsSandboxes`: the caller runs a routed action's sandbox runner (`guardTool`); a caller whose host
   * runs the tool itself (a hook, `canUseTool`) leaves it false, and a routed action is refused.
   */
  decideAction(name: string, args: unknown, opts?: unknown, runsSandboxes?: boolean): Promise<ActionResult>;
  /**
   * After the tool ran: the `after` interceptors, then the result check. `ran` is the verified action,
   * or (a host that runs the tool itself, such as a PostToolUse hook) the session and args it ran with.
   */
  finishAction(name: string, ran: Ran, result: unknown, check?: ResultCheck): Promise<FinishResult>;
  /**
   * Decides a model request's settings (docs/interceptors.md, "Model requests"): the `modelRequest`
   * interceptors, then the PDP (`context_egress`, `purpose: 'model_request'`). Never rejects.
   */
  decideModelRequest(request: unknown, opts?: unknown): Promise<ModelResult>;
  /** Whether the client has `modelRequest` interceptors (the adapters then check every model request by default). */
  readonly hasModelRequestInterceptors: boolean;
  /** Decides a text at a stage; `opts` may carry `tool` at context_egress. */
  decideText(stage: TextStage, text: string, opts?: unknown): Promise<TextResult>;
  /** A refusal the adapter makes itself (the step never reached a decision): observed like any synthesized BLOCK. */
  refuse(site: RefusalSite, code: FailClosedCode, message: string, cause?: unknown): Refused;
  /** Whether `guardTool` may be made (a client without `permits` throws TypeError). */
  requirePermits(scope: string): void;
}

/** What ran: a verified action, or the session and args a host ran a tool with. */
export type Ran = Pick<Verified, 'args' | 'session' | 'signal'> & { decision?: PolicyDecision | undefined };

/**
 * The call's options, read once for the whole decision (the session by `sessionOf`: the call's, else the
 * client's), or the observed refusal of a bad one (`invalid_request`, naming the problem, no network call).
 */
function readCall(deps: KernelDeps, stage: Stage, callOpts: unknown, tool: string | undefined): CallContext | Refused {
  try {
    return deps.readCall(stage, callOpts);
  } catch (cause) {
    const message = cause instanceof InvalidRequest ? cause.message : 'the call options could not be read';
    return refuse(deps, { stage, tool } as RefusalSite, 'invalid_request', message, cause);
  }
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

/** The text the result check sends: `check`'s own text, else the result as a model reads it. */
function checkedText(result: unknown, check: true | ((result: never) => string)): string {
  if (typeof check === 'function') {
    const text = check(result as never);
    if (typeof text !== 'string') throw new TypeError('checkResult must return a string');
    return text;
  }
  return resultText(result);
}

/** The action a refusal after a host's own run is about (no decision of ours preceded it). */
function placeholder(): PolicyDecision {
  return { verdict: 'ALLOW', stage: 'action', requestId: crypto.randomUUID() };
}

/** A BLOCK the kernel makes from a decision it refuses to enforce; observers see it after the PDP's. */
function refuseFrom(
  deps: KernelDeps,
  decision: PolicyDecision,
  code: FailClosedCode,
  message: string,
  started: number,
  tool: string | undefined,
  extra: { interceptor?: string; cause?: unknown } = {},
): Refused {
  const blocked = synthesizeBlock(decision.stage, decision.requestId, code, message, 0);
  if (decision.decisionId !== undefined) blocked.decisionId = decision.decisionId;
  if (decision.latches !== undefined) blocked.latches = decision.latches;
  if (decision.simulated) blocked.simulated = true;
  if (extra.interceptor !== undefined) blocked.interceptor = extra.interceptor;
  return refusedBy(deps.observe({ decision: blocked, attempts: 0 }, started, tool), tool, extra.cause);
}

/** The value a decision lets go on, or the refusal (observed when the kernel makes it). */
function enforced<T>(
  deps: KernelDeps,
  rule: Rule<T>,
  decision: PolicyDecision,
  started: number,
  tool: string | undefined,
): T | Refused {
  if (rule.kind === 'refuse') return refusedBy(decision, tool);
  if (rule.kind === 'simulated') return refuseFrom(deps, decision, 'simulated', SIMULATED_MESSAGE, started, tool);
  return rule.value;
}
function isRefused(v: unknown): v is Refused {
  return typeof v === 'object' && (v as Refused | null)?.kind === 'refused';
}

async function verifyPermit(
  deps: KernelDeps,
  name: string,
  v: Verified,
  bound: unknown,
  started: number,
): Promise<Refused | undefined> {
  if (deps.permits !== 'on') return undefined;
  try {
    const permit = v.decision.permitId as string;
    const expected: PermitExpectation = { tool: name, args: v.args, subject: deps.agentId, session: v.session };
    // What rule 5 decoded and hashed, when it was this permit and these very args (the checker
    // compares both again); the signature and every claim are still checked.
    const b = bound as PermitExpectation['bound'];
    if (b !== undefined && b.permit === permit && b.args === v.args) expected.bound = b;
    const check = deps.checker().check(permit, expected);
    await (v.signal ? untilAborted(check, v.signal) : check);
    return undefined;
  } catch (cause) {
    if (cause === CALLER_ABORTED)
      return refuseFrom(deps, v.decision, 'aborted', ABORT_CAUSES.caller.message, started, name);
    const code = (cause as { code?: unknown } | null)?.code;
    // Which check failed and what was expected (the verifier's message never holds the permit).
    const message =
      cause instanceof PermitVerificationError
        ? cause.message
        : `permit failed verification (${String(code ?? 'error')})`;
    return refuseFrom(deps, v.decision, 'permit_invalid', message, started, name, { cause });
  }
}

/**
 * A routed action's sandbox (docs/interceptors.md, "Routes to a sandbox"), or its refusal: a host that
 * runs the tool itself cannot run it elsewhere, and a name not in `createPep({ sandboxes })` has no runner.
 */
function sandboxOf(
  deps: KernelDeps,
  name: string,
  decision: PolicyDecision,
  runsSandboxes: boolean,
  started: number,
): NonNullable<Verified['sandbox']> | Refused {
  const route = decision.route as SandboxRoute;
  const shown = JSON.stringify(route.to.slice(0, 40));
  if (!runsSandboxes) {
    const message = `routed to sandbox ${shown}, which this host cannot run (it runs the tool itself)`;
    return refuseFrom(deps, decision, 'ambiguous_decision', message, started, name);
  }
  const runner = deps.sandboxes.get(route.to);
  if (runner === undefined) {
    const message = `routed to sandbox ${shown}, which is not registered in createPep({ sandboxes })`;
    return refuseFrom(deps, decision, 'ambiguous_decision', message, started, name);
  }
  return { route, runner };
}

async function decideAction(
  deps: KernelDeps,
  name: string,
  args: unknown,
  callOpts?: unknown,
  runsSandboxes = false,
): Promise<ActionResult> {
  const started = performance.now();
  try {
    // One read of the args: a failed snapshot is answered invalid_request without a network call.
    const snapshot = takeSnapshot(args);
    const call = readCall(deps, 'action', callOpts, name);
    if (isRefused(call)) return call;
    const { decision, args: sentArgs, bound } = await deps.run('action', { tool: name, args }, call, snapshot);
    // An interceptor's substitute: its result, without running the tool or asking the PDP (docs/interceptors.md).
    if (decision.substitute !== undefined && decision.interceptor !== undefined) {
      return { kind: 'substituted', result: decision.substitute.result, decision };
    }
    if (sentArgs === undefined && decision.verdict !== 'BLOCK' && decision.verdict !== 'ESCALATE') {
      return refusedBy(decision, name);
    }
    // The args that run, and that the permit binds: transformedArgs, else what was sent.
    const effective = enforced(deps, actionRule(decision, sentArgs ?? {}), decision, started, name);
    if (isRefused(effective)) return effective;
    const { signal, session } = call;
    const verified: Verified = {
      kind: 'verified',
      args: effective,
      permitId: decision.permitId,
      decision,
      session,
      signal,
    };
    if (decision.route !== undefined) {
      const sandbox = sandboxOf(deps, name, decision, runsSandboxes, started);
      if (isRefused(sandbox)) return sandbox;
      verified.sandbox = sandbox;
    }
    const failed = await verifyPermit(deps, name, verified, bound, started);
    if (failed) return failed;
    if (signal?.aborted) return refuseFrom(deps, decision, 'aborted', ABORT_CAUSES.caller.message, started, name);
    return verified;
  } catch (cause) {
    return refuse(deps, { stage: 'action', tool: name }, 'invalid_request', 'internal error', cause);
  }
}

async function runAfterChain(deps: KernelDeps, name: string, v: Ran, result: unknown): Promise<FinishResult> {
  if (deps.after.length === 0) return { kind: 'released', result };
  const started = performance.now();
  const out = await runAfter(
    deps.after,
    { stage: 'action', session: v.session, tool: checkToolName(name), args: v.args, content: undefined },
    result,
    { deadlineAt: started + deps.timeoutMs, signal: undefined },
  );
  const ranAfter = v.decision ?? placeholder();
  if (out.kind === 'deny') {
    const denied: PolicyDecision = {
      verdict: 'BLOCK',
      stage: 'action',
      requestId: ranAfter.requestId,
      reason: out.reason,
      interceptor: out.name,
    };
    if (ranAfter.decisionId !== undefined) denied.decisionId = ranAfter.decisionId;
    return refusedBy(deps.observe({ decision: denied, attempts: 0 }, started, name), name);
  }
  if (out.kind === 'failed') {
    const message = `interceptor '${out.name}' ${out.why}`;
    return refuseFrom(deps, ranAfter, 'interceptor_failed', message, started, name, { interceptor: out.name });
  }
  return { kind: 'released', result: out.result };
}

async function finishAction(
  deps: KernelDeps,
  name: string,
  v: Ran,
  result: unknown,
  check: ResultCheck = false,
): Promise<FinishResult> {
  const started = performance.now();
  try {
    const after = await runAfterChain(deps, name, v, result);
    if (after.kind === 'refused' || check === false) return after;
    let text: string;
    try {
      text = checkedText(after.result, check);
    } catch (cause) {
      const message = 'the tool result could not be turned into text to check';
      return refuseFrom(deps, v.decision ?? placeholder(), 'invalid_request', message, started, name, { cause });
    }
    const opts: EgressCallOptions = { session: v.session, tool: name };
    if (v.signal !== undefined) opts.signal = v.signal;
    const checked = await decideTextAs(deps, 'context_egress', text, opts, name);
    if (checked.kind === 'refused') return checked;
    return { kind: 'released', result: checked.text === text ? after.result : checked.text };
  } catch (cause) {
    return refuse(deps, { stage: 'action', tool: name }, 'invalid_request', 'internal error', cause);
  }
}

async function decideTextAs(
  deps: KernelDeps,
  stage: TextStage,
  text: string,
  opts: unknown,
  tool: string | undefined,
): Promise<TextResult> {
  const started = performance.now();
  try {
    const call = readCall(deps, stage, opts, tool);
    if (isRefused(call)) return call;
    const { decision } = await deps.run(stage, { content: text }, call);
    // What continues is exactly what was decided: an interceptor's replacement, or the PDP's WARN text.
    const use = enforced(deps, textRule(decision, text), decision, started, tool);
    return isRefused(use) ? use : { kind: 'passed', text: use, decision };
  } catch (cause) {
    return refuse(deps, { stage, tool }, 'invalid_request', 'internal error', cause);
  }
}

function refuse(deps: KernelDeps, site: RefusalSite, code: FailClosedCode, message: string, cause?: unknown): Refused {
  const started = performance.now();
  const decision = synthesizeBlock(site.stage, crypto.randomUUID(), code, message, 0);
  const tool = site.stage === 'action' ? site.tool : undefined;
  return refusedBy(deps.observe({ decision, attempts: 0 }, started, site.tool), tool, cause);
}

/** The model request chain, then the PDP, then the one capping rule. */
async function decideModelRequest(deps: KernelDeps, raw: unknown, opts: unknown): Promise<ModelResult> {
  const started = performance.now();
  try {
    const request = readModelRequest(raw);
    if (typeof request === 'string') return refuse(deps, { stage: 'context_egress' }, 'invalid_request', request);
    const call = readCall(deps, 'context_egress', opts, undefined);
    if (isRefused(call)) return call;
    const { signal, session } = call;
    const bounds = { deadlineAt: started + deps.timeoutMs, signal };
    const chain = await runModelRequestChain(deps.modelRequest, request, session, bounds);
    const here = synthesizeBlock('context_egress', crypto.randomUUID(), 'aborted', '', 0);
    if (chain.kind === 'aborted')
      return refuseFrom(deps, here, 'aborted', ABORT_CAUSES.caller.message, started, undefined);
    if (chain.kind === 'failed') {
      const message = `interceptor '${chain.name}' ${chain.why}`;
      return refuseFrom(deps, here, 'interceptor_failed', message, started, undefined, { interceptor: chain.name });
    }
    if (chain.kind === 'deny') {
      const denied: PolicyDecision = {
        verdict: 'BLOCK',
        stage: 'context_egress',
        requestId: here.requestId,
        reason: chain.reason,
        interceptor: chain.name,
      };
      return refusedBy(deps.observe({ decision: denied, attempts: 0 }, started, undefined), undefined);
    }
    const json = modelRequestJson(chain.request);
    const { decision } = await deps.run('context_egress', { content: json, purpose: 'model_request' }, call);
    const use = enforced(deps, textRule(decision, json), decision, started, undefined);
    if (isRefused(use)) return use;
    const capped = afterPdp(decision, chain.request, chain.replaced);
    if (!capped.ok) return refuseFrom(deps, decision, 'ambiguous_decision', capped.why, started, undefined);
    const final = modelRequestJson(capped.request);
    // What continues is what was decided: the settings to send, when an interceptor or the PDP changed them.
    if (final !== modelRequestJson(request) || decision.transformedContent !== undefined) {
      decision.transformedContent = final;
    }
    return { kind: 'passed', request: capped.request, decision };
  } catch (cause) {
    return refuse(deps, { stage: 'context_egress' }, 'invalid_request', 'internal error', cause);
  }
}

/**
 * Builds the enforcement layer over one client.
 * @internal
 */
export function makeKernel(deps: KernelDeps): Kernel {
  return {
    decideAction: (name, args, opts, runsSandboxes) => decideAction(deps, name, args, opts, runsSandboxes),
    finishAction: (name, ran, result, check) => finishAction(deps, name, ran, result, check),
    decideText: (stage, text, opts) => decideTextAs(deps, stage, text, opts, undefined),
    decideModelRequest: (request, opts) => decideModelRequest(deps, request, opts),
    hasModelRequestInterceptors: deps.modelRequest.length > 0,
    refuse: (site, code, message, cause) => refuse(deps, site, code, message, cause),
    requirePermits(scope) {
      if (deps.permits === undefined) {
        throw new TypeError(
          `${scope}: configure \`permits\` (or pass \`permits: false\` explicitly to skip verification)`,
        );
      }
    },
  };
}
