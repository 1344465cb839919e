/**
 * The retry rules of CONTRACT.md section 3 (src/core/retry.ts), driven through an injected attempt function
 * and injected randomness (no network): what retries, Retry-After, backoff bounds, the deadline.
 */
import { describe, expect, it } from 'vitest';
import {
  backoffMs,
  isRetryable,
  parseRetryAfter,
  RETRYABLE_ERROR_CODES,
  RETRYABLE_STATUSES,
  type RetryPlan,
  retryAfterFirst,
} from '../../../src/core/retry.js';
import { type AttemptFacts, AttemptFailure } from '../../../src/internal/failure.js';

const failure = (facts: AttemptFacts) => new AttemptFailure('pdp_status', 'x', facts);
const status503 = (retryAfter?: string) => failure({ status: 503, retryAfter });

describe('retryable statuses: exactly 408, 429, 502, 503 and 504', () => {
  it('the table is the contract', () => {
    expect([...RETRYABLE_STATUSES].sort()).toEqual([408, 429, 502, 503, 504]);
  });
  it.each([408, 429, 502, 503, 504])('%i is retried', (status) => {
    expect(isRetryable(failure({ status }))).toBe(true);
  });
  it.each([100, 201, 204, 300, 301, 302, 303, 304, 307, 308, 400, 401, 403, 404, 409, 418, 425, 500, 501, 505, 599])(
    '%i is not',
    (status) => {
      expect(isRetryable(failure({ status }))).toBe(false);
    },
  );
  it('a status decides even when an error code came with it', () => {
    expect(isRetryable(failure({ status: 404, errorCode: 'ECONNRESET' }))).toBe(false);
  });
});

describe('retryable errors: connect errors, resets before a whole response, attempt timeouts', () => {
  it.each([
    'ECONNREFUSED',
    'ECONNRESET',
    'EPIPE',
    'ENOTFOUND',
    'EAI_AGAIN',
    'ETIMEDOUT',
    'UND_ERR_SOCKET',
    'UND_ERR_CONNECT_TIMEOUT',
    'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
    'UND_ERR_HEADERS_TIMEOUT',
    'UND_ERR_BODY_TIMEOUT',
  ])('%s is retried', (errorCode) => {
    expect(RETRYABLE_ERROR_CODES.has(errorCode)).toBe(true);
    expect(isRetryable(failure({ errorCode }))).toBe(true);
  });
  it.each(['UND_ERR_CLOSED', 'UND_ERR_DESTROYED', 'HPE_INVALID_CONSTANT', 'UND_ERR_INFO', 'ERR_WHATEVER'])(
    '%s is not',
    (errorCode) => {
      expect(isRetryable(failure({ errorCode }))).toBe(false);
    },
  );
  it('an attempt timeout is retried; the deadline, the caller and close() are not', () => {
    expect(isRetryable(failure({ abortCause: 'attempt_timeout' }))).toBe(true);
    expect(isRetryable(failure({ abortCause: 'deadline' }))).toBe(false);
    expect(isRetryable(failure({ abortCause: 'caller' }))).toBe(false);
    expect(isRetryable(failure({ abortCause: 'closed' }))).toBe(false);
  });
  it('a failed check of a whole response, or anything that is not an AttemptFailure, is not retried', () => {
    expect(isRetryable(new AttemptFailure('invalid_response', 'x'))).toBe(false);
    expect(isRetryable(new AttemptFailure('ambiguous_decision', 'x'))).toBe(false);
    expect(isRetryable(new Error('bug'))).toBe(false);
    expect(isRetryable(Object.assign(new Error('x'), { status: 503 }))).toBe(false);
  });
});

describe('Retry-After (RFC 9110 section 10.2.3): delta-seconds or an HTTP-date', () => {
  const now = Date.parse('Sun, 29 Nov 2026 12:00:00 GMT');
  it.each([
    ['3', 3000],
    ['0', 0],
    [' 2 ', 2000],
    ['120', 120_000],
  ])('seconds %j -> %i ms', (value, ms) => {
    expect(parseRetryAfter(value, now)).toBe(ms);
  });
  it.each([
    ['Sun, 29 Nov 2026 12:00:02 GMT', 2000], // IMF-fixdate
    ['Sunday, 29-Nov-26 12:00:05 GMT', 5000], // RFC 850
    ['Sun, 29 Nov 2026 11:00:00 GMT', 0], // in the past: no wait
  ])('date %j -> %i ms', (value, ms) => {
    expect(parseRetryAfter(value, now)).toBe(ms);
  });
  it('an asctime date (no zone, read as local time)', () => {
    expect(parseRetryAfter('Sun Nov 29 12:00:01 2026', new Date(2026, 10, 29, 12, 0, 0).getTime())).toBe(1000);
  });
  it.each([undefined, '', 'soon', '-1', '1.5', '0x10', '1e3', ['3', '4']])('%j is ignored', (value) => {
    expect(parseRetryAfter(value as string | string[] | undefined, now)).toBeUndefined();
  });
});

