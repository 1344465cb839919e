/**
 * Deep strict equality of two values, as `node:util`'s `isDeepStrictEqual` (used where the runtime
 * has it); on runtimes without Node built-ins (workerd, Vercel Edge), a structural comparison of
 * JSON-like values: primitives by `Object.is`, arrays element by element, plain objects by their own
 * enumerable keys. Anything else (a Date, a Map, a class instance) is unequal there: callers use the
 * answer only to skip a check, so "unequal" is the safe side.
 * @internal
 */
import type * as NodeUtil from 'node:util';
import { isPlainObject } from './guards.js';
import { nodeBuiltin } from './runtime.js';

const nodeIsDeepStrictEqual = nodeBuiltin<typeof NodeUtil>('node:util')?.isDeepStrictEqual;

/** Structural equality of JSON-like values (see the module comment). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b) || !isPlainObject(a) || !isPlainObject(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (!Object.hasOwn(b, k)) return false;
    if (!jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}

/** `isDeepStrictEqual` where `node:util` is, else {@link jsonEqual}. */
export const deepStrictEqual: (a: unknown, b: unknown) => boolean = nodeIsDeepStrictEqual ?? jsonEqual;
