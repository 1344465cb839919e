/**
 * The one way a permit check refuses: a `PermitVerificationError` whose message names the check,
 * never the permit, its claims, the args or a key.
 * @internal
 */
import { PermitVerificationError } from '../errors.js';
import { beforeDeadline, deadlineIn } from '../internal/deadline.js';
/** Makes the refusal for `code`; jose's error (or ours) is kept as `cause`. */
export function refuse(code, message, cause) {
    return new PermitVerificationError(code, `permit refused (${code}): ${message}`, cause === undefined ? {} : { cause });
}
/** A string with at least one character. */
export function nonEmptyString(v) {
    return typeof v === 'string' && v.length > 0;
}
/** The `code` of a jose error (`ERR_...`), when it has one. */
export function joseCode(e) {
    if (typeof e === 'object' && e !== null && 'code' in e && typeof e.code === 'string')
        return e.code;
    return undefined;
}
/** Rejects with `make()` when `promise` has not settled within `ms` (the one deadline helper). */
export function withDeadline(promise, ms, make) {
    return beforeDeadline(promise, deadlineIn(ms), make);
}
