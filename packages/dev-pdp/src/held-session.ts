/**
 * What a reviewer sees of a held call's session (docs/dev-pdp.md, "The reviewer console"; contract
 * sections 14 and 15): the session's intent grants when the request was held, each with whether the call
 * is inside it and, when not, why; and the values flowing into the args, by kind and origin (never the
 * value, never its keyed hash). Worked out once, when the escalation opens, from the state the decision
 * read, and kept on the escalation (so every replica shows the same), bounded in size.
 * @packageDocumentation
 */
import { isPlainObject, lookup } from './paths.js';
import type { CompiledPolicy } from './policy.js';
import type { FlowHit } from './sessions/evaluate.js';
import type { CallReading } from './sessions/facts.js';
import { type GrantContext, grantsHolding, isLive } from './sessions/grants.js';
import type { SessionView, StoredConstraint, StoredGrant } from './sessions/state.js';

/**
 * Whether a held call is inside a grant, or the first reason it is not: the grant `expired`, has no
 * uses left (`used_up`), names `other_tool`s, or a constraint's path is absent from the args
 * (`arg_missing`) or holds a value outside it (`arg_outside`).
 */
export type GrantMatch = 'inside' | 'expired' | 'used_up' | 'other_tool' | 'arg_missing' | 'arg_outside';

/** One grant of the session, as a reviewer sees it (strings shortened past {@link HELD_LIMITS}). */
export interface HeldGrant {
  /** The intent rule's id, or the application's grant id. */
  id: string;
  /** Tool patterns or `@group` references. */
  tools: string[];
  /** Dotted paths inside args mapped to one constraint each (captures already in place). */
  args: Record<string, StoredConstraint>;
  /** Uses left; absent: unlimited. */
  uses?: number;
  /** When the grant ends, epoch milliseconds; absent: with the session. */
  expiresAt?: number;
  /** Action stage only: whether the held call is inside the grant, or why not. */
  match?: GrantMatch;
  /** With `arg_missing` or `arg_outside`: the path of the first constraint that does not hold. */
  failedPath?: string;
  /** True when a value, list or path was shortened to stay in bounds. */
  shortened?: true;
}

/** Where a value flowing into the args was seen (a tool's output, or `user` for the user's input). */
export interface HeldSource {
  /** The normalized tool name; `user` for the user's input; `''` when the egress named none. */
  tool: string;
  /** The tool's origin (a group's declared `origin`, else `tool:<name>`). */
  origin: string;
  /** The groups the tool belongs to. */
  groups: string[];
}

/** A value the session saw that the held call's args carry: where, which kind, seen where. */
export interface HeldFlow {
  /** The dotted path inside args of the string that carries it. */
  path: string;
  /** The extractor's name (`email`, `iban`, a policy's `values` name). */
  kind: string;
  /** Where the session saw it, oldest first. */
  sources: HeldSource[];
}

/** The session's grants and flows when the request was held, as stored on the escalation. */
export interface HeldSession {
  /** The grants the call is inside first, then the others newest first; at most `HELD_LIMITS.grants`. */
  grants: HeldGrant[];
  /** Grants of the session left out past the bound. */
  grantsLeftOut?: number;
  /** Values in the args that the session saw; at most `HELD_LIMITS.flows`. */
  flows: HeldFlow[];
  /** The called tool's origin (action stage). */
  origin?: string;
}

/** The bounds of what an escalation keeps of its session (so a record stays a few kilobytes). @internal */
export const HELD_LIMITS = Object.freeze({
  grants: 16,
  constraintsPerGrant: 16,
  toolsPerGrant: 8,
  listItems: 20,
  text: 200,
  /** Characters of the grants' values, paths and tools kept in all (past it, values are cut to `…`); the flows get half as many of their own. */
  chars: 8000,
  /** Characters of a name (tool, path, kind, origin) kept even past the budget. */
  floor: 24,
  flows: 16,
  sourcesPerFlow: 4,
  groupsPerSource: 8,
  /** String leaves of the args looked at for flows. */
  leaves: 64,
  depth: 8,
  /** Nodes of the args visited looking for them. */
  nodes: 1024,
});

