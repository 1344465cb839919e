/**
 * The shape checks of the PDP's answers (docs/fail-closed.md, rule 3): a handful of composable checks
 * that say where a value first fails, written by hand so that the decision path loads no schema
 * library (issue 30: zod alone was most of `import('agent-pep')`). They read a value the way the zod
 * schemas they replace did (`z.looseObject`, `z.string()`, `z.enum`, `z.array`, `.optional()`), and
 * name the same first failing path; test/unit/wire/shape.test.ts holds them to those schemas.
 * @internal
 */
import { isRecord } from '../internal/guards.js';

/** A path below the checked value: member names and array indexes. */
export type ShapePath = readonly (string | number)[];

/** A check: `undefined` when `value` passes, else the path (below `value`) where it first fails. */
export type Check = (value: unknown) => ShapePath | undefined;

const HERE: ShapePath = Object.freeze([]);

/** Any string. */
export const string: Check = (v) => (typeof v === 'string' ? undefined : HERE);

/** A string of at least one UTF-16 code unit (`z.string().min(1)`). */
export const nonEmptyString: Check = (v) => (typeof v === 'string' && v.length >= 1 ? undefined : HERE);

/** `true` or `false`. */
export const boolean: Check = (v) => (typeof v === 'boolean' ? undefined : HERE);

/** One of `values` (`z.enum`). */
export function oneOf(values: readonly string[]): Check {
  return (v) => (typeof v === 'string' && values.includes(v) ? undefined : HERE);
}

/** A JSON object (not an array, not null; `isRecord` of internal/guards.ts) as a check. */
export const jsonObject: Check = (v) => (isRecord(v) ? undefined : HERE);

/** The check inside each {@link optional}, for {@link looseObject} to call without the wrapper. */
const OPTIONAL_OF = new WeakMap<Check, Check>();

/** Absent (`undefined`) or passing `check`. */
export function optional(check: Check): Check {
  const wrapped: Check = (v) => (v === undefined ? undefined : check(v));
  OPTIONAL_OF.set(wrapped, check);
  return wrapped;
}

/** An array, each item passing `item` when given (the first failing item is named by its index). */
export function arrayOf(item?: Check): Check {
  return (v) => {
    if (!Array.isArray(v)) return HERE;
    if (item === undefined) return undefined;
    for (let i = 0; i < v.length; i++) {
      const at = item(v[i]);
      if (at !== undefined) return [i, ...at];
    }
    return undefined;
  };
}

/**
 * A JSON object whose named members pass their checks, in the order given; other members are not
 * read (`z.looseObject`).
 */
export function looseObject(members: Readonly<Record<string, Check>>): Check {
  // Two flat arrays walked by index: no iterator and no destructured pair per member (a batch's answer
  // checks about ten members an item).
  // An optional member's own check is called only when the member is there: the same verdict as the
  // wrapper's, one closure call fewer a member (most of an answer's members are optional).
  const names = Object.keys(members);
  const checks = names.map((name) => OPTIONAL_OF.get(members[name] as Check) ?? (members[name] as Check));
  const optionals = names.map((name) => OPTIONAL_OF.has(members[name] as Check));
  const n = names.length;
  return (v) => {
    if (!isRecord(v)) return HERE;
    for (let i = 0; i < n; i++) {
      const x = v[names[i] as string];
      if (x === undefined && optionals[i] === true) continue;
      const at = (checks[i] as Check)(x);
      if (at !== undefined) return [names[i] as string, ...at];
    }
    return undefined;
  };
}

/** A path as the `invalid_response` messages name it: `a.0.b`, or `(root)` for the value itself. */
export function pathText(path: ShapePath): string {
  return path.map(String).join('.') || '(root)';
}
