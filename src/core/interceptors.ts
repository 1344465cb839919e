/**
 * The local interceptor chain (docs/interceptors.md): cheap in-process rules that run before the PDP
 * is asked (`before`) and after a guarded tool ran (`after`). Monotonic: a local rule can deny,
 * substitute or replace the running value, never lift a PDP BLOCK or ESCALATE. Learned from the
 * typed-decision chains of Agents.KT (`onBefore*`), ai4j interceptors and the dsh seams.
 * @packageDocumentation
 */
import type { SandboxRoute, Stage } from '../decision.js';
import { ABORTED, LATE, race } from '../internal/deadline.js';
import { isRecord } from '../internal/guards.js';
import { deepFreeze, snapshotJsonObject } from '../internal/json.js';
import { isThenable } from '../internal/thenable.js';
import type { AfterResult, BeforeResult, CompiledInterceptor, Interceptor, Step } from '../options/interceptors.js';
import { type Snapshot, takeSnapshot } from './request.js';

export { validateInterceptors } from '../options/interceptors.js';
export type { AfterResult, BeforeResult, CompiledInterceptor, Interceptor, Step };

/** The chain split per stage, so a stage with no interceptor pays nothing. @internal */
export type Chains = Readonly<Record<Stage, { before: CompiledInterceptor[]; after: CompiledInterceptor[] }>>;

/** Splits the chain per stage (registration order kept). @internal */
export function chainsByStage(list: readonly CompiledInterceptor[]): Chains {
  const make = (stage: Stage) => ({
    before: list.filter((i) => i.before && (i.stages === undefined || i.stages.has(stage))),
    after: stage === 'action' ? list.filter((i) => i.after && (i.stages === undefined || i.stages.has(stage))) : [],
  });
  return Object.freeze({
    input: make('input'),
    context_egress: make('context_egress'),
    output: make('output'),
    delivery: make('delivery'),
    action: make('action'),
  });
}

/** How a `before` chain ended. @internal */
export type BeforeOutcome =
  /**
   * `args`: the replacement, read once when the interceptor answered (the frozen snapshot the later
   * interceptors saw, or why it could not be read); never the interceptor's own object.
   */
  | { kind: 'proceed'; args?: Snapshot; content?: unknown; replaced: boolean; route?: SandboxRoute }
  | { kind: 'deny'; name: string; reason: string }
  | { kind: 'substitute'; name: string; result: unknown }
  | { kind: 'failed'; name: string; why: string }
  | { kind: 'aborted' }
  | { kind: 'timeout'; name: string };

/** The running value the chain starts from. @internal */
export interface RunningValue {
  stage: Stage;
  session: string;
  tool: string | undefined;
  args: Record<string, unknown> | undefined;
  content: string | undefined;
  /**
   * True when `args` is already deeply frozen and held by no caller (the client's own snapshot): the
   * interceptors see it as it is, not a frozen copy.
   */
  argsFrozen?: boolean;
}

/** A settle-once race of the chain against the deadline and the caller's signal. */
interface Bounds {
  /** `performance.now()` value of the decision's deadline. */
  deadlineAt: number;
  signal: AbortSignal | undefined;
}

const PENDING = Symbol('pending');

/**
 * Waits for `value` (a promise or not) until the deadline or the caller's abort.
 * @returns the value, or {@link PENDING} when the deadline fired, or `'aborted'`
 */
async function bounded<T>(value: T | Promise<T>, bounds: Bounds): Promise<T | typeof PENDING | 'aborted'> {
  if (!isThenable(value)) return value;
  const r = await race(value, bounds.deadlineAt, bounds.signal);
  return r === LATE ? PENDING : r === ABORTED ? 'aborted' : r;
}

/**
 * The step an interceptor sees: a frozen copy of `v`, whose args are `frozenArgs` when given (a
 * replacement already snapshotted and frozen), else a deeply frozen snapshot of `v.args`.
 */
