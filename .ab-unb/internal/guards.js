/**
 * Type guards every layer shares, written once: an `AbortSignal`, a session id, a plain object. They
 * import nothing, so an entry that needs one (such as `agent-pep/ai` checking a session id) loads
 * nothing else with it (no jose). Not public.
 * @internal
 */
/** True for anything shaped like an `AbortSignal`. */
export function isAbortSignal(v) {
    return (typeof v === 'object' &&
        v !== null &&
        typeof v.aborted === 'boolean' &&
        typeof v.addEventListener === 'function');
}
/** A session id: a non-empty, well-formed string (not only white space). */
export function isSessionId(v) {
    return typeof v === 'string' && v.trim() !== '' && v.isWellFormed();
}
/** An object that is neither null nor an array. */
export function isPlainObject(v) {
    return typeof v === 'object' && v !== null && !Array.isArray(v);
}
