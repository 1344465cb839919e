/**
 * Session conditions evaluated against a session's state (docs/dev-pdp.md). Label conditions are set
 * lookups; every `seen` and `count` of every latch is answered in one pass over the history, so a
 * decision's cost is linear in the history's size whatever the number of conditions.
 * @packageDocumentation
 */
import type { CompiledFlow, CompiledFlowSource, CompiledSessionCondition, CompiledStepFilter } from './conditions.js';
import type { HistoryStep, SessionView, ValueSource } from './state.js';

/** True when every label condition holds (has, hasAny, lacks); history conditions are left out. @internal */
export function labelConditionsHold(conditions: readonly CompiledSessionCondition[], view: SessionView): boolean {
  for (const c of conditions) {
    if (c.kind === 'has' && !view.labels.has(c.label)) return false;
    if (c.kind === 'lacks' && view.labels.has(c.label)) return false;
    if (c.kind === 'hasAny' && !c.labels.some((label) => view.labels.has(label))) return false;
  }
  return true;
}

/** True when a latch has a `seen` or `count` condition. @internal */
export function needsHistory(conditions: readonly CompiledSessionCondition[]): boolean {
  return conditions.some((c) => c.kind === 'seen' || c.kind === 'count');
}

function stepMatches(filter: CompiledStepFilter, step: HistoryStep, age: number): boolean {
  if (filter.within !== undefined && age > filter.within) return false;
  if (filter.stages !== undefined && !filter.stages.has(step.stage)) return false;
  if (filter.verdicts !== undefined && !filter.verdicts.has(step.verdict)) return false;
  if (filter.tool !== undefined && (step.tool === undefined || !filter.tool.test(step.tool))) return false;
  if (filter.latches !== undefined) {
    const wanted = filter.latches;
    if (!step.latches.some((id) => wanted.has(id))) return false;
  }
  return true;
}

/**
 * Decides the history conditions of several latches with one pass over the history: each step is
 * read once and tried against every filter.
 * @param latches - for each latch still in the running, its session conditions
 * @returns for each latch, in the same order, whether every `seen` and `count` holds
 * @internal
 */
export function historyConditionsHold(
  latches: readonly (readonly CompiledSessionCondition[])[],
  history: readonly HistoryStep[],
): boolean[] {
  const filters: CompiledStepFilter[] = [];
  const at = new Map<CompiledStepFilter, number>();
  for (const conditions of latches) {
    for (const c of conditions) {
      if ((c.kind === 'seen' || c.kind === 'count') && !at.has(c.filter)) {
        at.set(c.filter, filters.length);
        filters.push(c.filter);
      }
    }
  }
  const counts = new Array<number>(filters.length).fill(0);
  if (filters.length > 0) {
    const n = history.length;
    for (let i = 0; i < n; i++) {
      const step = history[i] as HistoryStep;
      const age = n - i;
      for (let f = 0; f < filters.length; f++) {
        if (stepMatches(filters[f] as CompiledStepFilter, step, age)) counts[f] = (counts[f] as number) + 1;
      }
    }
  }
  return latches.map((conditions) =>
    conditions.every((c) => {
      if (c.kind === 'seen') return (counts[at.get(c.filter) as number] as number) >= 1;
      if (c.kind === 'count') return (counts[at.get(c.filter) as number] as number) >= c.gte;
      return true;
    }),
  );
}

/** A value in the call's args that the session saw, with where it was seen. @internal */
export interface FlowHit {
  readonly kind: string;
  readonly sources: readonly ValueSource[];
}

/** What the section 15 conditions read about one call, worked out once per decision. @internal */
export interface CallFacts {
  /** The ids of the live grants the call is inside (empty off the action stage). */
  readonly grants: readonly string[];
  /** The values at a path of args (all args when absent) that the session saw; memoized by the caller. */
  flowsAt(path: readonly string[] | undefined): readonly FlowHit[];
  /** The called tool's origin (action stage). */
  readonly origin?: string;
}

/** No call: inside no grant, nothing flows. @internal */
export const NO_CALL_FACTS: CallFacts = Object.freeze({ grants: Object.freeze([]), flowsAt: () => [] });

function sourceMatches(source: CompiledFlowSource, s: ValueSource): boolean {
  if ('user' in source) return s.tool === 'user';
  if ('untrusted' in source) return s.tool !== 'user';
  return s.groups.includes(source.group);
}

function flowHolds(flow: CompiledFlow, facts: CallFacts): boolean {
  return facts
    .flowsAt(flow.into)
    .some(
      (hit) =>
        (flow.kind === undefined || hit.kind === flow.kind) &&
        hit.sources.some((s) => sourceMatches(flow.from, s)) &&
        (flow.notFrom === undefined || !hit.sources.some((s) => sourceMatches(flow.notFrom as CompiledFlowSource, s))),
    );
}

/** True when some value flowing into the args came from a tool and never from the called tool's origin. */
function otherOrigin(facts: CallFacts): boolean {
  return facts.flowsAt(undefined).some((hit) => {
    const tools = hit.sources.filter((s) => s.tool !== 'user');
    return tools.length > 0 && !tools.some((s) => s.origin === facts.origin);
  });
}

/** True when every `granted`, `flows` and `sameOrigin` condition holds for the call. @internal */
export function callConditionsHold(conditions: readonly CompiledSessionCondition[], facts: CallFacts): boolean {
  for (const c of conditions) {
    if (c.kind === 'granted' && c.value !== facts.grants.length > 0) return false;
    if (c.kind === 'flows' && !flowHolds(c.flow, facts)) return false;
    if (c.kind === 'sameOrigin' && c.value === otherOrigin(facts)) return false;
  }
  return true;
}
