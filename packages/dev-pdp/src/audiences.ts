/**
 * One audience per service (docs/dev-pdp.md): `toolAudiences` maps tool patterns to the `aud` of their
 * permits, so a permit for `refund_payment` names the payments service alone, and a service with its
 * own replay store (the mail service) refuses it rather than accept it once more.
 * @packageDocumentation
 */
import { compileGlob, type ToolGlob } from './glob.js';
import { optionError } from './options.js';

/** Compiled `toolAudiences`: patterns in the order given, each with its audience. @internal */
export type ToolAudiences = ReadonlyArray<readonly [ToolGlob, string]>;

/** A tool pattern in normalized form, with `*` wildcards (as a latch's `tool`). */
const TOOL_PATTERN = /^[a-z0-9*]+(_[a-z0-9*]+)*$/;
/** Most entries of `toolAudiences`. */
const MAX_ENTRIES = 256;

/**
 * Validates and compiles `toolAudiences`.
 * @throws TypeError with `option` `'toolAudiences'` (not a plain object, too many entries) or
 *   `'toolAudiences.<pattern>'` (a pattern not in normalized form, an audience that is not a
 *   non-empty string of at most 256 characters)
 * @internal
 */
export function compileToolAudiences(value: unknown): ToolAudiences {
  if (value === undefined) return [];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw optionError('toolAudiences', 'must be an object mapping tool patterns to audiences');
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) throw optionError('toolAudiences', 'must be a plain object');
  const entries = Object.entries(value);
  if (entries.length > MAX_ENTRIES) throw optionError('toolAudiences', `must have at most ${MAX_ENTRIES} entries`);
  return Object.freeze(
    entries.map(([pattern, audience]) => {
      const at = `toolAudiences.${pattern.slice(0, 80)}`;
      if (pattern.length > 256 || !TOOL_PATTERN.test(pattern)) {
        throw optionError(at, 'the key must be a normalized tool name (a-z, 0-9, single _) with optional * wildcards');
      }
      if (typeof audience !== 'string' || audience.length === 0 || audience.length > 256) {
        throw optionError(at, 'the audience must be a non-empty string of at most 256 characters');
      }
      return Object.freeze([compileGlob(pattern), audience] as const);
    }),
  );
}

/** The audience of a permit for `tool` (normalized): the first pattern that matches, else `fallback`. @internal */
export function audienceFor(audiences: ToolAudiences, tool: string, fallback: string): string {
  for (const [glob, audience] of audiences) if (glob.test(tool)) return audience;
  return fallback;
}
