/**
 * Value flows (docs/dev-pdp.md, "Value flows"; contract section 15): values the session saw in input
 * text and in tool output (`context_egress`), found by the built-in extractors and the policy's
 * `values`, kept as keyed hashes with where they came from, and found again in a call's args (also
 * inside a longer string) for the `flows` and `sameOrigin` conditions. Never plaintext.
 * @packageDocumentation
 */
import { createHmac } from 'node:crypto';
import { z } from 'zod';
import { compileLinearRegex, type LinearRegex } from '../regex.js';
import type { CompiledToolGroups } from '../tool-groups.js';
import type { StoredValue, ValueSource } from './state.js';

/** One value extractor of a policy, as written. */
export interface ValueSpec {
  /** The kind's name (used as `kind` in a `flows` condition); not one of the built-ins. */
  name: string;
  /** RE2 regex; each match, whole and trimmed, is a value of this kind. */
  pattern: string;
}

/** The built-in kinds. */
export const BUILTIN_KINDS = Object.freeze(['email', 'url', 'host', 'iban', 'card'] as const);

/** Most values a session keeps (the oldest dropped), sources a value keeps, values one text adds. @internal */
export const VALUE_LIMITS = Object.freeze({ perSession: 1024, sourcesPerValue: 8, perText: 256 });

/** The zod schema of `values`. @internal */
export const valuesSchema = z
  .array(
    z.strictObject({
      name: z
        .string()
        .regex(/^[A-Za-z0-9_.:-]{1,64}$/, { error: 'a value name is at most 64 characters from A-Z a-z 0-9 _ . : -' })
        .refine((name) => !(BUILTIN_KINDS as readonly string[]).includes(name), {
          error: 'a value name must not be a built-in kind (email, url, host, iban, card)',
        }),
      pattern: z
        .string()
        .max(4096)
        .superRefine((source, ctx) => {
          const compiled = compileLinearRegex(source);
          if (!compiled.ok) ctx.addIssue({ code: 'custom', message: `pattern: ${compiled.reason}` });
        }),
    }),
  )
  .meta({
    description:
      'value extractors beside the built-ins (email, url, host, iban, card), e.g. the secret formats to follow: { name, pattern }',
  });

/** An extractor: its kind, its regex, and how a match becomes the form that is hashed (undefined: not a value). */
interface Extractor {
  readonly kind: string;
  readonly regex: LinearRegex;
  readonly form: (match: string) => string | undefined;
}

function must(source: string): LinearRegex {
  const c = compileLinearRegex(source);
  if (!c.ok) throw new TypeError('a built-in value regex failed to compile');
  return c.regex;
}

function ibanValid(iban: string): boolean {
  const moved = iban.slice(4) + iban.slice(0, 4);
  let rest = 0;
  for (const ch of moved) {
    const n = ch >= 'A' && ch <= 'Z' ? ch.charCodeAt(0) - 55 : Number(ch);
    rest = Number(`${rest}${n}`) % 97;
  }
  return rest === 1;
}

function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname.toLowerCase() || undefined;
  } catch {
    return undefined;
  }
}

