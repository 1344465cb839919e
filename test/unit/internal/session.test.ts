/**
 * THE session rule (src/internal/session.ts; CONTRACT.md sections 2, 8, 12 and 16): the per-call option,
 * then the host's thread id, then the adapter's `{ session }`, then the client's own (`withSession`, else
 * `createPep`). Every entry calls it; their own tests show they do (test/integration/adapters/sessions.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { sessionOf } from '../../../src/internal/session.js';

describe('sessionOf: the first source that names a session', () => {
  it.each([
    ['the per-call option over everything', { call: 'c', thread: 't', adapter: 'a', client: 'k' }, 'c'],
    [
      "the host's thread id over the adapter's option and the client's",
      { thread: 't', adapter: 'a', client: 'k' },
      't',
    ],
    ["the adapter's option over the client's", { adapter: 'a', client: 'k' }, 'a'],
    ["the client's (withSession's, else createPep's) last", { client: 'k' }, 'k'],
    ['none when no source names one', {}, undefined],
  ])('%s', (_rule, from, expected) => {
    expect(sessionOf(from)).toBe(expected);
  });

  it("a host's thread id: a finite number is its decimal text; blank, NaN, Infinity and non-strings are none", () => {
    expect(sessionOf({ thread: 42, client: 'k' })).toBe('42');
    for (const thread of ['', '   ', Number.NaN, Number.POSITIVE_INFINITY, {}, [], true, null]) {
      expect(sessionOf({ thread, client: 'k' })).toBe('k');
    }
  });

  it('a named per-call session is returned as given, never replaced by another source (the entry refuses a bad one)', () => {
    expect(sessionOf({ call: '', client: 'k' })).toBe('');
    expect(sessionOf({ call: '\ud800', client: 'k' })).toBe('\ud800');
    expect(sessionOf({ call: 7, client: 'k' })).toBe(7);
  });

  it('an absent per-call option (undefined or null) gives way', () => {
    expect(sessionOf({ call: undefined, thread: 't' })).toBe('t');
    expect(sessionOf({ call: null, client: 'k' })).toBe('k');
  });
});
