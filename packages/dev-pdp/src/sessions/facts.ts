/**
 * The section 15 facts of one decision (docs/dev-pdp.md): what the call is inside and what flows into
 * it, read from the session before the step; and the session's grants, words and values after it.
 * Grants come only from a non-simulated `input` step whose final verdict is ALLOW or WARN; `uses` are
 * spent only by a non-simulated ALLOW or WARN inside the grant.
 * @packageDocumentation
 */
import type { Stage, Verdict } from 'agent-pep/internal';
import { lookup } from '../paths.js';
import type { CompiledPolicy } from '../policy.js';
import type { CallFacts, FlowHit } from './evaluate.js';
import { NO_CALL_FACTS } from './evaluate.js';
import type { ClientGrantSpec } from './grants.js';
import { grantsAfter, grantsHolding, resolveGrant } from './grants.js';
import { grantsFromText } from './intents.js';
import type { SessionFacts, SessionView, StoredGrant, StoredValue } from './state.js';
import { originOf, sourceOf, USER_SOURCE, valuesAfter, valuesIn, valuesInJson } from './values.js';
import { mergeWords, wordRuns } from './words.js';

/** The step, as the facts need it. @internal */
export interface FactStep {
  stage: Stage;
  tool?: string | undefined;
  args?: Record<string, unknown> | undefined;
  content?: string | undefined;
  intent?: ClientGrantSpec[] | undefined;
}

/**
 * The session's words as a set, and its values by hash, made once per state: a commit that changes
 * them makes new arrays (mergeWords, valuesAfter), one that does not keeps the same ones, so a session's
 * action decisions do not rebuild a set of up to 4096 words each (issue 41).
 */
const wordSets = new WeakMap<readonly string[], ReadonlySet<string>>();
const valueMaps = new WeakMap<readonly StoredValue[], ReadonlyMap<string, StoredValue>>();

function wordSetOf(words: readonly string[]): ReadonlySet<string> {
  let set = wordSets.get(words);
  if (set === undefined) {
    set = new Set(words);
    wordSets.set(words, set);
  }
  return set;
}

function valueMapOf(values: readonly StoredValue[]): ReadonlyMap<string, StoredValue> {
  let map = valueMaps.get(values);
  if (map === undefined) {
    map = new Map(values.map((v) => [v.hash, v]));
    valueMaps.set(values, map);
  }
  return map;
}

/** The call's facts, and the indexes of the grants it is inside. @internal */
export interface CallReading {
  facts: CallFacts;
  inside: number[];
}

/**
 * What a call is inside and what flows into it (action stage; any other stage: no call).
 * @param secret - the key of the session's hashes
 * @param now - epoch milliseconds
 * @internal
 */
export function readCall(
  policy: CompiledPolicy,
  step: FactStep,
  view: SessionView,
  secret: Uint8Array,
  now: number,
): CallReading {
  if (step.stage !== 'action' || step.tool === undefined) return { facts: NO_CALL_FACTS, inside: [] };
  const groups = policy.toolGroups ?? new Map();
  const args = step.args ?? {};
  const tool = step.tool;
  const grants = view.facts.grants;
  const inside =
    grants.length === 0
      ? []
      : grantsHolding(grants, tool, args, { groups, words: wordSetOf(view.facts.words), key: secret }, now);
  const stored = valueMapOf(view.facts.values);
  const memo = new Map<string, readonly FlowHit[]>();
  const flowsAt = (path: readonly string[] | undefined): readonly FlowHit[] => {
    if (stored.size === 0 || policy.values === undefined) return [];
    const key = path === undefined ? '' : `.${path.join('.')}`;
    const hit = memo.get(key);
    if (hit !== undefined) return hit;
    const found = path === undefined ? { found: true, value: args } : lookup(args, path);
    const hits = found.found
      ? valuesInJson(policy.values, secret, found.value).flatMap((f) => {
          const v = stored.get(f.hash);
          return v === undefined ? [] : [{ kind: v.kind, sources: v.sources }];
        })
      : [];
    memo.set(key, hits);
    return hits;
  };
  return {
    facts: {
      grants: [...new Set(inside.map((i) => (grants[i] as StoredGrant).id))],
      flowsAt,
      origin: originOf(tool, groups, policy.origins ?? new Map()),
    },
    inside,
  };
}