const BUILTINS: readonly Extractor[] = [
  { kind: 'email', regex: must('[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\\.[A-Za-z0-9-]+)+'), form: (m) => m.toLowerCase() },
  {
    kind: 'url',
    regex: must('(?i)https?://[^\\s"\'<>()\\[\\]{}]+'),
    form: (m) => {
      const trimmed = m.replace(/[.,;:!?]+$/, '');
      const host = hostOf(trimmed);
      return host === undefined ? undefined : trimmed.replace(/^[a-z]+:\/\/[^/?#]+/i, (p) => p.toLowerCase());
    },
  },
  { kind: 'host', regex: must('(?i)https?://[^\\s"\'<>()\\[\\]{}/?#]+'), form: (m) => hostOf(m) },
  { kind: 'host', regex: must('@[A-Za-z0-9-]+(?:\\.[A-Za-z0-9-]+)+'), form: (m) => m.slice(1).toLowerCase() },
  {
    kind: 'iban',
    regex: must('\\b[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]){11,30}\\b'),
    form: (m) => {
      // a match may run on into the next word: the longest prefix with a valid check sum is the IBAN
      const all = m.replaceAll(' ', '');
      for (let n = Math.min(all.length, 34); n >= 15; n--) if (ibanValid(all.slice(0, n))) return all.slice(0, n);
      return undefined;
    },
  },
  {
    kind: 'card',
    regex: must('\\b[0-9](?:[ -]?[0-9]){12,18}\\b'),
    form: (m) => {
      const digits = m.replace(/[^0-9]/g, '');
      return luhnValid(digits) ? digits : undefined;
    },
  },
];

/** The extractors of a policy: the built-ins, then its own. @internal */
export interface ValueExtractors {
  readonly list: readonly Extractor[];
}

/** Compiles the validated `values` of a policy. @internal */
export function compileValues(specs: readonly ValueSpec[] | undefined): ValueExtractors {
  const own = (specs ?? []).map(
    (spec): Extractor => ({ kind: spec.name, regex: must(spec.pattern), form: (m) => m.trim() || undefined }),
  );
  return Object.freeze({ list: Object.freeze([...BUILTINS, ...own]) });
}

/** One value found in a text: its kind and keyed hash. @internal */
export interface FoundValue {
  readonly kind: string;
  readonly hash: string;
}

/** The keyed hash of a value of a kind. @internal */
export function valueHash(key: Uint8Array, kind: string, form: string): string {
  return createHmac('sha256', key)
    .update('v\u0000')
    .update(kind, 'utf8')
    .update('\u0000')
    .update(form, 'utf8')
    .digest('base64url')
    .slice(0, 22);
}

/** The values in a text, each (kind, form) once, at most `VALUE_LIMITS.perText`. @internal */
export function valuesIn(extractors: ValueExtractors, key: Uint8Array, text: string): FoundValue[] {
  const seen = new Set<string>();
  const out: FoundValue[] = [];
  for (const extractor of extractors.list) {
    for (const match of extractor.regex.matchAll(text)) {
      const form = extractor.form(match);
      if (form === undefined) continue;
      const hash = valueHash(key, extractor.kind, form);
      if (seen.has(hash)) continue;
      seen.add(hash);
      out.push({ kind: extractor.kind, hash });
      if (out.length >= VALUE_LIMITS.perText) return out;
    }
  }
  return out;
}

/** Every string (and number) inside a JSON value, as text. */
function textsOf(value: unknown, out: string[]): void {
  if (typeof value === 'string') out.push(value);
  else if (typeof value === 'number' && Number.isFinite(value)) out.push(String(value));
  else if (Array.isArray(value)) for (const item of value) textsOf(item, out);
  else if (typeof value === 'object' && value !== null) for (const item of Object.values(value)) textsOf(item, out);
}

/** The values inside a JSON value (every string in it, also inside a longer one). @internal */
export function valuesInJson(extractors: ValueExtractors, key: Uint8Array, value: unknown): FoundValue[] {
  const texts: string[] = [];
  textsOf(value, texts);
  const seen = new Set<string>();
  const out: FoundValue[] = [];
  for (const text of texts) {
    for (const found of valuesIn(extractors, key, text)) {
      if (seen.has(found.hash)) continue;
      seen.add(found.hash);
      out.push(found);
    }
  }
  return out;
}

/** Where a tool's output comes from: the tool, the groups it belongs to, its origin. @internal */
export function sourceOf(tool: string | undefined, groups: CompiledToolGroups, origins: OriginMap): ValueSource {
  if (tool === undefined) return { tool: '', groups: [], origin: '' };
  const names = [...groups.entries()].filter(([, matcher]) => matcher.test(tool)).map(([name]) => name);
  return { tool, groups: names, origin: originOf(tool, groups, origins) };
}

/** The user's own words as a source. @internal */
export const USER_SOURCE: ValueSource = Object.freeze({ tool: 'user', groups: Object.freeze([]), origin: 'user' });

/** Group name -> declared origin, in policy order. @internal */
export type OriginMap = ReadonlyMap<string, string>;

/** A tool's origin: the first group (in policy order) that declares one and holds the tool, else the tool's name. @internal */
export function originOf(tool: string, groups: CompiledToolGroups, origins: OriginMap): string {
  for (const [name, origin] of origins) if (groups.get(name)?.test(tool)) return origin;
  return `tool:${tool}`;
}

function sameSource(a: ValueSource, b: ValueSource): boolean {
  return a.tool === b.tool && a.origin === b.origin && a.groups.join('\u0000') === b.groups.join('\u0000');
}

/** The values kept after a text from `source` added `found` (newest last, bounded). @internal */
export function valuesAfter(
  kept: readonly StoredValue[],
  found: readonly FoundValue[],
  source: ValueSource,
): StoredValue[] {
  if (found.length === 0) return [...kept];
  const byHash = new Map(kept.map((v) => [v.hash, v]));
  for (const f of found) {
    const old = byHash.get(f.hash);
    byHash.delete(f.hash);
    const sources = old === undefined ? [] : old.sources.filter((s) => !sameSource(s, source));
    sources.push(source);
    byHash.set(f.hash, {
      hash: f.hash,
      kind: f.kind,
      sources: sources.slice(-VALUE_LIMITS.sourcesPerValue),
    });
  }
  const all = [...byHash.values()];
  return all.length > VALUE_LIMITS.perSession ? all.slice(all.length - VALUE_LIMITS.perSession) : all;
}
