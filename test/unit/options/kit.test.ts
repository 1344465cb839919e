/**
 * The one way option errors are made (src/options/kit.ts): a TypeError naming the path in
 * `err.option`, the message naming the option but never its value (CONTRACT.md section 2).
 */
import { describe, expect, it } from 'vitest';
import { optionError, refuseUnknownKeys } from '../../../src/options/kit.js';

function caught(f: () => void): TypeError & { option?: string } {
  try {
    f();
  } catch (e) {
    return e as TypeError & { option?: string };
  }
  throw new Error('expected a throw');
}

describe('optionError', () => {
  it('throws a TypeError with option = the path', () => {
    const e = caught(() => optionError('createPep', 'permits.keys', 'expected a public key'));
    expect(e).toBeInstanceOf(TypeError);
    expect(e.option).toBe('permits.keys');
  });
});

describe('refuseUnknownKeys', () => {
  const known = new Set(['a', 'b']);
  it('passes known keys', () => {
    expect(() => refuseUnknownKeys('x', { a: 1, b: 2 }, known)).not.toThrow();
  });

  it('names an unknown key, prefixed by the path of its object', () => {
    expect(caught(() => refuseUnknownKeys('x', { a: 1, c: 2 }, known)).option).toBe('c');
    expect(caught(() => refuseUnknownKeys('x', { c: 2 }, known, 'permits')).option).toBe('permits.c');
  });
});
