/**
 * What a session remembers (docs/dev-pdp.md): labels that only grow, and the decided steps, oldest
 * first, at most `maxHistory` of them.
 * @packageDocumentation
 */
import type { Stage, Verdict } from 'agent-pep/internal';

/** One decided step of a session. */
export interface HistoryStep {
  readonly stage: Stage;
  /** The normalized tool name, for a stage that names one (action; context_egress when given). */
  readonly tool?: string;
  /** The verdict the PDP answered. */
  readonly verdict: Verdict;
  /** The latches that engaged, in policy order. */
  readonly latches: readonly string[];
}

/** The state a decision reads: as it was before the step. */
export interface SessionView {
  readonly labels: ReadonlySet<string>;
  /** Oldest first. */
  readonly history: readonly HistoryStep[];
}

/** A session with nothing in it: no labels, no history. @internal */
export const EMPTY_SESSION: SessionView = Object.freeze({
  labels: Object.freeze(new Set<string>()) as ReadonlySet<string>,
  history: Object.freeze([]) as readonly HistoryStep[],
});

/** What one non-simulated decision changes: the labels it adds and the step it appends. @internal */
export interface SessionUpdate {
  /** Labels to add (possibly already there). */
  readonly labels: readonly string[];
  readonly step: HistoryStep;
}

/** The labels after an update, sorted (code-unit order). @internal */
export function labelsAfter(view: SessionView, added: readonly string[]): string[] {
  const all = new Set(view.labels);
  for (const label of added) all.add(label);
  return [...all].sort();
}
