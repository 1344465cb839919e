import { describe, expect, test } from 'vitest';
import { compileGlob } from '../../src/glob.js';

describe('tool globs match the whole name, * is any run (possibly empty)', () => {
  test.each([
    ['bank_*', 'bank_manager_transfer_funds', true],
    ['bank_*', 'banking', false],
    ['*transfer_funds*', 'bank_transfer_funds_now', true],
    ['*update*transaction*', 'update_scheduled_transaction', true],
    ['*update*transaction*', 'transaction_update', false],
    ['a*a', 'a', false], // the first and last parts may not overlap
    ['a*a', 'aa', true],
    ['*ab*ab*', 'abab', true],
    ['*ab*ab*', 'aba', false],
    ['x', 'x', true],
    ['x', 'xx', false],
    ['**', '', true],
  ])('%s vs %s -> %s', (pattern, name, expected) => {
    expect(compileGlob(pattern).test(name)).toBe(expected);
  });

  test('glob matching is linear: a 128 KB name against *update*transaction* answers', () => {
    // a backtracking regex (^.*update.*transaction.*$) took seconds on this input
    const name = 'update_'.repeat((128 * 1024) / 7);
    const glob = compileGlob('*update*transaction*');
    expect(glob.test(name)).toBe(false);
    expect(glob.test(`${name}transaction`)).toBe(true);
  });
});
