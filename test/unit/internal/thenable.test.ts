/** isThenable (src/internal/thenable.ts): what interceptor answers and replay-store answers are awaited as. */
import { describe, expect, it } from 'vitest';
import { isThenable } from '../../../src/internal/thenable.js';

/** `value` with a `then` member: thenables are what is under test. */
const withThen = <T extends object>(value: T, then: unknown): T =>
  Object.defineProperty(value, 'then', { value: then, enumerable: true });

describe('isThenable (Promises/A+ section 1.2)', () => {
  it('a promise, or an object or function with a then method', () => {
    const fn = withThen(
      () => 1,
      () => undefined,
    );
    for (const v of [Promise.resolve(1), withThen({}, () => undefined), fn]) expect(isThenable(v)).toBe(true);
  });

  it('nothing else: primitives, null, an object whose then is not a function', () => {
    for (const v of [undefined, null, 0, 'then', true, withThen({}, 1), {}, []]) expect(isThenable(v)).toBe(false);
  });

  it('a then getter that throws throws to the caller (which treats it as the user code throwing)', () => {
    const v = Object.defineProperty({}, 'then', {
      get() {
        throw new Error('boom');
      },
    });
    expect(() => isThenable(v)).toThrow('boom');
  });
});