describe('backoff: jittered, at most 100 x 2^(n-1) ms', () => {
  it('stays in [0, 100 x 2^(n-1)) for every random in [0, 1)', () => {
    for (let n = 1; n <= 8; n++) {
      const bound = 100 * 2 ** (n - 1);
      for (const r of [0, 1e-9, 0.25, 0.5, 0.75, 0.999999, 1 - Number.EPSILON]) {
        const ms = backoffMs(n, undefined, 100, () => r);
        expect(ms).toBeGreaterThanOrEqual(0);
        expect(ms).toBeLessThan(bound);
        expect(Number.isInteger(ms)).toBe(true);
      }
      expect(backoffMs(n, undefined, 100, () => 0)).toBe(0);
      expect(backoffMs(n, undefined, 100, () => 0.5)).toBe(bound / 2);
    }
  });
  it('uses Retry-After when it is longer, the jittered wait when it is not', () => {
    expect(backoffMs(1, 5000, 100, () => 0.5)).toBe(5000);
    expect(backoffMs(3, 10, 100, () => 0.5)).toBe(200);
    expect(backoffMs(1, 0, 100, () => 0.5)).toBe(50);
  });
});

/**
 * The retry rules as the exchange runs them (src/core/exchange.ts, `Exchange.firstFailed`): the first
 * attempt on its own, then `retryAfterFirst` when there are retries.
 */
function withRetries<T>(attempt: (n: number) => Promise<T>, plan: RetryPlan): Promise<T> {
  return attempt(1).catch((error: unknown) =>
    plan.retries === 0 ? Promise.reject(error) : retryAfterFirst(error, attempt, plan),
  );
}

describe('retryAfterFirst, after a first attempt the exchange made', () => {
  const plan = (retries: number, deadlineInMs = 10_000, random: () => number = () => 0) => ({
    retries,
    deadlineAt: performance.now() + deadlineInMs,
    signal: new AbortController().signal,
    random,
  });

  it('retries only retryable failures, at most `retries` times', async () => {
    let calls = 0;
    await expect(
      withRetries(async () => {
        calls++;
        throw status503();
      }, plan(2)),
    ).rejects.toBeInstanceOf(AttemptFailure);
    expect(calls).toBe(3);
    calls = 0;
    await expect(
      withRetries(async () => {
        calls++;
        throw failure({ status: 307 });
      }, plan(5)),
    ).rejects.toBeInstanceOf(AttemptFailure);
    expect(calls).toBe(1);
  });

  it('with retries 0, one attempt whatever the failure', async () => {
    let calls = 0;
    await expect(
      withRetries(async () => {
        calls++;
        throw failure({ errorCode: 'ECONNREFUSED' });
      }, plan(0)),
    ).rejects.toBeInstanceOf(AttemptFailure);
    expect(calls).toBe(1);
  });

  it('passes attempt numbers and returns the first success', async () => {
    const seen: number[] = [];
    const r = await withRetries(async (n) => {
      seen.push(n);
      if (n < 3) throw failure({ errorCode: 'ECONNRESET' });
      return 'ok';
    }, plan(4));
    expect(r).toBe('ok');
    expect(seen).toEqual([1, 2, 3]);
  });

  it('draws one jittered wait per retry, with the retry number as exponent', async () => {
    let draws = 0;
    const r = await withRetries(
      async (n) => {
        if (n < 4) throw failure({ abortCause: 'attempt_timeout' });
        return n;
      },
      plan(5, 10_000, () => {
        draws++;
        return 0;
      }),
    );
    expect(r).toBe(4);
    expect(draws).toBe(3);
  });

  it('ends at once with the last failure when a Retry-After wait would pass the deadline', async () => {
    let calls = 0;
    const t0 = performance.now();
    const err = await withRetries(
      async () => {
        calls++;
        throw status503('60');
      },
      plan(3, 1000),
    ).catch((e: unknown) => e);
    expect((err as AttemptFailure).code).toBe('pdp_status');
    expect(calls).toBe(1);
    expect(performance.now() - t0).toBeLessThan(500);
  });

  it('reads an HTTP-date Retry-After against the injected clock', async () => {
    let calls = 0;
    const now = Date.parse('Sun, 29 Nov 2026 12:00:00 GMT');
    const err = await withRetries(
      async () => {
        calls++;
        throw status503('Sun, 29 Nov 2026 12:10:00 GMT');
      },
      { ...plan(3, 1000), now: () => now },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AttemptFailure);
    expect(calls).toBe(1);
  });

  it('a Retry-After of 0 retries at once', async () => {
    let calls = 0;
    const r = await withRetries(async () => {
      calls++;
      if (calls < 3) throw status503('0');
      return 'ok';
    }, plan(2));
    expect(r).toBe('ok');
    expect(calls).toBe(3);
  });

  it('does not retry errors that are not AttemptFailures', async () => {
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
