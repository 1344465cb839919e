import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { actionHash } from '../../../src/permit/hash.js';

/** The expected act_hash, computed independently from a hand-written RFC 8785 string. */
function h(canonical: string): string {
  return createHash('sha256').update(Buffer.from(canonical, 'utf8')).digest('base64url');
}

describe('actionHash (CONTRACT section 4, RFC 8785)', () => {
  it('matches the hash of a hand-written canonical string (the contract example)', () => {
    expect(actionHash('refund_payment', { orderId: 'ord_1842', amount: 129.0 })).toBe(
      h('{"args":{"amount":129,"orderId":"ord_1842"},"tool":"refund_payment"}'),
    );
  });

  it('normalizes the tool name first', () => {
    const expected = h('{"args":{},"tool":"refund_payment"}');
    expect(actionHash('refundPayment', {})).toBe(expected);
    expect(actionHash(' Refund-Payment ', {})).toBe(expected);
  });

  it('is 43 base64url characters without padding', () => {
    expect(actionHash('t', { a: 1 })).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('does not depend on key order, at any depth', () => {
    const a = actionHash('t', { b: 1, a: { y: [1, 2], x: null } });
    const b = actionHash('t', { a: { x: null, y: [1, 2] }, b: 1 });
    expect(a).toBe(b);
    expect(a).toBe(h('{"args":{"a":{"x":null,"y":[1,2]},"b":1},"tool":"t"}'));
  });

  it('keeps array order', () => {
    expect(actionHash('t', { l: [1, 2] })).not.toBe(actionHash('t', { l: [2, 1] }));
  });

  it('nested objects and arrays', () => {
    const args = { z: { b: [1, { y: true, x: null }, 'q'], a: 's' }, e: [] as unknown[], o: {} };
    expect(actionHash('t', args)).toBe(
      h('{"args":{"e":[],"o":{},"z":{"a":"s","b":[1,{"x":null,"y":true},"q"]}},"tool":"t"}'),
    );
  });

  it('unicode strings are kept as UTF-8, not escaped; control characters are escaped', () => {
    expect(actionHash('t', { msg: 'café €😀' })).toBe(h('{"args":{"msg":"café €😀"},"tool":"t"}'));
    expect(actionHash('t', { s: 'a\nb\u0001"\\' })).toBe(h('{"args":{"s":"a\\nb\\u0001\\"\\\\"},"tool":"t"}'));
    // NFC and NFD spellings are different strings: no normalization of args
    expect(actionHash('t', { s: 'é' })).not.toBe(actionHash('t', { s: 'e\u0301' }));
  });

  it('sorts keys by UTF-16 code units', () => {
    const args = { ｆ: 1, '😀': 2, '€': 3, a: 4, B: 5 };
    expect(actionHash('t', args)).toBe(h('{"args":{"B":5,"a":4,"€":3,"😀":2,"ｆ":1},"tool":"t"}'));
  });

  it('1 and 1.0 hash alike; 1 and "1" do not', () => {
    expect(actionHash('t', { n: 1 })).toBe(actionHash('t', { n: 1.0 }));
    expect(actionHash('t', { n: 1 })).toBe(h('{"args":{"n":1},"tool":"t"}'));
    expect(actionHash('t', { n: 1 })).not.toBe(actionHash('t', { n: '1' }));
    expect(actionHash('t', { n: true })).not.toBe(actionHash('t', { n: 1 }));
    expect(actionHash('t', { n: null })).not.toBe(actionHash('t', {}));
  });

  it('numbers as ECMAScript serializes them: 1e21, 1e20, -0, fractions', () => {
    expect(actionHash('t', { n: 1e21 })).toBe(h('{"args":{"n":1e+21},"tool":"t"}'));
    expect(actionHash('t', { n: 1e20 })).toBe(h('{"args":{"n":100000000000000000000},"tool":"t"}'));
    expect(actionHash('t', { n: -0 })).toBe(actionHash('t', { n: 0 }));
    expect(actionHash('t', { n: -0 })).toBe(h('{"args":{"n":0},"tool":"t"}'));
    expect(actionHash('t', { n: 0.1 + 0.2 })).toBe(h('{"args":{"n":0.30000000000000004},"tool":"t"}'));
    expect(actionHash('t', { n: 1e-7 })).toBe(h('{"args":{"n":1e-7},"tool":"t"}'));
    expect(actionHash('t', { n: -1.5 })).toBe(h('{"args":{"n":-1.5},"tool":"t"}'));
  });

  it('one character or one type of difference changes the hash', () => {
    const base = actionHash('refund_payment', { orderId: 'ord_1842', amount: 129 });
    expect(actionHash('refund_payment', { orderId: 'ord_1843', amount: 129 })).not.toBe(base);
    expect(actionHash('refund_payment', { orderId: 'ord_1842', amount: '129' })).not.toBe(base);
    expect(actionHash('refund_payment', { orderId: 'ord_1842', amount: 129, note: '' })).not.toBe(base);
    expect(actionHash('refund_payments', { orderId: 'ord_1842', amount: 129 })).not.toBe(base);
  });

  it('a "__proto__" key is data, hashed like any other key', () => {
    const args = JSON.parse('{"__proto__":{"x":1},"a":2}') as Record<string, unknown>;
    expect(actionHash('t', args)).toBe(h('{"args":{"__proto__":{"x":1},"a":2},"tool":"t"}'));
  });

  it.each([
    ['undefined', { a: undefined }],
    ['NaN', { a: Number.NaN }],
    ['Infinity', { a: Number.POSITIVE_INFINITY }],
    ['BigInt', { a: 1n }],
    ['a function', { a: () => 1 }],
    ['a symbol', { a: Symbol('s') }],
    ['a Date', { a: new Date(0) }],
    ['a Map', { a: new Map() }],
    ['a lone surrogate', { a: '\uD800' }],
    ['a sparse array', { a: new Array<unknown>(3) }],
  ])('args containing %s: TypeError', (_name, args) => {
    expect(() => actionHash('t', args as Record<string, unknown>)).toThrow(TypeError);
  });

  it('args that are not a plain object, or a cycle: TypeError', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => actionHash('t', cyclic)).toThrow(TypeError);
    expect(() => actionHash('t', [] as unknown as Record<string, unknown>)).toThrow(TypeError);
    expect(() => actionHash('t', null as unknown as Record<string, unknown>)).toThrow(TypeError);
    expect(() => actionHash('t', 'x' as unknown as Record<string, unknown>)).toThrow(TypeError);
  });

  it('a tool name that normalizes to nothing: TypeError', () => {
    expect(() => actionHash('---', {})).toThrow(TypeError);
  });
});
