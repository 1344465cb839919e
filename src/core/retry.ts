/**
 * Retry rules (docs/fail-closed.md, "Retries"): the only p-retry import. The transport reports what
 * happened on the wire ({@link AttemptFailure} facts); this module alone decides what is retried, how
 * long to wait (a jittered backoff, or the PDP's `Retry-After` when longer), and never waits past the
 * deadline.
 * @internal
 */
import pRetry from 'p-retry';
import { AttemptFailure } from '../internal/failure.js';
import { DEFAULTS } from '../options/pep.js';

/**
 * HTTP statuses that are retried: 408 Request Timeout, 429 Too Many Requests, 502 Bad Gateway,
 * 503 Service Unavailable, 504 Gateway Timeout. Every other status but 200 (a 3xx included) ends the
 * decision at once as `pdp_status`.
 */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 429, 502, 503, 504]);

/**
 * Error codes of a connection or read that failed before a whole response came: connect errors and
 * resets, and the header/body timeouts of a caller's dispatcher. Anything else (a closed pool, a
 * malformed response) is not retried.
 */
export const RETRYABLE_ERROR_CODES: ReadonlySet<string> = new Set([
  // could not connect
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  // reset before a whole response
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
  // a caller's dispatcher timing out one attempt
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  // the fetch transport on a runtime whose network errors carry no code (workerd, Deno, Bun): a
  // request that failed with no response, as a refused connect or a reset does
  'FETCH_FAILED',
]);

/**
 * Whether a failed attempt may be retried: a retryable status ({@link RETRYABLE_STATUSES}), a connect
 * error or reset ({@link RETRYABLE_ERROR_CODES}), or a per-attempt timeout (`attemptTimeoutMs`).
 * A failed check of a whole response (`invalid_response`, `ambiguous_decision`), the deadline, the
 * caller's abort and `close()` are never retried.
 * @param error anything an attempt threw
 * @returns true only for an {@link AttemptFailure} whose facts say it was transient
 */
export function isRetryable(error: unknown): boolean {
  if (!(error instanceof AttemptFailure)) return false;
  if (error.status !== undefined) return RETRYABLE_STATUSES.has(error.status);
  if (error.abortCause !== undefined) return error.abortCause === 'attempt_timeout';
  return error.errorCode !== undefined && RETRYABLE_ERROR_CODES.has(error.errorCode);
}

const DELTA_SECONDS = /^\d+$/;
// An HTTP-date starts with its day's name (IMF-fixdate `Sun, `, RFC 850 `Sunday, `, asctime `Sun `);
// anything else (e.g. "-1", which Date.parse reads as a year) is ignored.
const HTTP_DATE_START = /^[A-Za-z]{3,9},? /;

/**
 * Parses `Retry-After` (RFC 9110 section 10.2.3): delta-seconds or an HTTP-date.
 * @param value the header as received (a repeated header, an array, is ignored)
 * @param now the current time in epoch milliseconds
 * @returns milliseconds from `now` (0 for a date in the past), or undefined when absent or unreadable
 */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  if (typeof value !== 'string') return undefined;
  const v = value.trim();
  if (DELTA_SECONDS.test(v)) return Number(v) * 1000;
  if (!HTTP_DATE_START.test(v)) return undefined;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/**
 * The wait before retry `n` (1-based): uniformly jittered in [0, base x 2^(n-1)) ms ("full jitter"),
 * or the PDP's `Retry-After` when that is longer.
 * @param n the retry's number, from 1
 * @param retryAfterMs the PDP's `Retry-After` in milliseconds, if it sent one
 * @param baseMs the backoff base in milliseconds (100 by default)
 * @param random a source of randomness in [0, 1)
 * @returns milliseconds to wait
 */
export function backoffMs(n: number, retryAfterMs: number | undefined, baseMs: number, random: () => number): number {
  const jittered = Math.floor(random() * baseMs * 2 ** (n - 1));
  return retryAfterMs !== undefined && retryAfterMs > jittered ? retryAfterMs : jittered;
}

/** Retry settings of one decision. */
export interface RetryPlan {
  /** Extra attempts after the first. */
  retries: number;
  /** `performance.now()` value at which the decision's deadline fires. */
  deadlineAt: number;
  /**
   * Aborts waiting and further attempts (the decision's signal), or a function that makes it: it is
   * needed only once a first attempt has failed, so the common path never builds one.
   */
  signal: AbortSignal | (() => AbortSignal);
  /** Backoff base in milliseconds. @defaultValue DEFAULTS.backoffBaseMs */
  baseMs?: number;
  /** Source of randomness in [0, 1), for tests. @defaultValue Math.random */
  random?: () => number;
  /** Current epoch milliseconds, for reading an HTTP-date `Retry-After`, for tests. @defaultValue Date.now */
  now?: () => number;
}

/**
 * Waits `ms` milliseconds, or rejects with the signal's reason as soon as it aborts (the timer is
 * cleared). What `node:timers/promises` does, on every runtime (workerd and Vercel Edge have no
 * Node built-ins).
 */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function signalOf(plan: RetryPlan): AbortSignal {
  return typeof plan.signal === 'function' ? plan.signal() : plan.signal;
}

/**
 * After a failed first attempt: throws `error` unless it is retryable, else waits and runs attempts 2
 * and on under `plan`, until one succeeds, fails with an error that is not {@link isRetryable}, the
 * retries run out, or the next wait would end past the deadline (then the last failure is thrown at
 * once). The caller runs the first attempt itself, outside p-retry and any async frame (`exchange.ts`,
 * by callback): most decisions succeed at once, and p-retry's per-call setup would be pure overhead.
 * @param error what the first attempt failed with
 * @param attempt one attempt; `n` counts from 1 (this calls it from 2)
 * @param plan retries (after the first attempt), deadline, signal and (for tests) randomness
 * @returns the first successful attempt's value
 * @throws AttemptFailure the last attempt's failure (or `error` when it is not retryable)
 */
export async function retryAfterFirst<T>(
  error: unknown,
  attempt: (n: number) => Promise<T>,
  plan: RetryPlan,
): Promise<T> {
  const base = plan.baseMs ?? DEFAULTS.backoffBaseMs;
  const random = plan.random ?? Math.random;
  const now = plan.now ?? Date.now;
  // Waits before retry `n`, or throws `error` when that wait would end past the deadline.
  const wait = async (n: number, error: AttemptFailure): Promise<void> => {
    const ms = backoffMs(n, parseRetryAfter(error.retryAfter, now()), base, random);
    if (performance.now() + ms >= plan.deadlineAt) throw error;
    if (ms > 0) await sleep(ms, signalOf(plan));
  };
  if (!isRetryable(error)) throw error;
  await wait(1, error as AttemptFailure);
  return pRetry((n) => attempt(n + 1), {
    retries: plan.retries - 1,
    // p-retry's own delay (randomized x1..x2) would overshoot the contract's bound; the wait is ours.
    minTimeout: 0,
    maxTimeout: 0,
    factor: 1,
    randomize: false,
    signal: signalOf(plan),
    onFailedAttempt: async ({ error, attemptNumber, retriesLeft }) => {
      if (!isRetryable(error) || retriesLeft === 0) return;
      await wait(attemptNumber + 1, error as AttemptFailure);
    },
    shouldRetry: ({ error }) => isRetryable(error),
  });
}
