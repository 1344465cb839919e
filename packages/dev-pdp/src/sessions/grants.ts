/**
 * Intent grants (docs/dev-pdp.md, "Intent grants"; contract section 15): the grant record and its
 * constraints, the check of an application's grants, and whether a tool call is inside a live grant.
 * A grant only narrows: a latch reads it through the `granted` session condition.
 * @packageDocumentation
 */
import { z } from 'zod';
import { HttpError } from '../http.js';
import { lookup } from '../paths.js';
import { compileLinearRegex } from '../regex.js';
import { type CompiledToolGroups, compileTool, toolSchema, unknownGroup } from '../tool-groups.js';
import type { StoredConstraint, StoredGrant } from './state.js';
import { foldText, occursInWords } from './words.js';

/** A grant constraint, as written: exactly one operator. */
export type GrantConstraintSpec =
  | { eq: string | number | boolean | null }
  | { in: (string | number | boolean | null)[] }
  | { lte: number | string }
  | { gte: number | string }
  | { lt: number | string }
  | { gt: number | string }
  | { matches: string }
  | { fromUser: true };

/** The grant an intent rule makes, or the body of an application's grant (docs/dev-pdp.md). */
export interface GrantSpec {
  /** A tool pattern, `@group`, or a list of them: the call's tool must match one. */
  tools: string | string[];
  /** Dotted paths inside the call's args (`amount`, `to.iban`) mapped to one constraint each; all must hold. */
  args?: Record<string, GrantConstraintSpec>;
  /** How many non-simulated ALLOW or WARN calls inside the grant it lasts; absent: unlimited. */
  uses?: number;
  /** Seconds the grant lives after the step that made it; absent: as long as the session. */
  expiresInSec?: number;
}

/** An application's grant: a {@link GrantSpec} with an `id`. */
export interface ClientGrantSpec extends GrantSpec {
  /** The id reported in `grants` when a call is inside it. */
  id: string;
}

/** Most grants a session keeps; the oldest are dropped past it. @internal */
export const MAX_GRANTS = 64;
/** Most grants one `intent` may carry. @internal */
export const MAX_CLIENT_GRANTS = 16;
/** Longest grant life, in seconds (30 days). */
const MAX_GRANT_SEC = 30 * 24 * 3600;
/** A grant path: one or more non-empty dot-separated names inside args. */
const GRANT_PATH = /^[^.]+(\.[^.]+)*$/;
/** A capture reference: `$` and the name of a named group. */
export const CAPTURE = /^\$([A-Za-z_][A-Za-z0-9_]*)$/;

const scalar = z.union([z.string().max(1000), z.number(), z.boolean(), z.null()]);

function regexString() {
  return z
    .string()
    .max(4096)
    .superRefine((source, ctx) => {
      if (CAPTURE.test(source)) return;
      const compiled = compileLinearRegex(source);
      if (!compiled.ok) ctx.addIssue({ code: 'custom', message: `matches: ${compiled.reason}` });
    });
}

/** The zod schema of a grant constraint; `captures` lets a number stand as `"$name"`. @internal */
export function constraintSchema(captures: boolean) {
  const bound = captures
    ? z.union([z.number(), z.string().regex(CAPTURE, { error: 'a number, or "$name" naming a capture' })])
    : z.number();
  return z
    .union([
      z.strictObject({ eq: scalar }),
      z.strictObject({ in: z.array(scalar).min(1).max(100) }),
      z.strictObject({ lte: bound }),
      z.strictObject({ gte: bound }),
      z.strictObject({ lt: bound }),
      z.strictObject({ gt: bound }),
      z.strictObject({ matches: regexString() }),
      z.strictObject({ fromUser: z.literal(true) }),
    ])
    .meta({
      description:
        'exactly one of: eq (equal; strings after NFKC and case folding, a number and its decimal string alike), in, ' +
        'lte gte lt gt (numbers), matches (an RE2 regex searched in a string), fromUser: true (the value occurs in the ' +
        "user's own words in this session)" +
        (captures ? '; "$name" stands for a named capture of the intent\'s pattern' : ''),
    });
}

