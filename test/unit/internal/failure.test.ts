/**
 * AttemptFailure (src/internal/failure.ts): the internal failure of an attempt or check. It never
 * leaves the client, so it captures no stack trace (a cost on every refused or failed attempt).
 */
import { describe, expect, it } from 'vitest';
import { AttemptFailure } from '../../../src/internal/failure.js';

describe('AttemptFailure', () => {
  it('carries its code, message, facts and cause, and is an Error named AttemptFailure', () => {
    const cause = new Error('connect ECONNREFUSED');
    const f = new AttemptFailure('pdp_status', 'PDP answered HTTP 503', { status: 503, retryAfter: '2' }, { cause });
    expect(f).toBeInstanceOf(Error);
    expect([f.name, f.code, f.message, f.status, f.retryAfter, f.errorCode, f.cause]).toEqual([
      'AttemptFailure',
      'pdp_status',
      'PDP answered HTTP 503',
      503,
      '2',
      undefined,
      cause,
    ]);
    expect(String(f)).toBe('AttemptFailure: PDP answered HTTP 503');
  });

  it('captures no stack frames, and leaves Error.stackTraceLimit as it was', () => {
    const before = Error.stackTraceLimit;
    const f = new AttemptFailure('pdp_unreachable', 'PDP request failed');
    expect(f.stack).toBe('AttemptFailure: PDP request failed');
    expect(Error.stackTraceLimit).toBe(before);
    expect(new Error('x').stack).toContain('failure.test.ts');
  });
});
