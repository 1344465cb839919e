/**
 * The one error type an HTTP attempt fails with, carrying its fail-closed code. Not public.
 * @internal
 */
import type { FailClosedCode } from '../decision.js';

/** A failed attempt or check, classified. Its message never contains content, args or secrets. */
export class AttemptFailure extends Error {
  override readonly name = 'AttemptFailure';
  constructor(
    readonly code: FailClosedCode,
    message: string,
    readonly retryable = false,
    readonly status?: number,
    /** A `Retry-After` the PDP sent, in milliseconds from now. */
    readonly retryAfterMs?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
