/**
 * Strict JSON-value checks and deep snapshots. Not public.
 * @internal
 */

/** Deepest nesting accepted in args (objects and arrays); deeper input is refused, not recursed into. */
export const MAX_JSON_DEPTH = 128;

/** Thrown for a value that is not a JSON value; the message names the kind, never the value. */
export class NotJsonError extends TypeError {
  override readonly name = 'NotJsonError';
}

import { isPlainObject, isRecord } from './guards.js';

/** The one plain-object test (internal/guards.ts), here too for `agent-pep/internal`'s readers. */
export { isPlainObject, isRecord };

/**
 * @param ancestors - the objects and arrays being copied around `value` (its path from the root): a
 *   value among them is a cycle. A path, not a `Set` of everything seen: an object met twice side by
 *   side (a DAG) is copied twice, as JSON would write it, and a path is at most {@link MAX_JSON_DEPTH} long.
 */
function cloneValue(value: unknown, depth: number, ancestors: object[]): unknown {
  switch (typeof value) {
    case 'string':
      if (!value.isWellFormed()) throw new NotJsonError('a string contains a lone surrogate');
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw new NotJsonError('a number is NaN or infinite');
      return value;
    case 'boolean':
      return value;
    case 'object': {
      if (value === null) return null;
      if (depth >= MAX_JSON_DEPTH) throw new NotJsonError(`nesting deeper than ${MAX_JSON_DEPTH}`);
      if (ancestors.includes(value)) throw new NotJsonError('a cycle');
      ancestors.push(value);
      let out: unknown;
      if (Array.isArray(value)) {
        if (Object.getPrototypeOf(value) !== Array.prototype) throw new NotJsonError('an array subclass');
        const arr: unknown[] = new Array<unknown>(value.length);
        for (let i = 0; i < value.length; i++) {
          if (!Object.hasOwn(value, i)) throw new NotJsonError('a sparse array');
          arr[i] = cloneValue(value[i], depth + 1, ancestors);
        }
        out = arr;
      } else {
        if (!isPlainObject(value)) throw new NotJsonError('a class instance (only plain objects are JSON)');
        if (Object.getOwnPropertySymbols(value).length > 0) throw new NotJsonError('a symbol key');
        const obj: Record<string, unknown> = {};
        const keys = Object.keys(value);
        for (let i = 0; i < keys.length; i++) {
          const key = keys[i] as string;
          if (!key.isWellFormed()) throw new NotJsonError('a key contains a lone surrogate');
          const v = cloneValue((value as Record<string, unknown>)[key], depth + 1, ancestors);
          // A name the fresh object inherits (`__proto__`, `constructor`, anything added to Object.prototype)
          // goes through defineProperty, which makes it an own data property and calls no inherited setter;
          // any other name is a plain assignment, which does the same, faster.
          if (key in obj) {
            Object.defineProperty(obj, key, { value: v, enumerable: true, writable: true, configurable: true });
          } else obj[key] = v;
        }
        out = obj;
      }
      ancestors.pop();
      return out;
    }
    case 'undefined':
      throw new NotJsonError('undefined');
    case 'bigint':
      throw new NotJsonError('a BigInt');
    case 'function':
      throw new NotJsonError('a function');
    case 'symbol':
      throw new NotJsonError('a symbol');
    default:
      throw new NotJsonError('an unsupported value');
  }
}

/**
 * Deep-copies a plain object of JSON values, refusing anything JSON cannot carry faithfully:
 * `undefined`, BigInt, NaN/Infinity, functions, symbols, cycles, class instances (Date, Map, ...),
 * sparse arrays and strings with lone surrogates.
 * @throws NotJsonError (a TypeError) naming the kind of value, never the value
 */
export function snapshotJsonObject(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !isPlainObject(value)) {
    throw new NotJsonError('args must be a plain object');
  }
  return cloneValue(value, 0, []) as Record<string, unknown>;
}

/** Like {@link snapshotJsonObject} for any JSON value. */
export function snapshotJson(value: unknown): unknown {
  return cloneValue(value, 0, []);
}

/**
 * Freezes a JSON value and everything inside it; returns it. Each object is frozen before its members
 * are (a cycle ends at an object already frozen); an object's own keys are read before it is frozen:
 * `Object.values` of an object just frozen cost about 5 µs per call on the decision path at 64 in
 * flight (BENCHMARKS.md), reading the same members by key does not.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    const keys = Array.isArray(value) ? undefined : Object.keys(value);
    Object.freeze(value);
    if (keys === undefined) {
      const list = value as unknown as unknown[];
      for (let i = 0; i < list.length; i++) deepFreeze(list[i]);
    } else {
      const obj = value as Record<string, unknown>;
      for (let i = 0; i < keys.length; i++) deepFreeze(obj[keys[i] as string]);
    }
  }
  return value;
}

/**
 * `value` with the members whose value is `undefined` left out of every plain object, at any depth, as
 * `JSON.stringify` leaves them out (a schema's output may hold them: `z.string().optional()`). Anything
 * else is returned as it is (the snapshot then refuses what is not JSON). Never mutates `value`.
 */
export function withoutUndefinedMembers(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutUndefinedMembers);
  if (typeof value !== 'object' || value === null || !isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const v = (value as Record<string, unknown>)[key];
    if (v === undefined) continue;
    // defineProperty: a member named __proto__ stays a member
    Object.defineProperty(out, key, {
      value: withoutUndefinedMembers(v),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}