/** Per policy: whether a grant can ever carry a `fromUser` constraint (see {@link readsWords}). */
const wordReaders = new WeakMap<CompiledPolicy, boolean>();

/**
 * True when some grant can read the user's words: the application's (unless the policy ignores them:
 * `intentsFromClient: false`) or an intent rule's with a `fromUser` constraint. Else nothing ever
 * reads them, and an input step does not work out their keyed hashes (about 900 HMACs for 40 words).
 */
function readsWords(policy: CompiledPolicy): boolean {
  let reads = wordReaders.get(policy);
  if (reads === undefined) {
    reads =
      policy.intentsFromClient !== false ||
      (policy.intents ?? []).some((rule) =>
        Object.values(rule.grant.args ?? {}).some((c) => typeof c === 'object' && c !== null && 'fromUser' in c),
      );
    wordReaders.set(policy, reads);
  }
  return reads;
}

/** Per policy: whether a latch reads the values seen (see {@link readsValues}). */
const valueReaders = new WeakMap<CompiledPolicy, boolean>();

/**
 * True when some latch has a `flows` or `sameOrigin` condition: the only readers of the values a
 * session saw. Else an input or context_egress step does not run the value extractors over its text.
 */
function readsValues(policy: CompiledPolicy): boolean {
  let reads = valueReaders.get(policy);
  if (reads === undefined) {
    reads = policy.latches.some((latch) => latch.session.some((c) => c.kind === 'flows' || c.kind === 'sameOrigin'));
    valueReaders.set(policy, reads);
  }
  return reads;
}

/** The grants a step makes: the intent rules on its text, then the application's (unless the policy ignores them). */
function grantsMade(policy: CompiledPolicy, step: FactStep, now: number): StoredGrant[] {
  const made = grantsFromText(policy.intents ?? [], step.content ?? '', now);
  if (policy.intentsFromClient !== false) {
    for (const spec of step.intent ?? []) {
      const grant = resolveGrant(spec.id, spec, {}, now);
      if (grant !== undefined) made.push(grant);
    }
  }
  return made;
}

/**
 * The session's facts after a non-simulated step, and the ids of the grants it made.
 * @param verdict - the step's final verdict
 * @param inside - the indexes of the grants the call was inside
 * @internal
 */
export function factsAfter(
  policy: CompiledPolicy,
  step: FactStep,
  verdict: Verdict,
  view: SessionView,
  inside: readonly number[],
  secret: Uint8Array,
  now: number,
): { facts: SessionFacts; made: string[] } {
  const passed = verdict === 'ALLOW' || verdict === 'WARN';
  const old = view.facts;
  const fromUser = step.stage === 'input' && passed;
  const made = fromUser ? grantsMade(policy, step, now) : [];
  const spent = step.stage === 'action' && passed ? inside : [];
  let values = old.values;
  const extractors = policy.values;
  if (extractors !== undefined && step.content !== undefined && readsValues(policy)) {
    if (fromUser) values = valuesAfter(values, valuesIn(extractors, secret, step.content), USER_SOURCE);
    if (step.stage === 'context_egress') {
      const source = sourceOf(step.tool, policy.toolGroups ?? new Map(), policy.origins ?? new Map());
      values = valuesAfter(values, valuesIn(extractors, secret, step.content), source);
    }
  }
  return {
    facts: {
      grants: grantsAfter(old.grants, spent, made, now),
      words: fromUser && readsWords(policy) ? mergeWords(old.words, wordRuns(secret, step.content ?? '')) : old.words,
      values,
    },
    made: [...new Set(made.map((g) => g.id))],
  };
}