/** What shortening marks (`shortened`) and the characters left for every string kept (shared by all). */
interface Cut {
  shortened?: true;
  readonly budget: { left: number };
}

/**
 * Shortens `text` to the text bound and to the characters left in the budget, but never below `floor`
 * characters (names a reviewer needs: a grant id, a tool, a path), marking `cut` when it did.
 */
function short(text: string, cut: Cut, floor = 0): string {
  const room = Math.min(HELD_LIMITS.text, Math.max(floor, cut.budget.left));
  cut.budget.left -= Math.min(text.length, room);
  if (text.length <= room) return text;
  cut.shortened = true;
  return `${text.slice(0, room)}…`;
}

function shownConstraint(c: StoredConstraint, cut: Cut): StoredConstraint {
  const value = (v: string | number | boolean | null) => {
    if (typeof v === 'string') return short(v, cut);
    cut.budget.left -= String(v).length;
    return v;
  };
  if ('eq' in c) return { eq: value(c.eq) };
  if ('matches' in c) return { matches: short(c.matches, cut) };
  if ('in' in c) {
    const kept: (string | number | boolean | null)[] = [];
    for (const v of c.in.slice(0, HELD_LIMITS.listItems)) {
      if (cut.budget.left <= 0) break;
      kept.push(value(v));
    }
    if (kept.length < c.in.length) cut.shortened = true;
    return { in: kept };
  }
  return { ...c };
}

/** Whether the call is inside `grant`, or the first reason it is not (a constraint at a time, in order). */
function matchOf(
  grant: StoredGrant,
  tool: string,
  args: Record<string, unknown>,
  ctx: GrantContext,
  now: number,
): Pick<HeldGrant, 'match' | 'failedPath'> {
  if (grant.uses !== undefined && grant.uses <= 0) return { match: 'used_up' };
  if (!isLive(grant, now)) return { match: 'expired' };
  const alone = (constraints: StoredGrant['args']) =>
    grantsHolding([{ ...grant, args: constraints }], tool, args, ctx, now).length === 1;
  if (!alone({})) return { match: 'other_tool' };
  for (const [path, c] of Object.entries(grant.args)) {
    if (alone({ [path]: c })) continue;
    return { match: lookup(args, path.split('.')).found ? 'arg_outside' : 'arg_missing', failedPath: path };
  }
  return { match: 'inside' };
}

function heldGrant(
  grant: StoredGrant,
  match: Pick<HeldGrant, 'match' | 'failedPath'> | undefined,
  budget: Cut['budget'],
): HeldGrant {
  const cut: Cut = { budget };
  const entries = Object.entries(grant.args);
  if (entries.length > HELD_LIMITS.constraintsPerGrant || grant.tools.length > HELD_LIMITS.toolsPerGrant) {
    cut.shortened = true;
  }
  const held: HeldGrant = {
    id: short(grant.id, cut, HELD_LIMITS.text),
    tools: grant.tools.slice(0, HELD_LIMITS.toolsPerGrant).map((t) => short(t, cut, HELD_LIMITS.floor)),
    args: {},
  };
  if (match?.failedPath !== undefined) held.failedPath = short(match.failedPath, cut, HELD_LIMITS.floor);
  for (const [path, c] of entries.slice(0, HELD_LIMITS.constraintsPerGrant)) {
    if (budget.left <= 0) {
      cut.shortened = true;
      break;
    }
    // defined, not assigned: a path such as "__proto__" stays a plain key
    Object.defineProperty(held.args, short(path, cut, HELD_LIMITS.floor), {
      value: shownConstraint(c, cut),
      enumerable: true,
    });
  }
  if (grant.uses !== undefined) held.uses = grant.uses;
  if (grant.expiresAt !== undefined) held.expiresAt = grant.expiresAt;
  if (match?.match !== undefined) held.match = match.match;
  if (cut.shortened) held.shortened = true;
  return held;
}

