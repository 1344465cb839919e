/**
 * `authorizeActions`: several action calls, one observed decision per call, in order, within one
 * deadline. Over AuthZEN they go in `evaluations` requests none of which holds two calls to one tool
 * (docs/authzen.md); over the agent-pep protocol, each as a request of its own; all concurrent.
 * @internal
 */

import { type PolicyDecision, synthesizeBlock } from '../decision.js';
import { AttemptFailure } from '../internal/failure.js';
import { randomUUID } from '../internal/runtime.js';
import { sessionOf } from '../internal/session.js';
import { DEFAULTS } from '../options/defaults.js';
import type { HttpResponse } from '../transport/types.js';
import { encodeEvaluations, type MappedAnswer, parseEvaluations } from '../wire/authzen.js';
import { sendThen } from './decide.js';
import { toDecision } from './enforceable.js';
import {
  blockOutcome,
  type DecisionContext,
  type Exchanged,
  exchangeThen,
  failedOutcome,
  type Outcome,
  withSent,
} from './exchange.js';
import { observe } from './observe.js';
import type { CallContext, Payload, Prepared } from './request.js';
import type { Shared } from './shared.js';
import { type Bound, callOptions, type PreparedStep, prepareStep } from './step.js';
import type { VisibilityCallContext } from './visibility.js';

/**
 * Sends several action calls as one AuthZEN `evaluations` request (its own `x-request-id` in
 * `headers`, `batchId`) and decides each call on its own (docs/authzen.md): an item that fails
 * any rule is BLOCK while the others stand; a failed exchange, an answer whose count differs, or a
 * response `x-request-id` other than `batchId` is BLOCK for every call; an item whose `requestId` echo
 * names another call is BLOCK for both. The caller never puts two calls that look alike (the same
 * tool) in one batch. Calls `done` once with one outcome per call, in order, maybe before this returns, maybe
 * from inside the transport's handler ({@link exchangeThen}); `done` must not throw.
 */
export function decideBatchThen(
  ctx: DecisionContext,
  calls: readonly Prepared[],
  signal: AbortSignal | undefined,
  headers: Record<string, string>,
  batchId: string,
  deadlineAt: number,
  path: string,
  done: (outcomes: Outcome[]) => void,
): void {
  const read = (res: HttpResponse) => {
    const echo = res.headers['x-request-id'];
    if (echo !== undefined && echo !== batchId) {
      throw new AttemptFailure('ambiguous_decision', 'PDP decision is ambiguous: x-request-id differs');
    }
    return { answers: parseEvaluations(res.body, calls.length), echoed: echo !== undefined };
  };
  exchangeThen(ctx, signal, { path, headers, body: () => encodeEvaluations(calls) }, deadlineAt, read, (r) => {
    let outcomes: Outcome[];
    try {
      outcomes = batchOutcomes(ctx, calls, r);
    } catch {
      // Unreachable by design; a bug must still fail closed, for every call of the batch.
      outcomes = calls.map((p) => withSent(p, blockOutcome(p.sent, 'invalid_request', 'internal error')));
    }
    done(outcomes);
  });
}

/** What an `evaluations` exchange came to, one outcome per call, in order (see {@link decideBatchThen}). */
function batchOutcomes(
  ctx: DecisionContext,
  calls: readonly Prepared[],
  r: Exchanged<{ answers: (MappedAnswer | AttemptFailure)[]; echoed: boolean }>,
): Outcome[] {
  if (!r.ok) return calls.map((p) => withSent(p, failedOutcome(p.sent, r)));
  const { answers, echoed } = r.value;
  const { attempts } = r;
  // An answer whose requestId echo names another call could belong to either: BLOCK for both.
  let untied: Set<number> | undefined;
  for (let i = 0; i < answers.length; i++) {
    const a = answers[i];
    const named = a === undefined || a instanceof AttemptFailure ? undefined : a.response.requestId;
    if (named === undefined || named === calls[i]?.sent.requestId) continue;
    untied ??= new Set();
    untied.add(i);
    const other = calls.findIndex((p) => p.sent.requestId === named);
    if (other >= 0) untied.add(other);
  }
  return calls.map((p, i) => withSent(p, decideItem(p, i)));

  function decideItem(p: Prepared, i: number): Outcome {
    const a = answers[i] as MappedAnswer | AttemptFailure;
    if (untied?.has(i)) {
      return blockOutcome(
        p.sent,
        'ambiguous_decision',
        'PDP decision is ambiguous: an answer names another call',
        attempts,
      );
    }
    if (a instanceof AttemptFailure) return blockOutcome(p.sent, a.code, a.message, attempts);
    try {
      const decision = toDecision(a.response, a.raw, p.sent, echoed ? p.sent.requestId : undefined, ctx.enforce);
      return { decision, attempts };
    } catch (err) {
      const f =
        err instanceof AttemptFailure ? err : new AttemptFailure('ambiguous_decision', 'PDP decision is ambiguous');
      return blockOutcome(p.sent, f.code, f.message, attempts);
    }
  }
}

