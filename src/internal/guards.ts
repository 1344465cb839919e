/**
 * Type guards every layer shares, written once: an `AbortSignal`, a session id, a record, a plain object. They
 * import nothing, so an entry that needs one (such as `agent-pep/ai` checking a session id) loads
 * nothing else with it (no jose). Not public.
 * @internal
 */

/** True for anything shaped like an `AbortSignal`. */
export function isAbortSignal(v: unknown): v is AbortSignal {
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as AbortSignal).aborted === 'boolean' &&
    typeof (v as AbortSignal).addEventListener === 'function'
  );
}

/** A session id: a non-empty, well-formed string (not only white space). */
export function isSessionId(v: unknown): v is string {
  return typeof v === 'string' && v.trim() !== '' && v.isWellFormed();
}

/**
 * A record: any object but null and an array (a class instance, a Date or a Map included). For reading
 * named members of a host's or a caller's value, where what the object is made from does not matter.
 */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * A plain object, the one meaning in agent-pep: what an object literal, `JSON.parse` or
 * `Object.create(null)` makes. Its prototype is `Object.prototype`, null, or (an object from another
 * realm, as jose reads a JWK) a prototype whose own prototype is null; so no array, no class instance,
 * no Date or Map. For values that must be JSON-shaped (args, hook events, JWK sets, policy values).
 */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null) return false;
  const proto = Object.getPrototypeOf(v) as object | null;
  return proto === Object.prototype || proto === null || Object.getPrototypeOf(proto) === null;
}