/** The zod schema of a grant body (`captures`: an intent rule's, where `"$name"` may stand in). @internal */
export function grantSchema(captures: boolean) {
  return z.strictObject({
    tools: z.union([toolSchema, z.array(toolSchema).min(1).max(32)]),
    args: z
      .record(
        z.string().max(200).regex(GRANT_PATH, { error: 'a grant path is dotted names inside args, like to.iban' }),
        constraintSchema(captures),
      )
      .optional()
      .meta({ description: 'dotted paths inside args (amount, to.iban) mapped to one constraint each' }),
    uses: z.int().min(1).max(1_000_000).optional().meta({ description: 'calls inside the grant it lasts' }),
    expiresInSec: z.int().min(1).max(MAX_GRANT_SEC).optional().meta({ description: 'seconds the grant lives' }),
  });
}

const clientGrantSchema = grantSchema(false).extend({
  id: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{1,64}$/, { error: 'a grant id is at most 64 characters from A-Z a-z 0-9 _ . : -' }),
});

/**
 * Checks the grants an application sent with an input step (`intent`), against the policy's groups.
 * @throws HttpError 400 `invalid_request` for anything but a list of at most 16 grants of the documented
 *   shape: an unknown field, constraint or `@group`, a bad regex (the message names the place, never a value)
 * @internal
 */