/**
 * Groups calls into rounds: `rounds[n]` holds the indexes of each tool's (n+1)th call, in order, so
 * that no `evaluations` request holds two calls to one tool (a PDP may answer items that look alike as
 * one; Cerbos 0.55 does).
 */
export function roundsByTool(ps: readonly Prepared[]): number[][] {
  const rounds: number[][] = [];
  const seen = new Map<string, number>();
  for (let i = 0; i < ps.length; i++) {
    const tool = (ps[i] as Prepared).sent.tool as string;
    const n = seen.get(tool) ?? 0;
    seen.set(tool, n + 1);
    const round = rounds[n];
    if (round) round.push(i);
    else rounds[n] = [i];
  }
  return rounds;
}

/** Cuts each round into `evaluations` requests of at most `max` calls; a lone call goes on its own. */
export function batchesOf(rounds: readonly number[][], max: number): number[][] {
  const out: number[][] = [];
  for (const round of rounds) {
    for (let at = 0; at < round.length; at += max) {
      const chunk = round.length <= max ? round : round.slice(at, at + max);
      if (chunk.length >= 2) out.push(chunk);
    }
  }
  return out;
}

/**
 * Several prepared action calls: over AuthZEN, in `evaluations` requests (see {@link roundsByTool}),
 * at most `DEFAULTS.maxEvaluations` calls a request; a request of one call is a single evaluation.
 * Over the agent-pep protocol, each as a request of its own. All concurrent, within `deadlineAt`.
 */
async function sendAll(
  shared: Shared,
  ps: readonly Prepared[],
  signal: AbortSignal | undefined,
  deadlineAt: number,
): Promise<Outcome[]> {
  let chunks: number[][] = [];
  let batchPath = '';
  if (shared.endpoints && ps.length > 1) {
    const e = await shared.endpoints(deadlineAt, signal);
    if (!e.ok) return ps.map((p) => blockOutcome(p.sent, e.code, e.message, e.attempts, e.status));
    if (e.value.evaluations !== undefined) {
      batchPath = e.value.evaluations;
      chunks = batchesOf(roundsByTool(ps), DEFAULTS.maxEvaluations);
    }
  }
  return new Promise<Outcome[]>((resolve) => sendEach(shared, ps, signal, deadlineAt, chunks, batchPath, resolve));
}

/**
 * Sets the `sessionStep` of each call of one `evaluations` request: the PDP decides its items in order,
 * so the k-th non-simulated call of a session carries the count so far plus k.
 * @returns for each call, whether its decision advances the count
 */
function numberSteps(shared: Shared, calls: readonly Prepared[]): boolean[] {
  const next = new Map<string, number>();
  return calls.map((p) => {
    const session = p.req.session;
    const advances = !p.sent.simulated;
    const so = next.get(session) ?? shared.steps.stepFor(session, false) ?? 0;
    const step = advances ? so + 1 : so;
    next.set(session, step);
    if (step >= 1) p.req.sessionStep = step;
    return advances;
  });
}

/**
 * Sends the `chunks` (indexes into `ps`) as `evaluations` requests to `batchPath` and every other call
 * on its own, all at once; calls `done` once, when every call is decided, with one outcome per call
 * in order. No promise per request: each hands its outcomes on by callback (`decideBatchThen`,
 * `sendThen`, which never fail), and a count says when the last one came.
 */
function sendEach(
  shared: Shared,
  ps: readonly Prepared[],
  signal: AbortSignal | undefined,
  deadlineAt: number,
  chunks: readonly number[][],
  batchPath: string,
  done: (outcomes: Outcome[]) => void,
): void {
  const decided: (Outcome | undefined)[] = new Array(ps.length);
  const batched = new Uint8Array(ps.length);
  for (const chunk of chunks) for (const i of chunk) batched[i] = 1;
  let left = chunks.length;
  for (let i = 0; i < ps.length; i++) if (batched[i] === 0) left++;
  if (left === 0) {
    done([]);
    return;
  }
  const oneMore = (): void => {
    if (--left > 0) return;
    done(
      ps.map(
        (p, i) =>
          decided[i] ??
          // Unreachable by design (a batch decides each of its calls); a bug must still fail closed.
          blockOutcome(p.sent, 'invalid_request', 'internal error: a batch left a call undecided'),
      ),
    );
  };
  for (const chunk of chunks) {
    const calls = chunk.map((i) => ps[i] as Prepared);
    const batchId = randomUUID();
    const headers: Record<string, string> = { ...shared.headers, 'x-request-id': batchId };
    shared.telemetry?.injectActive(headers);
    const advancing = numberSteps(shared, calls);
    decideBatchThen(shared.ctx, calls, signal, headers, batchId, deadlineAt, batchPath, (all) => {
      for (let k = 0; k < chunk.length; k++) {
        const o = all[k];
        decided[chunk[k] as number] = o;
        if (advancing[k] && o !== undefined && o.decision.synthesized === undefined) {
          shared.steps.advance((calls[k] as Prepared).req.session);
        }
      }
      oneMore();
    });
  }
  // The single calls go out now, beside the batches.
  for (let i = 0; i < ps.length; i++) {
    if (batched[i] === 1) continue;
    sendThen(shared, ps[i] as Prepared, deadlineAt, undefined, (o) => {
      decided[i] = o;
      oneMore();
    });
  }
}

