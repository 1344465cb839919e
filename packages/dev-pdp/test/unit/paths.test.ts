/**
 * Dotted `args.` paths of the dev PDP's policy (packages/dev-pdp/src/paths.ts; CONTRACT.md section 6): read by
 * `when` through own properties and array indexes only, written by `setArgs` without prototype changes.
 */
import { describe, expect, it } from 'vitest';
import { isPlainObject, lookup, setPath } from '../../src/paths.js';

describe('lookup', () => {
  const args = { to: [{ domain: 'example.com' }], amount: 5, nested: { a: { b: null } } };

  it('walks own properties and decimal array indexes', () => {
    expect(lookup(args, ['to', '0', 'domain'])).toEqual({ found: true, value: 'example.com' });
    expect(lookup(args, ['nested', 'a', 'b'])).toEqual({ found: true, value: null });
    expect(lookup(args, [])).toEqual({ found: true, value: args });
  });

  it.each([
    ['a missing key', ['nope']],
    ['an index past the end', ['to', '1']],
    ['a non-decimal index', ['to', '00']],
    ['a negative index', ['to', '-1']],
    ['length of an array', ['to', 'length']],
    ['the prototype chain', ['toString']],
    ['__proto__', ['__proto__']],
    ['into a scalar', ['amount', 'x']],
  ])('%s: not found', (_label, path) => {
    expect(lookup(args, path).found).toBe(false);
  });

  it('never walks into a class instance', () => {
    expect(lookup({ d: new Date(0) } as never, ['d', 'getTime']).found).toBe(false);
  });

  it('undefined args: only the empty path is found', () => {
    expect(lookup(undefined, ['a']).found).toBe(false);
  });
});

describe('setPath', () => {
  it('sets a copy of the value, creating objects as needed and replacing non-objects on the way', () => {
    const args: Record<string, unknown> = { a: 1, list: [1] };
    const value = { deep: ['x'] };
    setPath(args, ['a', 'b', 'c'], value);
    setPath(args, ['list', 'x'], 2);
    expect(args).toEqual({ a: { b: { c: { deep: ['x'] } } }, list: { x: 2 } });
    value.deep.push('changed');
    expect((args.a as { b: { c: { deep: string[] } } }).b.c.deep).toEqual(['x']);
  });

  it('a __proto__ segment becomes an own data property, never the prototype', () => {
    const args: Record<string, unknown> = {};
    setPath(args, ['__proto__', 'polluted'], true);
    expect(Object.getPrototypeOf(args)).toBe(Object.prototype);
    expect(Object.hasOwn(args, '__proto__')).toBe(true);
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });
});

describe('isPlainObject', () => {
  it('true for literals, JSON.parse output and null-prototype objects; false otherwise', () => {
    expect(isPlainObject({})).toBe(true);
    expect(isPlainObject(JSON.parse('{}'))).toBe(true);
    expect(isPlainObject(Object.create(null))).toBe(true);
    for (const v of [null, [], new Date(), new Map(), 'x', 1]) expect(isPlainObject(v)).toBe(false);
  });
});
