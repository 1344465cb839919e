/** The retry policy, driven through an injected attempt function (no network). */
import { describe, expect, it } from 'vitest';
import { AttemptFailure } from '../../src/internal/failure.js';
import { backoffMs, withRetries } from '../../src/retry.js';

const fail = (retryable: boolean, retryAfterMs?: number) =>
  new AttemptFailure('pdp_status', 'x', retryable, 503, retryAfterMs);

describe('backoffMs', () => {
  it('is at most 100 x 2^(n-1) ms, jittered from 0', () => {
    for (const n of [1, 2, 3, 4]) {
      expect(backoffMs(n, undefined, 100, () => 0)).toBe(0);
      expect(backoffMs(n, undefined, 100, () => 0.999999)).toBeLessThanOrEqual(100 * 2 ** (n - 1));
      expect(backoffMs(n, undefined, 100, () => 0.999999)).toBeGreaterThanOrEqual(100 * 2 ** (n - 1) - 1);
    }
  });
  it('uses Retry-After when it is longer', () => {
    expect(backoffMs(1, 5000, 100, () => 0.5)).toBe(5000);
    expect(backoffMs(3, 10, 100, () => 0.5)).toBe(200);
  });
});

describe('withRetries', () => {
  const plan = (retries: number, deadlineInMs = 10_000) => ({
    retries,
    deadlineAt: performance.now() + deadlineInMs,
    signal: new AbortController().signal,
    random: () => 0,
  });

  it('retries only retryable failures, at most `retries` times', async () => {
    let calls = 0;
    await expect(
      withRetries(async () => {
        calls++;
        throw fail(true);
      }, plan(2)),
    ).rejects.toBeInstanceOf(AttemptFailure);
    expect(calls).toBe(3);
    calls = 0;
    await expect(
      withRetries(async () => {
        calls++;
        throw fail(false);
      }, plan(5)),
    ).rejects.toBeInstanceOf(AttemptFailure);
    expect(calls).toBe(1);
  });

  it('passes attempt numbers and returns the first success', async () => {
    const seen: number[] = [];
    const r = await withRetries(async (n) => {
      seen.push(n);
      if (n < 3) throw fail(true);
      return 'ok';
    }, plan(4));
    expect(r).toBe('ok');
    expect(seen).toEqual([1, 2, 3]);
  });

  it('ends at once with the last failure when the wait would pass the deadline', async () => {
    let calls = 0;
    const t0 = performance.now();
    const err = await withRetries(
      async () => {
        calls++;
        throw fail(true, 60_000);
      },
      plan(3, 1000),
    ).catch((e: unknown) => e);
    expect((err as AttemptFailure).code).toBe('pdp_status');
    expect(calls).toBe(1);
    expect(performance.now() - t0).toBeLessThan(500);
  });

  it('does not retry non-AttemptFailure errors', async () => {
    let calls = 0;
    await expect(
      withRetries(async () => {
        calls++;
        throw new Error('bug');
      }, plan(3)),
    ).rejects.toThrow('bug');
    expect(calls).toBe(1);
  });
});
