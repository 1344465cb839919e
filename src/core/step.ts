/**
 * One stage call up to the network: the call options read once, the request built, and the stage's
 * `before` interceptors run (docs/interceptors.md). Never throws, never rejects: a call that cannot
 * become a request, or that an interceptor decided, is already an outcome.
 * @internal
 */
import type { PolicyDecision, Stage } from '../decision.js';
import { deepFreeze } from '../internal/json.js';
import { randomUUID } from '../internal/runtime.js';
import type { DecisionSpan } from '../telemetry.js';
import { ABORT_CAUSES, blockOutcome, type Outcome } from './exchange.js';
import { type BeforeOutcome, runBefore } from './interceptors.js';
import {
  type CallContext,
  InvalidRequest,
  type Payload,
  type Prepared,
  prepare,
  readCallOptions,
  replaceRunningValue,
  type Snapshot,
} from './request.js';
import type { Shared } from './shared.js';

/** A client bound to one session: what every step of its calls reads. */
export interface Bound {
  readonly shared: Shared;
  readonly session: string;
}

/** A call ready for the network, or already decided (locally, or because it is not valid input). */
export type PreparedStep = { kind: 'decided'; outcome: Outcome } | { kind: 'ready'; p: Prepared };

/** The call options of one call, read once (a batch reads them once for all its calls). @throws InvalidRequest */
export function callOptions(b: Bound, rawOpts: unknown, stage: Stage): CallContext {
  return readCallOptions(rawOpts, stage, { session: b.session, simulated: b.shared.opts.simulated });
}

/**
 * A call up to the network: call options, request, the `before` chain. Without interceptors for the
 * stage it answers at once (no promise on the hot path).
 * @param call - the call options already read, when they were
 */
export function prepareStep(
  b: Bound,
  stage: Stage,
  payload: Payload,
  rawOpts: unknown,
  snapshot: Snapshot | undefined,
  deadlineAt: number,
  span?: DecisionSpan,
  call?: CallContext,
): PreparedStep | Promise<PreparedStep> {
  const requestId = randomUUID();
  let p: Prepared;
  try {
    let c = call ?? callOptions(b, rawOpts, stage);
    // A model request's settings (docs/interceptors.md): its own chain already ran; text interceptors do not.
    if ('purpose' in payload && payload.purpose === 'model_request') c = { ...c, purpose: 'model_request' };
    p = prepare(stage, payload, c, b.shared.opts.agentId, requestId, snapshot);
  } catch (err) {
    const message = err instanceof InvalidRequest ? err.message : 'the call could not be turned into a request';
    return { kind: 'decided', outcome: blockOutcome({ stage, requestId }, 'invalid_request', message) };
  }
  if (span) span.tool = p.sent.tool;
  // A visibility request asks about the tool alone: interceptors judge calls, so they do not run on it.
  return b.shared.chains[stage].before.length > 0 && p.call.purpose === undefined
    ? beforeChain(b, p, deadlineAt)
    : { kind: 'ready', p };
}

/**
 * The stage's `before` interceptors on a prepared call (docs/interceptors.md). Answers at once when every
 * interceptor did (no promise on the path of synchronous pass-through interceptors); else resolves,
 * never rejects.
 */
function beforeChain(b: Bound, p: Prepared, deadlineAt: number): PreparedStep | Promise<PreparedStep> {
  if (p.call.signal?.aborted) {
    return { kind: 'decided', outcome: blockOutcome(p.sent, 'aborted', ABORT_CAUSES.caller.message) };
  }
  let r: BeforeOutcome | Promise<BeforeOutcome>;
  try {
    const { sent } = p;
    // The client's own snapshot is frozen in place for the interceptors (no copy, docs/interceptors.md);
    // a guard helper's snapshot goes on to its tool, so they see a frozen copy of it.
    const argsFrozen = p.ownArgs === true;
    if (argsFrozen) deepFreeze(sent.args);
    r = runBefore(
      b.shared.chains[sent.stage].before,
      {
        stage: sent.stage,
        session: p.call.session,
        tool: sent.tool,
        args: sent.args,
        content: p.req.content,
        argsFrozen,
      },
      { deadlineAt, signal: p.call.signal },
    );
  } catch {
    // Unreachable by design (an interceptor's throw is an outcome); a bug fails closed for this call only.
    return { kind: 'decided', outcome: blockOutcome(p.sent, 'invalid_request', 'internal error') };
  }
  return r instanceof Promise ? r.then((settled) => afterBefore(p, settled)) : afterBefore(p, r);
}

/** What a `before` chain's outcome makes of the call: ready (maybe with a replaced value), or decided. */
function afterBefore(p: Prepared, r: BeforeOutcome): PreparedStep {
  switch (r.kind) {
    case 'proceed':
      if (r.route !== undefined) p.route = r.route;
      if (r.replaced) {
        try {
          replaceRunningValue(p, r);
        } catch (err) {
          const message = err instanceof InvalidRequest ? err.message : 'an interceptor replacement is not valid';
          return decided(blockOutcome(p.sent, 'invalid_request', message));
        }
      }
      return { kind: 'ready', p };
    case 'deny':
    case 'substitute':
      return decided({ decision: localBlock(p, r), attempts: 0 });
    case 'aborted':
      return decided(blockOutcome(p.sent, 'aborted', ABORT_CAUSES.caller.message));
    default: {
      const why = r.kind === 'timeout' ? 'was still pending at the deadline' : r.why;
      const o = blockOutcome(p.sent, 'interceptor_failed', `interceptor '${r.name}' ${why}`);
      o.decision.interceptor = r.name;
      return decided(o);
    }
  }
}

function decided(outcome: Outcome): PreparedStep {
  return { kind: 'decided', outcome };
}

/** An interceptor's `deny` or `substitute`: a BLOCK it decided (a policy decision, not a failure). */
function localBlock(p: Prepared, r: Extract<BeforeOutcome, { kind: 'deny' | 'substitute' }>): PolicyDecision {
  const { stage, requestId } = p.sent;
  const decision: PolicyDecision = {
    verdict: 'BLOCK',
    stage,
    requestId,
    reason: r.kind === 'deny' ? r.reason : `answered by interceptor '${r.name}'`,
    interceptor: r.name,
  };
  if (r.kind === 'substitute') decision.substitute = { result: r.result };
  if (p.sent.simulated) decision.simulated = true;
  return decision;
}
