/**
 * Dotted `args.` paths (docs/dev-pdp.md): read by `when`, written by `setArgs`.
 * @packageDocumentation
 */

import { isPlainObject } from 'agent-pep/internal';

/** The SDK's one plain-object test (an object literal, `JSON.parse`, a null prototype), for the PDP's modules. @internal */
export { isPlainObject };

const ARRAY_INDEX = /^(0|[1-9]\d{0,8})$/;

/**
 * Walks a path (the segments after `args.`) through own properties of plain objects, and through
 * arrays by a decimal index (`args.to.0.domain`); never the prototype chain, never into class instances.
 * @internal
 */
export function lookup(
  args: Record<string, unknown> | undefined,
  path: readonly string[],
): { found: boolean; value?: unknown } {
  let current: unknown = args;
  for (const key of path) {
    if (Array.isArray(current)) {
      if (!ARRAY_INDEX.test(key) || Number(key) >= current.length) return { found: false };
      current = current[Number(key)];
    } else if (isPlainObject(current) && Object.hasOwn(current, key)) {
      current = current[key];
    } else {
      return { found: false };
    }
  }
  return { found: true, value: current };
}

function define(target: Record<string, unknown>, key: string, value: unknown): void {
  // defineProperty, not assignment: a key such as "__proto__" becomes an own data property
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * Sets `value` (a JSON value, copied) at `path` in `args`, in place, creating objects as needed: a
 * step that is absent or not a plain object (a scalar, an array) is replaced by an empty object.
 * The caller passes a copy it owns; the request's args are never touched.
 * @internal
 */
export function setPath(args: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let current = args;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i] as string;
    const next = Object.hasOwn(current, key) ? current[key] : undefined;
    if (isPlainObject(next)) current = next;
    else {
      const created: Record<string, unknown> = {};
      define(current, key, created);
      current = created;
    }
  }
  define(current, path[path.length - 1] as string, structuredClone(value));
}