export function readClientGrants(raw: unknown, groups: CompiledToolGroups, where = 'intent'): ClientGrantSpec[] {
  if (!Array.isArray(raw) || raw.length > MAX_CLIENT_GRANTS) {
    throw invalid(`${where} must be a list of at most ${MAX_CLIENT_GRANTS} grants`);
  }
  return raw.map((item: unknown, i) => {
    const parsed = clientGrantSchema.safeParse(item);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const path =
        issue === undefined ? '' : issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`));
      throw invalid(`${where}[${i}]${Array.isArray(path) ? path.join('') : ''} is not a valid grant`);
    }
    for (const tool of listOf(parsed.data.tools)) {
      if (unknownGroup(tool, Object.fromEntries([...groups.keys()].map((k) => [k, true]))) !== undefined) {
        throw invalid(`${where}[${i}].tools names an unknown tool group`);
      }
    }
    return parsed.data as ClientGrantSpec;
  });
}

function invalid(message: string): HttpError {
  return new HttpError(400, 'invalid_request', message);
}

const listOf = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

/** A number written in decimal (thousands separated by `,` allowed), or undefined. @internal */
export function decimalOf(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (!/^[+-]?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?$/.test(text)) return undefined;
  return Number(text.replaceAll(',', ''));
}

/**
 * A grant ready to keep: `"$name"` replaced by its capture (a number where the constraint needs one);
 * undefined when a capture is missing, or is not a number where one is needed (no grant is made).
 * @param now - epoch milliseconds
 * @internal
 */
export function resolveGrant(
  id: string,
  spec: GrantSpec,
  captures: Readonly<Record<string, string | undefined>>,
  now: number,
): StoredGrant | undefined {
  const args: Record<string, StoredConstraint> = {};
  for (const [path, constraint] of Object.entries(spec.args ?? {})) {
    const resolved = resolveConstraint(constraint, captures);
    if (resolved === undefined) return undefined;
    args[path] = resolved;
  }
  const grant: { -readonly [K in keyof StoredGrant]: StoredGrant[K] } = { id, tools: listOf(spec.tools), args };
  if (spec.uses !== undefined) grant.uses = spec.uses;
  if (spec.expiresInSec !== undefined) grant.expiresAt = now + spec.expiresInSec * 1000;
  return grant;
}

function capture(value: unknown, captures: Readonly<Record<string, string | undefined>>): unknown {
  if (typeof value !== 'string') return value;
  const name = CAPTURE.exec(value)?.[1];
  return name === undefined || !Object.hasOwn(captures, name) ? value : captures[name];
}

function resolveConstraint(
  c: GrantConstraintSpec,
  captures: Readonly<Record<string, string | undefined>>,
): StoredConstraint | undefined {
  if ('fromUser' in c) return { fromUser: true };
  if ('matches' in c) {
    const name = CAPTURE.exec(c.matches)?.[1];
    if (name === undefined || !Object.hasOwn(captures, name)) return { matches: c.matches };
    const text = captures[name];
    // a capture stands for itself: the value must contain it (case folded)
    return text === undefined || text.trim() === '' ? undefined : { matches: `(?i)${quote(text.trim())}` };
  }
  if ('eq' in c) {
    const v = capture(c.eq, captures);
    return v === undefined ? undefined : { eq: v as string };
  }
  if ('in' in c) {
    const list = c.in.map((v) => capture(v, captures));
    return list.includes(undefined) ? undefined : { in: list as string[] };
  }
  const [op, raw] = Object.entries(c)[0] as ['lte' | 'gte' | 'lt' | 'gt', unknown];
  const n = decimalOf(capture(raw, captures));
  return n === undefined ? undefined : ({ [op]: n } as StoredConstraint);
}

function quote(text: string): string {
  return text.replace(/[\\.+*?()|[\]{}^$]/g, '\\$&');
}

/** What deciding whether a call is inside a grant needs. @internal */
export interface GrantContext {
  readonly groups: CompiledToolGroups;
  /** The user's words, as kept. */
  readonly words: ReadonlySet<string>;
  /** The key of the word hashes. */
  readonly key: Uint8Array;
}

function scalarEquals(expected: unknown, actual: unknown): boolean {
  if (expected === actual) return true;
  if (typeof expected === 'string' && typeof actual === 'string') {
    return foldText(expected).trim() === foldText(actual).trim();
  }
  if (typeof expected !== 'number' && typeof actual !== 'number') return false;
  const a = decimalOf(expected);
  return a !== undefined && a === decimalOf(actual);
}

/**
 * A constraint on an argument: on a list (recipients, attendees), every element must meet it, and an
 * empty list meets none (so leaving a required value out is not a way around it); a nested list never does.
 */
function constraintHolds(c: StoredConstraint, found: boolean, value: unknown, ctx: GrantContext): boolean {
  if (!found) return false;
  if (Array.isArray(value)) {
    return value.length > 0 && value.every((item) => !Array.isArray(item) && scalarHolds(c, item, ctx));
  }
  return scalarHolds(c, value, ctx);
}

function scalarHolds(c: StoredConstraint, value: unknown, ctx: GrantContext): boolean {
  if ('eq' in c) return scalarEquals(c.eq, value);
  if ('in' in c) return c.in.some((candidate) => scalarEquals(candidate, value));
  if ('fromUser' in c) return occursInWords(ctx.key, ctx.words, value);
  if ('matches' in c) {
    const compiled = compileLinearRegex(c.matches);
    return compiled.ok && typeof value === 'string' && compiled.regex.test(value);
  }
  const n = decimalOf(value);
  if (n === undefined) return false;
  if ('lte' in c) return n <= c.lte;
  if ('gte' in c) return n >= c.gte;
  if ('lt' in c) return n < c.lt;
  return n > c.gt;
}

/** True when the grant is live at `now`: not expired, uses left. @internal */
export function isLive(grant: StoredGrant, now: number): boolean {
  return (grant.expiresAt === undefined || grant.expiresAt > now) && (grant.uses === undefined || grant.uses > 0);
}

/** True when the tool matches one of the grant's tools (an unknown group matches nothing). */
function toolMatches(grant: StoredGrant, tool: string, groups: CompiledToolGroups): boolean {
  return grant.tools.some((pattern) => {
    if (pattern.startsWith('@') && !groups.has(pattern.slice(1))) return false;
    return compileTool(pattern, groups).test(tool);
  });
}

/**
 * The indexes of the live grants a call is inside: its tool matches and every constraint holds.
 * @internal
 */
export function grantsHolding(
  grants: readonly StoredGrant[],
  tool: string,
  args: Record<string, unknown>,
  ctx: GrantContext,
  now: number,
): number[] {
  const out: number[] = [];
  grants.forEach((grant, i) => {
    if (!isLive(grant, now) || !toolMatches(grant, tool, ctx.groups)) return;
    for (const [path, c] of Object.entries(grant.args)) {
      const { found, value } = lookup(args, path.split('.'));
      if (!constraintHolds(c, found, value, ctx)) return;
    }
    out.push(i);
  });
  return out;
}

/**
 * The grants after a step: the spent ones used once (a grant with no uses left is dropped), the expired
 * ones dropped, the new ones added, at most {@link MAX_GRANTS} (the oldest dropped).
 * @internal
 */
export function grantsAfter(
  grants: readonly StoredGrant[],
  spent: readonly number[],
  added: readonly StoredGrant[],
  now: number,
): StoredGrant[] {
  const used = new Set(spent);
  const kept = grants
    .map((grant, i) => (used.has(i) && grant.uses !== undefined ? { ...grant, uses: grant.uses - 1 } : grant))
    .filter((grant) => isLive(grant, now));
  const all = [...kept, ...added];
  return all.length > MAX_GRANTS ? all.slice(all.length - MAX_GRANTS) : all;
}
