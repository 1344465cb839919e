/**
 * THE option-validation kit: every option `TypeError` of the package is made here, with `err.option`
 * naming the offending path (docs/api.md), so callers and tests can tell which rule fired; and the
 * checks every entry shares (unknown keys, milliseconds, integers, booleans, strings), each with one
 * rule and one limit. It sits in `internal/` so that the service side (`permit/`, `replay/`) and the
 * dev PDP use it too; `options/kit.ts` is its face for the client's option tables. Not public.
 * @internal
 */
/** Most characters of an unknown key echoed into a message (it is the caller's, not a secret, but may be long). */
const KEY_ECHO = 40;
/**
 * THE upper limit of every millisecond option of the package: ten minutes. No wait of a PEP, a
 * verifier, a replay store or the dev PDP needs longer, and it is far below what a Node timer can hold
 * (2^31 - 1 ms; a longer delay would fire after 1 ms).
 */
export const MAX_MS = 600_000;
/**
 * Makes (does not throw) a `TypeError` naming `path` in `err.option` (enumerable). The message names
 * the option, never its value (a value may be a secret).
 * @param scope - who validates, e.g. `'createPep'`, `'startDevPdp'`
 * @param path - the dotted option path
 * @param problem - what is wrong, e.g. `'expected a positive integer'`
 */
export function optionTypeError(scope, path, problem) {
    const err = new TypeError(`${scope}: invalid option ${path}: ${problem}`);
    Object.defineProperty(err, 'option', { value: path, enumerable: true, writable: true, configurable: true });
    return err;
}
/** Throws {@link optionTypeError}. */
export function optionError(scope, path, problem) {
    throw optionTypeError(scope, path, problem);
}
/**
 * Refuses any own key of `obj` not in `known` (a misspelt safety setting must never pass silently).
 * @param prefix - the path of `obj` itself, `''` at the top level
 */
export function refuseUnknownKeys(scope, obj, known, prefix = '') {
    for (const key of Object.keys(obj)) {
        if (!known.has(key)) {
            const shown = key.length > KEY_ECHO ? `${key.slice(0, KEY_ECHO)}...` : key;
            optionError(scope, prefix === '' ? key : `${prefix}.${key}`, `unknown option ${JSON.stringify(shown)}`);
        }
    }
}
/**
 * An integer option within `[min, max]`, or `dflt` when undefined.
 * @throws TypeError with `option` = `path`
 */
export function integerOption(scope, path, v, dflt, min, max = Number.MAX_SAFE_INTEGER) {
    if (v === undefined)
        return dflt;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
        optionError(scope, path, max === Number.MAX_SAFE_INTEGER
            ? `expected an integer of at least ${min}`
            : `expected an integer from ${min} to ${max}`);
    }
    return v;
}
/**
 * A millisecond option: a positive integer that a timer can hold (1 to {@link MAX_MS}), or
 * `dflt` when undefined. The one rule of every `...Ms` option of the package.
 * @throws TypeError with `option` = `path`
 */
export function msOption(scope, path, v, dflt) {
    if (v === undefined)
        return dflt;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > MAX_MS) {
        optionError(scope, path, `expected an integer number of milliseconds from 1 to ${MAX_MS}`);
    }
    return v;
}
/** A boolean option, or `dflt` when undefined. @throws TypeError with `option` = `path` */
export function booleanOption(scope, path, v, dflt) {
    if (v === undefined)
        return dflt;
    if (typeof v !== 'boolean')
        optionError(scope, path, 'expected a boolean');
    return v;
}
/** A non-empty, well-formed string option (not only white space). @throws TypeError with `option` = `path` */
export function nonEmptyStringOption(scope, path, v) {
    if (typeof v !== 'string' || v.trim().length === 0)
        optionError(scope, path, 'expected a non-empty string');
    if (!v.isWellFormed())
        optionError(scope, path, 'contains a lone surrogate');
    return v;
}
