/**
 * A policy's `intents` (docs/dev-pdp.md, "Intent grants"): rules that read the user's own words at the
 * `input` stage and make grants. Each sentence of the input is tried on its own: a rule grants once per
 * sentence its `pattern` finds and none of its `unless` patterns (questions, negations, deferrals) does.
 * @packageDocumentation
 */
import { z } from 'zod';
import { compileLinearRegex, type LinearRegex } from '../regex.js';
import { CAPTURE, type GrantSpec, grantSchema, resolveGrant } from './grants.js';
import type { StoredGrant } from './state.js';

/** One intent rule, as written. */
export interface IntentSpec {
  /** The rule's id: the id of the grants it makes. */
  id: string;
  /** RE2 regex searched in each sentence of the input; named groups `(?P<name>..)` can be used as `"$name"`. */
  pattern: string;
  /** RE2 regexes: a sentence any of them finds makes no grant (a question, a refusal, a deferral). */
  unless?: string[];
  /** The grant made. */
  grant: GrantSpec;
  /** Free text for policy authors; ignored. */
  description?: string;
}

/** An intent rule ready to match. @internal */
export interface CompiledIntent {
  readonly id: string;
  readonly pattern: LinearRegex;
  readonly unless: readonly LinearRegex[];
  readonly grant: GrantSpec;
}

function re2(what: string) {
  return z
    .string()
    .max(4096)
    .superRefine((source, ctx) => {
      const compiled = compileLinearRegex(source);
      if (!compiled.ok) ctx.addIssue({ code: 'custom', message: `${what}: ${compiled.reason}` });
    });
}

/** The zod schema of `intents`. @internal */
export const intentsSchema = z
  .array(
    z
      .strictObject({
        id: z.string().regex(/^[A-Za-z0-9_.:-]{1,64}$/, {
          error: 'an intent id is at most 64 characters from A-Z a-z 0-9 _ . : -',
        }),
        pattern: re2('pattern').meta({
          description: 'RE2 regex searched in each sentence of the input text; (?P<name>..) captures are "$name"',
        }),
        unless: z
          .array(re2('unless'))
          .min(1)
          .optional()
          .meta({ description: 'RE2 regexes; a sentence any of them finds grants nothing (questions, negations)' }),
        grant: grantSchema(true),
        description: z.string().optional(),
      })
      .meta({ description: 'an intent rule: a sentence of the user input that matches makes the grant' }),
  )
  .meta({ description: 'intent rules, read at the input stage only (docs/dev-pdp.md, "Intent grants")' });

/** Every `"$name"` a grant uses. @internal */
export function captureNames(grant: unknown): string[] {
  const out: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === 'string') {
      const name = CAPTURE.exec(value)?.[1];
      if (name !== undefined) out.push(name);
    } else if (Array.isArray(value)) value.forEach(walk);
    else if (typeof value === 'object' && value !== null) Object.values(value).forEach(walk);
  };
  if (typeof grant === 'object' && grant !== null) walk((grant as { args?: unknown }).args);
  return out;
}

/** Compiles validated rules. @internal */
export function compileIntents(specs: readonly IntentSpec[] | undefined): readonly CompiledIntent[] {
  return Object.freeze(
    (specs ?? []).map((spec) => {
      const must = (source: string) => {
        const c = compileLinearRegex(source);
        if (!c.ok) throw new TypeError('a regex the schema accepted failed to compile');
        return c.regex;
      };
      return Object.freeze({
        id: spec.id,
        pattern: must(spec.pattern),
        unless: Object.freeze((spec.unless ?? []).map(must)),
        grant: spec.grant,
      });
    }),
  );
}

/**
 * The sentences of a text: cut after `.`, `!`, `?` or `;` followed by white space, and at line breaks;
 * each keeps its closing mark (so an `unless` can see the `?` of a question).
 * @internal
 */
export function sentencesOf(text: string): string[] {
  return text
    .split(/(?<=[.!?;])\s+|[\r\n]+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/**
 * The grants the rules make from one input text, in rule order, then sentence order.
 * @param now - epoch milliseconds (the start of `expiresInSec`)
 * @internal
 */
export function grantsFromText(intents: readonly CompiledIntent[], text: string, now: number): StoredGrant[] {
  if (intents.length === 0) return [];
  const out: StoredGrant[] = [];
  const sentences = sentencesOf(text);
  for (const intent of intents) {
    for (const sentence of sentences) {
      const captures = intent.pattern.exec(sentence);
      if (captures === null || intent.unless.some((u) => u.test(sentence))) continue;
      const grant = resolveGrant(intent.id, intent.grant, captures, now);
      if (grant !== undefined) out.push(grant);
    }
  }
  return out;
}
