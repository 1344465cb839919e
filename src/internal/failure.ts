/**
 * The one error type an HTTP attempt or a check fails with: its fail-closed code, and the facts of
 * what happened on the wire. Whether it is retried is decided in `retry.ts`, from those facts. Not public.
 * @internal
 */
import type { FailClosedCode } from '../decision.js';
import type { AbortCause } from './abort.js';

/** What the transport saw when an attempt failed; `retry.ts` decides from these alone. */
export interface AttemptFacts {
  /** The status of a final response that was not 200. */
  status?: number | undefined;
  /** That response's `Retry-After` header, as sent (one header line; a repeated header is ignored). */
  retryAfter?: string | undefined;
  /** The system or undici error code of a connection or read that failed (`ECONNRESET`, `UND_ERR_SOCKET`). */
  errorCode?: string | undefined;
  /** Why the attempt was aborted, when it was. */
  abortCause?: AbortCause | undefined;
}

/**
 * Sets `Error.stackTraceLimit` to 0 and returns what it was; undefined when it could not be changed
 * (read-only under `node --frozen-intrinsics` or a hardened runtime: the error then has a stack).
 */
function muteStackTraces(): number | undefined {
  try {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    return limit;
  } catch {
    return undefined;
  }
}

function restoreStackTraces(limit: number | undefined): void {
  if (limit === undefined) return;
  try {
    Error.stackTraceLimit = limit;
  } catch {
    // made read-only meanwhile: nothing to restore into
  }
}

/**
 * A failed attempt or check, classified. Its message never contains content, args or secrets.
 * It never leaves the client (a decision carries only its code and message), so it captures no stack
 * trace: capturing one was about 13 microseconds of every refused or failed attempt (BENCHMARKS.md).
 */
export class AttemptFailure extends Error {
  declare readonly name: 'AttemptFailure';
  /** The fail-closed code of the synthesized BLOCK this failure gives. */
  readonly code: FailClosedCode;
  /** The status of a final response that was not 200. */
  readonly status: number | undefined;
  /** That response's `Retry-After` header, as sent. */
  readonly retryAfter: string | undefined;
  /** The system or undici error code, when a connection or read failed. */
  readonly errorCode: string | undefined;
  /** Why the attempt was aborted, when it was. */
  readonly abortCause: AbortCause | undefined;

  /**
   * @param code the fail-closed code of the synthesized BLOCK this failure gives
   * @param message a short text naming no content, args or secret
   * @param facts what happened on the wire (none for a body or decision that fails a check)
   * @param options `cause`: the underlying error
   */
  constructor(code: FailClosedCode, message: string, facts: AttemptFacts = {}, options?: { cause?: unknown }) {
    const saved = muteStackTraces();
    try {
      super(message, options);
    } finally {
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
