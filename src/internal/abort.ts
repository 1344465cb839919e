/**
 * Aborting one decision: why it was aborted ({@link AbortCause}), the one table that maps each cause
 * to its fail-closed code and message ({@link ABORT_CAUSES}), and a one-shot abort handle that the
 * transport and the retry loop read. Not public.
 * @internal
 */
import type { FailClosedCode } from '../decision.js';

/**
 * Why an in-flight attempt or a decision was aborted:
 * - `deadline`: the decision's `timeoutMs` passed;
 * - `attempt_timeout`: one attempt's `attemptTimeoutMs` passed (retried while the deadline allows);
 * - `caller`: the caller's `signal` aborted;
 * - `closed`: `pep.close()` was called.
 */
export type AbortCause = 'deadline' | 'attempt_timeout' | 'caller' | 'closed';

/**
 * The one table from an {@link AbortCause} to the code and message of the synthesized BLOCK it gives
 * (docs/fail-closed.md, rule 1). Messages name no content, args or secret.
 */
export const ABORT_CAUSES: Readonly<Record<AbortCause, { readonly code: FailClosedCode; readonly message: string }>> =
  Object.freeze({
    deadline: Object.freeze({ code: 'pdp_timeout', message: 'PDP decision deadline passed' }),
    attempt_timeout: Object.freeze({ code: 'pdp_timeout', message: 'PDP attempt timed out' }),
    caller: Object.freeze({ code: 'aborted', message: 'aborted by the caller' }),
    closed: Object.freeze({ code: 'pdp_unreachable', message: 'client closed' }),
  });

/** The reason an {@link Abort} (or a signal) is aborted with: it carries the {@link AbortCause}. */
export class AbortReason extends Error {
  override readonly name = 'AbortReason';
  /**
   * @param cause_ why the attempt or decision was aborted
   */
  constructor(readonly cause_: AbortCause) {
    super(`aborted: ${cause_}`);
  }
}

/** The {@link AbortCause} an abort `reason` carries; anything else is the caller's. */
export function abortCauseOf(reason: unknown): AbortCause {
  return reason instanceof AbortReason ? reason.cause_ : 'caller';
}

/** The part of `AbortSignal` that the transport and the retry loop read. An `AbortSignal` is one. */
export interface AbortLike {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * A flag, a reason and a short listener list: what a decision needs from an `AbortController`,
 * without an `EventTarget` per decision (adding and removing one `abort` listener on an
 * `AbortSignal` costs about 3 microseconds on Node 20, several times a whole JSON parse of the answer).
 * Listeners run once, in order, when `abort` is first called; a throwing listener cannot stop the others.
 */
export class Abort implements AbortLike {
  aborted = false;
  reason: unknown = undefined;
  /** The one listener most decisions have (the attempt's), then the rest: no array for one. */
  #one: (() => void) | undefined;
  #rest: (() => void)[] | undefined;
  #signal: AbortSignal | undefined;

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.aborted) return;
    if (this.#one === undefined && this.#rest === undefined) this.#one = listener;
    else if (this.#rest) this.#rest.push(listener);
    else this.#rest = [listener];
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    if (this.#one === listener) {
      this.#one = undefined;
      return;
    }
    const list = this.#rest;
    if (!list) return;
    const i = list.indexOf(listener);
    if (i >= 0) list.splice(i, 1);
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const one = this.#one;
    const rest = this.#rest;
    this.#one = undefined;
    this.#rest = undefined;
    // In the order they were added: the one slot holds the first listener while it is there.
    for (const listener of one ? [one, ...(rest ?? [])] : (rest ?? [])) {
      try {
        listener();
      } catch {
        // one listener cannot keep the others from running
      }
    }
  }

  /** A real `AbortSignal` that follows this handle, made on first use (only a retry wait needs one). */
  get signal(): AbortSignal {
    if (!this.#signal) {
      const ctrl = new AbortController();
      if (this.aborted) ctrl.abort(this.reason);
      else this.addEventListener('abort', () => ctrl.abort(this.reason));
      this.#signal = ctrl.signal;
    }
    return this.#signal;
  }
}