function frozenStep(v: RunningValue, frozenArgs?: Record<string, unknown>): Step {
  const step: { -readonly [K in keyof Step]: Step[K] } = { stage: v.stage, session: v.session };
  if (v.tool !== undefined) step.tool = v.tool;
  if (v.args !== undefined) {
    step.args = frozenArgs ?? (v.argsFrozen === true ? v.args : deepFreeze(snapshotJsonObject(v.args)));
  }
  if (v.content !== undefined) step.content = v.content;
  return Object.freeze(step);
}

/**
 * `Object.keys(o).length` (own enumerable string keys) without building the array: the check of every
 * interceptor answer on the decision path.
 */
function ownKeyCount(o: object): number {
  let n = 0;
  for (const key in o) if (Object.hasOwn(o, key)) n++;
  return n;
}

const isObject = isRecord;

/** Where a `before` chain stands: the running value, whether it was replaced, what the next interceptor sees. */
interface ChainState {
  readonly running: RunningValue;
  replaced: boolean;
  step: Step;
  /** The first `route` answer's sandbox, which every later one must repeat. */
  route?: SandboxRoute;
}

/**
 * Runs the `before` chain in registration order. The first `deny` or `substitute` ends it; a throw, a
 * rejection, a malformed answer, `substitute` on a text stage, or an interceptor still pending at the
 * deadline ends it as `failed`/`timeout`. A `proceedWith` value is returned unvalidated (the request
 * builder refuses one that is not valid input: `invalid_request`).
 *
 * Answers that are not promises are judged at once: a chain whose interceptors all answer so returns
 * its outcome without a promise (each `await` of a pass-through interceptor was a measurable share of a
 * decision, BENCHMARKS.md); the first promise hands the rest of the chain to an async loop, bounded by
 * the deadline and the caller's signal. An interceptor's throw or rejection is an outcome (`failed`),
 * never an exception; the promise never rejects.
 * @param start - the running value the chain starts from; the chain takes it over (a `proceedWith`
 *   replaces its `args` or `content` in place), so pass an object made for this call
 * @throws only when `start.args` cannot be cloned (never for a request's snapshot)
 * @internal
 */
export function runBefore(
  chain: readonly CompiledInterceptor[],
  start: RunningValue,
  bounds: Bounds,
): BeforeOutcome | Promise<BeforeOutcome> {
  const state: ChainState = { running: start, replaced: false, step: frozenStep(start) };
  for (let i = 0; i < chain.length; i++) {
    const it = chain[i] as CompiledInterceptor;
    let answer: unknown;
    try {
      answer = (it.before as NonNullable<Interceptor['before']>)(state.step);
    } catch {
      return { kind: 'failed', name: it.name, why: 'threw or rejected' };
    }
    let thenable: boolean;
    try {
      thenable = isThenable(answer);
    } catch {
      return { kind: 'failed', name: it.name, why: 'threw or rejected' };
    }
    if (thenable) return runBeforeAsync(chain, i, answer, state, bounds);
    const end = judgeBefore(it, answer, state, bounds);
    if (end !== undefined) return end;
  }
  return proceedOutcome(state);
}

/** The rest of a `before` chain from `chain[i]`, whose answer is the promise `pending`. */
async function runBeforeAsync(
  chain: readonly CompiledInterceptor[],
  i: number,
  pending: unknown,
  state: ChainState,
  bounds: Bounds,
): Promise<BeforeOutcome> {
  let answer = pending;
  for (;;) {
    const it = chain[i] as CompiledInterceptor;
    try {
      answer = await bounded(answer, bounds);
    } catch {
      return { kind: 'failed', name: it.name, why: 'threw or rejected' };
    }
    if (answer === PENDING) return { kind: 'timeout', name: it.name };
    const end = judgeBefore(it, answer, state, bounds);
    if (end !== undefined) return end;
    i++;
    if (i >= chain.length) return proceedOutcome(state);
    const next = chain[i] as CompiledInterceptor;
    try {
      answer = (next.before as NonNullable<Interceptor['before']>)(state.step);
    } catch {
      return { kind: 'failed', name: next.name, why: 'threw or rejected' };
    }
  }
}

