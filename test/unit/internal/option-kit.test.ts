/**
 * The one way option errors are made (src/internal/option-kit.ts): a TypeError naming the path in
 * `err.option`, the message naming the option but never its value (CONTRACT.md section 2).
 */
import { describe, expect, it } from 'vitest';
import {
  booleanOption,
  integerOption,
  MAX_MS,
  msOption,
  nonEmptyStringOption,
  optionError,
  optionTypeError,
  refuseUnknownKeys,
} from '../../../src/internal/option-kit.js';

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

describe('the one rule of each kind of option', () => {
  it('msOption: an integer from 1 to 600000 (THE limit of every millisecond option), else err.option', () => {
    expect(msOption('s', 'timeoutMs', undefined, 2000)).toBe(2000);
    expect(msOption('s', 'timeoutMs', 1, 2000)).toBe(1);
    expect(msOption('s', 'timeoutMs', MAX_MS, 2000)).toBe(600_000);
    for (const v of [0, -1, 1.5, Number.NaN, MAX_MS + 1, 2 ** 31, '100', null]) {
      expect(caught(() => msOption('s', 'a.timeoutMs', v, 1)).option, String(v)).toBe('a.timeoutMs');
    }
  });

  it('integerOption: within [min, max], else err.option', () => {
    expect(integerOption('s', 'retries', 0, 2, 0, 10)).toBe(0);
    for (const v of [-1, 11, 2.5, '3'])
      expect(caught(() => integerOption('s', 'retries', v, 2, 0, 10)).option).toBe('retries');
  });

  it('booleanOption and nonEmptyStringOption', () => {
    expect(booleanOption('s', 'simulated', undefined, false)).toBe(false);
    expect(caught(() => booleanOption('s', 'simulated', 'yes', false)).option).toBe('simulated');
    expect(nonEmptyStringOption('s', 'agentId', 'a')).toBe('a');
    for (const v of ['', '  ', 5, '\ud800'])
      expect(caught(() => nonEmptyStringOption('s', 'agentId', v)).option).toBe('agentId');
  });

  it('optionTypeError makes the error without throwing; option is enumerable', () => {
    const e = optionTypeError('startDevPdp', 'key', 'not a key');
    expect(e).toBeInstanceOf(TypeError);
    expect(Object.keys(e)).toContain('option');
    expect(e.option).toBe('key');
  });
});
