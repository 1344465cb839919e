/**
 * One stage call, decided and observed: the step up to the network (`step.ts`), the request sent to
 * where it goes (the agent-pep path, or the AuthZEN evaluation endpoint, fixed or discovered), inside
 * the decision's span, and the outcome given to telemetry and the observer. Resolves, never rejects.
 * @internal
 */
import { type PolicyDecision, type Stage, synthesizeBlock } from '../decision.js';
import { randomUUID } from '../internal/runtime.js';
import type { DecisionSpan } from '../telemetry.js';
import type { EndpointSource } from './discovery.js';
import { blockOutcome, decideThen, type Outcome } from './exchange.js';
import { observe } from './observe.js';
import type { CallContext, Payload, Prepared, Snapshot } from './request.js';
import type { Shared } from './shared.js';
import { type Bound, prepareStep } from './step.js';

/**
 * One prepared call over the network (one evaluation over AuthZEN): calls `done` once with the outcome,
 * maybe before it returns, maybe from inside the transport's handler; `done` must not throw.
 */
export function sendThen(
  shared: Shared,
  p: Prepared,
  deadlineAt: number,
  span: DecisionSpan | undefined,
  done: (o: Outcome) => void,
): void {
  const headers = { ...shared.headers, 'x-request-id': p.sent.requestId };
  const advances = !p.sent.simulated && p.call.purpose === undefined;
  const step = shared.steps.stepFor(p.req.session, advances);
  if (step !== undefined) p.req.sessionStep = step;
  if (advances) {
    const then = done;
    done = (o) => {
      // decided by the PDP (not made up by this PEP): the session counts one more step
      if (o.decision.synthesized === undefined) shared.steps.advance(p.req.session);
      then(o);
    };
  }
  if (shared.endpoints) {
    sendDiscovered(shared, shared.endpoints, p, headers, deadlineAt, span).then(done, () =>
      done(blockOutcome(p.sent, 'invalid_request', 'internal error')),
    );
  } else {
    sendTo(shared, shared.opts.path, p, headers, deadlineAt, span, done);
  }
}

/** One prepared call to `path`, inside the decision's span when there is one. */
function sendTo(
  shared: Shared,
  path: string,
  p: Prepared,
  headers: Record<string, string>,
  deadlineAt: number,
  span: DecisionSpan | undefined,
  done: (o: Outcome) => void,
): void {
  if (!span) {
    decideThen(shared.ctx, p, headers, deadlineAt, path, done);
    return;
  }
  span.inject(headers);
  span.run(() => decideThen(shared.ctx, p, headers, deadlineAt, path, done));
}

/** AuthZEN: the evaluation endpoint (fixed, or from the discovery document), then the call. */
async function sendDiscovered(
  shared: Shared,
  endpoints: EndpointSource,
  p: Prepared,
  headers: Record<string, string>,
  deadlineAt: number,
  span: DecisionSpan | undefined,
): Promise<Outcome> {
  const e = await endpoints(deadlineAt, p.call.signal);
  if (!e.ok) return blockOutcome(p.sent, e.code, e.message, e.attempts, e.status);
  return new Promise<Outcome>((resolve) => sendTo(shared, e.value.evaluation, p, headers, deadlineAt, span, resolve));
}

/**
 * One observed decision, with the args that were sent (what a permit binds). Args and call options are
 * read once: a snapshot `guardTool` already took, and call options the enforcement layer already read
 * (`call`), are used as they are. Resolves, never rejects.
 */
export function runStep(
  b: Bound,
  stage: Stage,
  payload: Payload,
  rawOpts: unknown,
  snapshot?: Snapshot,
  call?: CallContext,
): Promise<Outcome> {
  return observedStep(b, stage, payload, rawOpts, snapshot, (o) => o, call);
}

/** {@link runStep}'s decision alone: what a stage method answers. Resolves, never rejects. */
export function runDecision(b: Bound, stage: Stage, payload: Payload, rawOpts: unknown): Promise<PolicyDecision> {
  return observedStep(b, stage, payload, rawOpts, undefined, (o) => o.decision);
}

/**
 * One observed decision, as `pick` gives it. The step, the exchange and the answer's checks hand their
 * results on by callback (a promise hop costs about half a microsecond of client CPU at 64 decisions
 * in flight, BENCHMARKS.md). Telemetry and the `onDecision` observer run in a promise reaction, so in
 * the caller's async context and never inside the transport's handler; a client with neither (no
 * code of the caller's runs) resolves its one promise with the decision at once.
 */
function observedStep<T>(
  b: Bound,
  stage: Stage,
  payload: Payload,
  rawOpts: unknown,
  snapshot: Snapshot | undefined,
  pick: (o: Outcome) => T,
  call?: CallContext,
): Promise<T> {
  const { shared } = b;
  const started = performance.now();
  const { telemetry } = shared;
  const observer = shared.opts.onDecision;
  if (!telemetry && !observer) {
    return new Promise<T>((resolve) =>
      reachOutcome(b, stage, payload, rawOpts, snapshot, started, undefined, (o) => resolve(pick(o)), call),
    );
  }
  const span = telemetry ? telemetry.start() : undefined;
  const reached = new Promise<Outcome>((resolve) =>
    reachOutcome(b, stage, payload, rawOpts, snapshot, started, span, resolve, call),
  );
  return reached.then((outcome) => {
    const tool = 'tool' in payload && typeof payload.tool === 'string' ? payload.tool : undefined;
    if (telemetry && span)
      telemetry.end(span, outcome.decision, outcome.attempts, (performance.now() - started) / 1000);
    observe(observer, outcome, started, tool);
    return pick(outcome);
  });
}

/**
 * The outcome of one call, handed to `reached` once: decided before the network (an invalid call, an
 * interceptor's answer) or by the exchange. Never throws: a bug is a synthesized BLOCK.
 */
function reachOutcome(
  b: Bound,
  stage: Stage,
  payload: Payload,
  rawOpts: unknown,
  snapshot: Snapshot | undefined,
  started: number,
  span: DecisionSpan | undefined,
  reached: (o: Outcome) => void,
  call?: CallContext,
): void {
  const { shared } = b;
  let settled = false;
  const done = (o: Outcome): void => {
    if (settled) return;
    settled = true;
    reached(o);
  };
  try {
    const deadlineAt = started + shared.opts.timeoutMs;
    const step = prepareStep(b, stage, payload, rawOpts, snapshot, deadlineAt, span, call);
    if (step instanceof Promise) {
      step.then(
        (s) => (s.kind === 'decided' ? done(s.outcome) : sendThen(shared, s.p, deadlineAt, span, done)),
        () => done(internalError(stage)),
      );
    } else if (step.kind === 'decided') {
      done(step.outcome);
    } else {
      sendThen(shared, step.p, deadlineAt, span, done);
    }
  } catch {
    // Unreachable by design; a bug must still fail closed.
    done(internalError(stage));
  }
}

/** The outcome of a bug: a synthesized BLOCK. */
function internalError(stage: Stage): Outcome {
  return { decision: synthesizeBlock(stage, randomUUID(), 'invalid_request', 'internal error', 0), attempts: 0 };
}