/** The outcome of a chain that changed nothing: one object, never changed by its readers. */
const PROCEED: BeforeOutcome = Object.freeze({ kind: 'proceed', replaced: false });

function proceedOutcome(state: ChainState): BeforeOutcome {
  const { running, replaced, route } = state;
  if (!replaced) return route === undefined ? PROCEED : { kind: 'proceed', replaced, route };
  const out: BeforeOutcome =
    running.stage === 'action'
      ? { kind: 'proceed', args: { ok: true, args: running.args as Record<string, unknown> }, replaced }
      : { kind: 'proceed', content: running.content, replaced };
  if (route !== undefined) out.route = route;
  return out;
}

/** Longest sandbox name or profile an interceptor (or a PDP) may route to. */
export const MAX_ROUTE_NAME = 128;

/** A `route` answer's sandbox, or why it is malformed. */
export function readRoute(value: { to?: unknown; profile?: unknown }): SandboxRoute | string {
  const { to, profile } = value;
  if (typeof to !== 'string' || to === '' || to.length > MAX_ROUTE_NAME || !to.isWellFormed()) {
    return 'a route without a sandbox name';
  }
  if (profile === undefined) return { to };
  if (typeof profile !== 'string' || profile.length > MAX_ROUTE_NAME || !profile.isWellFormed()) {
    return 'a route with a profile that is not a short string';
  }
  return { to, profile };
}

/** A `route` answer: recorded (the chain goes on), or how the chain ends. */
function judgeRoute(
  it: CompiledInterceptor,
  answer: Record<string, unknown>,
  state: ChainState,
): BeforeOutcome | undefined {
  if (state.running.stage !== 'action') return { kind: 'failed', name: it.name, why: 'route on a text stage' };
  for (const key of Object.keys(answer)) {
    if (key !== 'action' && key !== 'to' && key !== 'profile') {
      return { kind: 'failed', name: it.name, why: 'a malformed route' };
    }
  }
  const route = readRoute(answer);
  if (typeof route === 'string') return { kind: 'failed', name: it.name, why: route };
  const first = state.route;
  if (first !== undefined && (first.to !== route.to || first.profile !== route.profile)) {
    return { kind: 'failed', name: it.name, why: 'routed to another sandbox than an earlier interceptor' };
  }
  state.route = route;
  return undefined;
}

/**
 * Judges one interceptor's settled answer: how the chain ends, or undefined to go on (the state then
 * holds any replacement and the step the next interceptor sees).
 */
function judgeBefore(
  it: CompiledInterceptor,
  answer: unknown,
  state: ChainState,
  bounds: Bounds,
): BeforeOutcome | undefined {
  try {
    return judgeAnswer(it, answer, state, bounds);
  } catch {
    // an answer whose members cannot be read (a throwing getter, a Proxy): the interceptor's throw
    return { kind: 'failed', name: it.name, why: 'threw or rejected' };
  }
}

