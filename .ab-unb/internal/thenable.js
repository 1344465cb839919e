/**
 * Whether a value is a promise or promise-like (Promises/A+ section 1.2: an object or function with a
 * `then` method). Reading `then` may throw (a getter, a Proxy): callers that take values from user code
 * treat that as the user code's throw.
 * @internal
 */
export function isThenable(v) {
    if (v instanceof Promise)
        return true;
    return ((typeof v === 'object' || typeof v === 'function') &&
        v !== null &&
        typeof v.then === 'function');
}