/** Each call of `authorizeActions` up to the network, with the call options read once for all. */
function prepareAll(
  b: Bound,
  list: readonly unknown[],
  rawOpts: unknown,
  deadlineAt: number,
  visibility?: VisibilityCallContext,
) {
  // The same options for every call: read once (when they are bad, each call reads them and is
  // invalid_request with the reason).
  let call: CallContext | undefined;
  try {
    // A visibility batch (docs/visibility.md): simulated, tagged, with its own checked options.
    call = visibility
      ? {
          ...visibility,
          session: sessionOf({ call: visibility.session, client: b.session }) as string,
          simulated: true,
          tool: undefined,
        }
      : callOptions(b, rawOpts, 'action');
  } catch {
    call = undefined;
  }
  const steps: (PreparedStep | Promise<PreparedStep>)[] = new Array(list.length);
  const tools: (string | undefined)[] = new Array(list.length);
  let waiting = false;
  for (let i = 0; i < list.length; i++) {
    let payload: Payload;
    try {
      const c = list[i] as { tool?: unknown; args?: unknown } | null | undefined;
      payload = { tool: c?.tool, args: c?.args };
    } catch {
      payload = { tool: undefined, args: undefined };
    }
    tools[i] = typeof payload.tool === 'string' ? payload.tool : undefined;
    const step = prepareStep(b, 'action', payload, rawOpts, undefined, deadlineAt, undefined, call);
    if (step instanceof Promise) waiting = true;
    steps[i] = step;
  }
  return { steps, tools, waiting };
}

/** The outcome of every call: decided locally, or sent (batched where the wire allows). */
async function outcomesOf(
  b: Bound,
  list: readonly unknown[],
  rawOpts: unknown,
  deadlineAt: number,
  visibility: VisibilityCallContext | undefined,
) {
  const { steps, tools, waiting } = prepareAll(b, list, rawOpts, deadlineAt, visibility);
  const n = list.length;
  const outcomes: Outcome[] = new Array(n);
  try {
    // Only `before` interceptors that answer with a promise make a step wait.
    const settled = waiting ? await Promise.all(steps) : (steps as PreparedStep[]);
    const ready: Prepared[] = [];
    for (const step of settled) if (step.kind === 'ready') ready.push(step.p);
    const sent = ready.length > 0 ? await sendAll(b.shared, ready, ready[0]?.call.signal, deadlineAt) : [];
    let next = 0;
    for (let i = 0; i < n; i++) {
      const step = settled[i] as PreparedStep;
      outcomes[i] = step.kind === 'decided' ? step.outcome : (sent[next++] as Outcome);
    }
  } catch {
    // Unreachable by design; a bug must still fail closed.
    for (let i = 0; i < n; i++) {
      const decision = synthesizeBlock('action', randomUUID(), 'invalid_request', 'internal error', 0);
      outcomes[i] = { decision, attempts: 0 };
    }
  }
  return { outcomes, tools };
}

/** `authorizeActions`: one observed decision per call, in order, within one deadline. */
export async function decideAll(
  b: Bound,
  calls: unknown,
  rawOpts: unknown,
  visibility?: VisibilityCallContext,
): Promise<PolicyDecision[]> {
  const started = performance.now();
  let list: unknown[];
  try {
    list = Array.isArray(calls) ? Array.from(calls as unknown[]) : [];
  } catch {
    list = [];
  }
  const { outcomes, tools } = await outcomesOf(b, list, rawOpts, started + b.shared.opts.timeoutMs, visibility);
  const { telemetry, opts } = b.shared;
  return outcomes.map((o, i) => {
    telemetry?.record(o.decision, o.attempts, started, tools[i]);
    return observe(opts.onDecision, o, started, tools[i]);
  });
}
