/**
 * Sets `Error.stackTraceLimit` to 0 and returns what it was; undefined when it could not be changed
 * (read-only under `node --frozen-intrinsics` or a hardened runtime: the error then has a stack).
 */
function muteStackTraces() {
    try {
        const limit = Error.stackTraceLimit;
        Error.stackTraceLimit = 0;
        return limit;
    }
    catch {
        return undefined;
    }
}
function restoreStackTraces(limit) {
    if (limit === undefined)
        return;
    try {
        Error.stackTraceLimit = limit;
    }
    catch {
        // made read-only meanwhile: nothing to restore into
    }
}
/**
 * A failed attempt or check, classified. Its message never contains content, args or secrets.
 * It never leaves the client (a decision carries only its code and message), so it captures no stack
 * trace: capturing one was about 13 microseconds of every refused or failed attempt (BENCHMARKS.md).
 */
export class AttemptFailure extends Error {
    /** The fail-closed code of the synthesized BLOCK this failure gives. */
    code;
    /** The status of a final response that was not 200. */
    status;
    /** That response's `Retry-After` header, as sent. */
    retryAfter;
    /** The system or undici error code, when a connection or read failed. */
    errorCode;
    /** Why the attempt was aborted, when it was. */
    abortCause;
    /**
     * @param code the fail-closed code of the synthesized BLOCK this failure gives
     * @param message a short text naming no content, args or secret
     * @param facts what happened on the wire (none for a body or decision that fails a check)
     * @param options `cause`: the underlying error
     */
    constructor(code, message, facts = {}, options) {
        const saved = muteStackTraces();
        try {
            super(message, options);
        }
        finally {
            restoreStackTraces(saved);
        }
        this.code = code;
        this.status = facts.status;
        this.retryAfter = facts.retryAfter;
        this.errorCode = facts.errorCode;
        this.abortCause = facts.abortCause;
    }
}
Object.defineProperty(AttemptFailure.prototype, 'name', {
    value: 'AttemptFailure',
    writable: true,
    configurable: true,
});
