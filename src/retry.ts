/**
 * Retry policy (CONTRACT.md section 3): the only p-retry import. Retries only transient failures,
 * waits a jittered backoff or the PDP's `Retry-After` when longer, and never waits past the deadline.
 * @internal
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pRetry from 'p-retry';
import { AttemptFailure } from './internal/failure.js';
import { DEFAULTS } from './options.js';

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
}

/**
 * The wait before retry `n` (1-based): uniformly jittered in [0, base x 2^(n-1)] ms ("full jitter"),
 * or the PDP's `Retry-After` when that is longer.
 */
export function backoffMs(n: number, retryAfterMs: number | undefined, baseMs: number, random: () => number): number {
  const jittered = Math.floor(random() * baseMs * 2 ** (n - 1));
  return retryAfterMs !== undefined && retryAfterMs > jittered ? retryAfterMs : jittered;
}

function signalOf(plan: RetryPlan): AbortSignal {
  return typeof plan.signal === 'function' ? plan.signal() : plan.signal;
}

/**
 * Runs `attempt` until it succeeds, fails with a non-retryable {@link AttemptFailure}, runs out of
 * retries, or the next wait would end past the deadline (then the last failure is thrown at once).
 * @throws AttemptFailure the last attempt's failure
 */
export async function withRetries<T>(attempt: (n: number) => Promise<T>, plan: RetryPlan): Promise<T> {
  const base = plan.baseMs ?? DEFAULTS.backoffBaseMs;
  const random = plan.random ?? Math.random;
  if (plan.retries === 0) return attempt(1);
  // The first attempt runs outside p-retry: most decisions succeed at once, and p-retry's per-call
  // setup (options copy and checks, two more async frames) is then pure overhead on the hot path.
  try {
    return await attempt(1);
  } catch (error) {
    if (!(error instanceof AttemptFailure) || !error.retryable) throw error;
    const wait = backoffMs(1, error.retryAfterMs, base, random);
    if (performance.now() + wait >= plan.deadlineAt) throw error;
    if (wait > 0) await sleep(wait, undefined, { signal: signalOf(plan) });
  }
  return pRetry((n) => attempt(n + 1), {
    retries: plan.retries - 1,
    // p-retry's own delay (randomized x1..x2) would overshoot the contract's bound; the wait is ours.
    minTimeout: 0,
    maxTimeout: 0,
    factor: 1,
    randomize: false,
    signal: signalOf(plan),
    onFailedAttempt: async ({ error, attemptNumber, retriesLeft }) => {
      if (!(error instanceof AttemptFailure) || !error.retryable || retriesLeft === 0) return;
      const wait = backoffMs(attemptNumber + 1, error.retryAfterMs, base, random);
      if (performance.now() + wait >= plan.deadlineAt) throw error;
      if (wait > 0) await sleep(wait, undefined, { signal: signalOf(plan) });
    },
    shouldRetry: ({ error }) => error instanceof AttemptFailure && error.retryable,
  });
}