/** The paths of the string leaves of `args`, breadth first, bounded in number, depth and nodes visited. */
function stringLeaves(args: Record<string, unknown>): string[][] {
  const out: string[][] = [];
  const queue: { value: unknown; path: string[] }[] = [{ value: args, path: [] }];
  for (let at = 0; at < queue.length && at < HELD_LIMITS.nodes && out.length < HELD_LIMITS.leaves; at++) {
    const { value, path } = queue[at] as { value: unknown; path: string[] };
    if (typeof value === 'string') {
      if (path.length > 0) out.push(path);
      continue;
    }
    if (path.length >= HELD_LIMITS.depth) continue;
    const children = Array.isArray(value)
      ? value.slice(0, HELD_LIMITS.nodes).map((item, i) => [String(i), item] as const)
      : isPlainObject(value)
        ? Object.entries(value)
        : [];
    for (const [key, child] of children) {
      if (queue.length >= HELD_LIMITS.nodes) break;
      queue.push({ value: child, path: [...path, key] });
    }
  }
  return out;
}

function heldFlows(call: CallReading, args: Record<string, unknown>): HeldFlow[] {
  const flows: HeldFlow[] = [];
  const budget = { left: HELD_LIMITS.chars / 2 };
  const name = (text: string, cut: Cut) => short(text, cut, HELD_LIMITS.floor);
  for (const path of stringLeaves(args)) {
    for (const hit of call.facts.flowsAt(path) as FlowHit[]) {
      if (flows.length >= HELD_LIMITS.flows) return flows;
      const cut: Cut = { budget };
      flows.push({
        path: name(path.join('.'), cut),
        kind: name(hit.kind, cut),
        sources: hit.sources.slice(-HELD_LIMITS.sourcesPerFlow).map((s) => ({
          tool: name(s.tool, cut),
          origin: name(s.origin, cut),
          groups: s.groups.slice(0, HELD_LIMITS.groupsPerSource).map((g) => name(g, cut)),
        })),
      });
    }
  }
  return flows;
}

/**
 * The session as a reviewer sees it when a request is held: its grants (for an action, each with
 * whether the call is inside it or why not) and the values in the args it saw, with their origin.
 * @param call - the decision's reading of the call (the grants it is inside, what flows into it)
 * @param secret - the key of the session's word hashes (for `fromUser`)
 * @param now - epoch milliseconds, the decision's
 * @internal
 */
export function heldSession(
  policy: CompiledPolicy,
  step: { stage: string; tool?: string | undefined; args?: Record<string, unknown> | undefined },
  view: SessionView,
  call: CallReading,
  secret: Uint8Array,
  now: number,
): HeldSession {
  const all = view.facts.grants;
  const isCall = step.stage === 'action' && step.tool !== undefined;
  const args = step.args ?? {};
  const ctx: GrantContext = { groups: policy.toolGroups ?? new Map(), words: new Set(view.facts.words), key: secret };
  const inside = new Set(call.inside);
  const budget = { left: HELD_LIMITS.chars };
  const order = [...all.keys()].sort((a, b) => Number(inside.has(b)) - Number(inside.has(a)) || b - a);
  const grants = order.slice(0, HELD_LIMITS.grants).map((i) => {
    const grant = all[i] as StoredGrant;
    const match = !isCall
      ? undefined
      : inside.has(i)
        ? { match: 'inside' as const }
        : matchOf(grant, step.tool as string, args, ctx, now);
    return heldGrant(grant, match, budget);
  });
  const held: HeldSession = { grants, flows: isCall ? heldFlows(call, args) : [] };
  if (all.length > grants.length) held.grantsLeftOut = all.length - grants.length;
  if (isCall && call.facts.origin !== undefined)
    held.origin = short(call.facts.origin, { budget: { left: 0 } }, HELD_LIMITS.text);
  return held;
}