function judgeAnswer(
  it: CompiledInterceptor,
  answer: unknown,
  state: ChainState,
  bounds: Bounds,
): BeforeOutcome | undefined {
  const { running } = state;
  if (answer === 'aborted' && bounds.signal?.aborted) return { kind: 'aborted' };
  if (!isObject(answer)) return { kind: 'failed', name: it.name, why: 'answered something that is not a result' };
  switch (answer.action) {
    case 'proceed':
      if (ownKeyCount(answer) !== 1) return { kind: 'failed', name: it.name, why: 'a malformed proceed' };
      return undefined;
    case 'proceedWith': {
      for (const key of Object.keys(answer)) {
        if (key !== 'action' && key !== 'args' && key !== 'content') {
          return { kind: 'failed', name: it.name, why: 'a malformed proceedWith' };
        }
      }
      const hasArgs = Object.hasOwn(answer, 'args');
      const hasContent = Object.hasOwn(answer, 'content');
      if (running.stage === 'action' ? hasContent || !hasArgs : hasArgs || !hasContent) {
        return { kind: 'failed', name: it.name, why: 'a proceedWith without the running value of its stage' };
      }
      state.replaced = true;
      // The replacement is read once, here: what the later interceptors see is what the PDP is asked
      // about and what a permit binds (docs/interceptors.md). A value that is not valid input ends the chain; the
      // request builder names it (invalid_request), from this one reading.
      if (hasArgs) {
        const taken = takeSnapshot(answer.args);
        if (!taken.ok) return { kind: 'proceed', args: taken, replaced: true };
        const frozen = deepFreeze(taken.args);
        running.args = frozen;
        state.step = frozenStep(running, frozen);
        return undefined;
      }
      const content = answer.content;
      running.content = content as string;
      if (typeof content !== 'string' || !content.isWellFormed()) return { kind: 'proceed', content, replaced: true };
      state.step = frozenStep(running);
      return undefined;
    }
    case 'deny': {
      const reason = answer.reason; // read once: what was checked is what the decision says
      if (typeof reason !== 'string' || Object.keys(answer).length !== 2) {
        return { kind: 'failed', name: it.name, why: 'a deny without a string reason' };
      }
      return { kind: 'deny', name: it.name, reason };
    }
    case 'route':
      return judgeRoute(it, answer, state);
    case 'substitute':
      if (running.stage !== 'action') return { kind: 'failed', name: it.name, why: 'substitute on a text stage' };
      if (!Object.hasOwn(answer, 'result') || Object.keys(answer).length !== 2) {
        return { kind: 'failed', name: it.name, why: 'a malformed substitute' };
      }
      return { kind: 'substitute', name: it.name, result: answer.result };
    default:
      return { kind: 'failed', name: it.name, why: 'an unknown action' };
  }
}

/** How an `after` chain ended. @internal */
export type AfterOutcome =
  | { kind: 'proceed'; result: unknown }
  | { kind: 'deny'; name: string; reason: string }
  | { kind: 'failed'; name: string; why: string };

/**
 * Runs the `after` chain over a tool's result in registration order: `proceedWith` replaces the
 * result, `deny` withholds it; a throw, a rejection, a malformed answer or one still pending at the
 * deadline withholds it too (`failed`).
 * @internal
 */
export async function runAfter(
  chain: readonly CompiledInterceptor[],
  start: RunningValue,
  result: unknown,
  bounds: Bounds,
): Promise<AfterOutcome> {
  const step = frozenStep(start);
  let running = result;
  for (const it of chain) {
    let answer: unknown;
    try {
      answer = await bounded((it.after as NonNullable<Interceptor['after']>)(step, running), bounds);
    } catch {
      return { kind: 'failed', name: it.name, why: 'threw or rejected' };
    }
    if (answer === PENDING || answer === 'aborted')
      return { kind: 'failed', name: it.name, why: 'did not answer in time' };
    if (!isObject(answer)) return { kind: 'failed', name: it.name, why: 'answered something that is not a result' };
    switch (answer.action) {
      case 'proceed':
        if (Object.keys(answer).length !== 1) return { kind: 'failed', name: it.name, why: 'a malformed proceed' };
        break;
      case 'proceedWith':
        if (!Object.hasOwn(answer, 'result') || Object.keys(answer).length !== 2) {
          return { kind: 'failed', name: it.name, why: 'a malformed proceedWith' };
        }
        running = answer.result;
        break;
      case 'deny': {
        const reason = answer.reason; // read once: what was checked is what the error says
        if (typeof reason !== 'string' || Object.keys(answer).length !== 2) {
          return { kind: 'failed', name: it.name, why: 'a deny without a string reason' };
        }
        return { kind: 'deny', name: it.name, reason };
      }
      default:
        return { kind: 'failed', name: it.name, why: 'an unknown action' };
    }
  }
  return { kind: 'proceed', result: running };
}
