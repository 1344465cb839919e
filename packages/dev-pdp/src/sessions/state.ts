/**
 * What a session remembers (docs/dev-pdp.md): labels that only grow, the decided steps (oldest first,
 * at most `maxHistory` of them), and what section 15 of the contract adds: the live intent grants, the
 * user's own words and the values seen (both as keyed hashes, never plaintext), and the count of
 * decided steps that tells a known session from one the store lost.
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

/** A grant constraint as kept in a session: every `"$name"` already replaced by its capture. */
export type StoredConstraint =
  | { readonly eq: string | number | boolean | null }
  | { readonly in: readonly (string | number | boolean | null)[] }
  | { readonly lte: number }
  | { readonly gte: number }
  | { readonly lt: number }
  | { readonly gt: number }
  | { readonly matches: string }
  | { readonly fromUser: true };

/** One live grant of a session (docs/dev-pdp.md, "Intent grants"). */
export interface StoredGrant {
  /** The intent rule's id, or the application's grant id. */
  readonly id: string;
  /** Tool patterns or `@group` references; the call's tool must match one. */
  readonly tools: readonly string[];
  /** Dotted paths inside args mapped to one constraint each; all must hold. */
  readonly args: Readonly<Record<string, StoredConstraint>>;
  /** Uses left; absent: unlimited. */
  readonly uses?: number;
  /** Epoch milliseconds after which the grant is gone; absent: lives with the session. */
  readonly expiresAt?: number;
}

/** Where a value was seen: the user's input, or a tool's output (with the tool's groups and origin). */
export interface ValueSource {
  /** `'user'` for input text; else the normalized tool name (`''` when the egress named none). */
  readonly tool: string;
  /** The groups the tool belongs to (names, without `@`). */
  readonly groups: readonly string[];
  /** The tool's origin: a group's declared `origin`, else the tool name itself. */
  readonly origin: string;
}

/** One value a session saw, as a keyed hash, with where it was seen. */
export interface StoredValue {
  /** base64url HMAC-SHA-256 (first 16 bytes) of the value's kind and extracted form, under the PDP's secret. */
  readonly hash: string;
  /** The extractor's name (`email`, `iban`, a policy's `values` name...). */
  readonly kind: string;
  /** Where it was seen, each source once, oldest first. */
  readonly sources: readonly ValueSource[];
}

/** Section 15 state, kept beside labels and history and replaced whole by each commit. */
export interface SessionFacts {
  readonly grants: readonly StoredGrant[];
  /** Keyed hashes of the runs of the user's own words (for `fromUser`). */
  readonly words: readonly string[];
  readonly values: readonly StoredValue[];
}

/** The state a decision reads: as it was before the step. */
export interface SessionView {
  readonly labels: ReadonlySet<string>;
  /** Oldest first. */
  readonly history: readonly HistoryStep[];
  /** Non-simulated steps committed so far (0: a session the store does not know). */
  readonly steps: number;
  /** True when the store knows it lost this session's data (the Redis epoch changed since it began). */
  readonly lost?: boolean;
  readonly facts: SessionFacts;
}

/** No grants, no words, no values. @internal */
export const EMPTY_FACTS: SessionFacts = Object.freeze({
  grants: Object.freeze([]) as readonly StoredGrant[],
  words: Object.freeze([]) as readonly string[],
  values: Object.freeze([]) as readonly StoredValue[],
});

/** A session with nothing in it: no labels, no history. @internal */
export const EMPTY_SESSION: SessionView = Object.freeze({
  labels: Object.freeze(new Set<string>()) as ReadonlySet<string>,
  history: Object.freeze([]) as readonly HistoryStep[],
  steps: 0,
  facts: EMPTY_FACTS,
});

/** What one non-simulated decision changes: the labels it adds, the step it appends, the facts after it. @internal */
export interface SessionUpdate {
  /** Labels to add (possibly already there). */
  readonly labels: readonly string[];
  readonly step: HistoryStep;
  /** The session's grants, words and values after the step (replacing the old ones); absent: unchanged. */
  readonly facts?: SessionFacts;
}

/** The labels after an update, sorted (code-unit order). @internal */
export function labelsAfter(view: SessionView, added: readonly string[]): string[] {
  const all = new Set(view.labels);
  for (const label of added) all.add(label);
  return [...all].sort();
}
