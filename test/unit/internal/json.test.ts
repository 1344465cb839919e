/**
 * Args snapshots (src/internal/json.ts): a deep copy of a plain object of JSON values, refusing what
 * JSON cannot carry faithfully (CONTRACT.md section 2, `invalid_request`), naming the kind, never the value.
 */
import { describe, expect, it } from 'vitest';
import {
  deepFreeze,
  MAX_JSON_DEPTH,
  NotJsonError,
  snapshotJson,
  snapshotJsonObject,
} from '../../../src/internal/json.js';

describe('snapshotJsonObject', () => {
  it('copies deeply: later changes to the input do not reach the snapshot', () => {
    const args = { a: { b: [1, { c: 'x' }] }, n: null, t: true };
    const snap = snapshotJsonObject(args);
    expect(snap).toEqual(args);
    (args.a.b[1] as { c: string }).c = 'changed';
    expect(snap).toEqual({ a: { b: [1, { c: 'x' }] }, n: null, t: true });
  });

  it('keeps a "__proto__" key as data, never as the prototype', () => {
    const snap = snapshotJsonObject(JSON.parse('{"__proto__":{"polluted":true}}') as Record<string, unknown>);
    expect(Object.getPrototypeOf(snap)).toBe(Object.prototype);
    expect(Object.hasOwn(snap, '__proto__')).toBe(true);
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it('keeps every key as an own data property even when Object.prototype has a setter or a read-only value by that name', () => {
    let setterCalls = 0;
    Object.defineProperty(Object.prototype, 'pollutedSetter', {
      set() {
        setterCalls++;
      },
      configurable: true,
    });
    Object.defineProperty(Object.prototype, 'pollutedReadOnly', { value: 'x', writable: false, configurable: true });
    try {
      const input = JSON.parse('{"pollutedSetter":1,"pollutedReadOnly":2,"constructor":3,"toString":4,"a":5}');
      const snap = snapshotJsonObject(input);
      expect(setterCalls).toBe(0);
      for (const key of ['pollutedSetter', 'pollutedReadOnly', 'constructor', 'toString', 'a']) {
        expect(Object.getOwnPropertyDescriptor(snap, key)).toEqual({
          value: input[key],
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      expect(Object.keys(snap)).toEqual(Object.keys(input));
    } finally {
      delete (Object.prototype as Record<string, unknown>).pollutedSetter;
      delete (Object.prototype as Record<string, unknown>).pollutedReadOnly;
    }
  });

  it('accepts a null-prototype object', () => {
    const o = Object.create(null) as Record<string, unknown>;
    o.k = 1;
    expect(snapshotJsonObject(o)).toEqual({ k: 1 });
  });

  const cycle: Record<string, unknown> = {};
  const sparse: unknown[] = [1];
  sparse[2] = 3;
  cycle.self = cycle;
  const deepCycle: Record<string, unknown> = { ok: 1 };
  deepCycle.list = [{ ok: 2 }, { back: { to: deepCycle } }];
  it.each<[string, unknown]>([
    ['not an object', 'x'],
    ['null', null],
    ['an array at the top', [1]],
    ['a Date at the top', new Date(0)],
    ['undefined inside', { a: undefined }],
    ['a BigInt', { a: 1n }],
    ['NaN', { a: Number.NaN }],
    ['Infinity', { a: Number.POSITIVE_INFINITY }],
    ['a function', { a: () => 1 }],
    ['a symbol value', { a: Symbol('s') }],
    ['a symbol key', { [Symbol('s')]: 1 }],
    ['a cycle', cycle],
    ['a cycle through an array, three levels down', deepCycle],
    ['a class instance (Map)', { a: new Map() }],
    ['a Date inside', { a: new Date(0) }],
    ['a sparse array', { a: sparse }],
    ['an array subclass', { a: new (class extends Array {})() }],
    ['a lone surrogate in a string', { a: '\uD800' }],
    ['a lone surrogate in a key', { '\uDC00': 1 }],
  ])('%s: NotJsonError (a TypeError)', (_label, value) => {
    expect(() => snapshotJsonObject(value)).toThrow(NotJsonError);
    expect(() => snapshotJsonObject(value)).toThrow(TypeError);
  });

  it(`nesting deeper than ${MAX_JSON_DEPTH} is refused, not recursed into`, () => {
    let deep: Record<string, unknown> = {};
    const top = deep;
    for (let i = 0; i < MAX_JSON_DEPTH + 1; i++) {
      const next = {};
      deep.d = next;
      deep = next;
    }
    expect(() => snapshotJsonObject(top)).toThrow(NotJsonError);
  });

  it('the same object twice (not a cycle) is copied twice', () => {
    const shared = { x: 1 };
    expect(snapshotJsonObject({ a: shared, b: shared })).toEqual({ a: { x: 1 }, b: { x: 1 } });
  });

  it('the message names the kind, never the value', () => {
    try {
      snapshotJsonObject({ secret: Symbol('TOP-SECRET') });
      expect.unreachable();
    } catch (e) {
      expect((e as Error).message).not.toContain('TOP-SECRET');
    }
  });
});

describe('snapshotJson and deepFreeze', () => {
  it('snapshotJson takes any JSON value', () => {
    expect(snapshotJson([1, 'a', null])).toEqual([1, 'a', null]);
    expect(snapshotJson('s')).toBe('s');
    expect(() => snapshotJson(undefined)).toThrow(NotJsonError);
  });

  it('deepFreeze freezes every level', () => {
    const v = deepFreeze({ a: { b: [1, { c: 2 }] } });
    expect(Object.isFrozen(v)).toBe(true);
    expect(Object.isFrozen(v.a.b)).toBe(true);
    expect(Object.isFrozen(v.a.b[1])).toBe(true);
  });

  it('deepFreeze ends at a cycle, and leaves the prototype and what hangs off it alone', () => {
    const cyclic: Record<string, unknown> = { list: [] };
    (cyclic.list as unknown[]).push(cyclic, { x: cyclic });
    expect(Object.isFrozen(deepFreeze(cyclic))).toBe(true);
    expect(Object.isFrozen((cyclic.list as unknown[])[1])).toBe(true);
    const inherited = { kept: true };
    const child = Object.create({ inherited }) as Record<string, unknown>;
    child.own = { y: 1 };
    deepFreeze(child);
    expect(Object.isFrozen(child.own)).toBe(true);
    expect(Object.isFrozen(inherited)).toBe(false);
  });
});
