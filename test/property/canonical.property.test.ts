/**
 * The act_hash fast path (`canonicalSnapshotJson`, `actionHashOfSnapshot`) against the reference
 * RFC 8785 implementation (`canonicalize`): the same text and the same hash for any snapshot.
 */
import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { snapshotJson, snapshotJsonObject } from '../../src/internal/json.js';
import { actionHash, actionHashOfSnapshot, canonicalSnapshotJson, referenceActionHash } from '../../src/permit/hash.js';

/** Keys that sort differently by UTF-16 code units than by code points, and keys JS treats specially. */
const key = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc.string({
    unit: fc.constantFrom('a', 'B', 'é', '€', '😀', 'ｆ', '\u{10000}', '\uffff', '"', '\\', '\n'),
    maxLength: 4,
  }),
  fc.constantFrom('__proto__', 'toJSON', 'constructor', 'length', '0', '1', '10', '-0', ''),
);
/** Numbers where serialization is easy to get wrong. */
const number = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.constantFrom(0, -0, 1e21, 1e-7, 1.5e-7, -1e21, 9007199254740991, 5e-324, 1.7976931348623157e308, 0.1, 100, 1e20),
);
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    number,
    fc.string({ unit: 'binary', maxLength: 12 }),
    fc.array(tie('value'), { maxLength: 4 }),
    tie('object'),
  ),
  object: fc.array(fc.tuple(key, tie('value')), { maxLength: 5 }).map((entries) => {
    const o: Record<string, unknown> = {};
    for (const [k, v] of entries)
      Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
    return o;
  }),
}));

describe('canonicalSnapshotJson equals canonicalize (RFC 8785) for every snapshot', () => {
  it('any JSON value', () => {
    fc.assert(
      fc.property(json.value, (value) => {
        let snap: unknown;
        try {
          snap = snapshotJson(value);
        } catch {
          return; // not JSON (a lone surrogate): refused before any hash
        }
        expect(canonicalSnapshotJson(snap)).toBe(canonicalize(snap));
      }),
      { numRuns: 2000 },
    );
  });

  it('actionHashOfSnapshot equals the reference act_hash, and actionHash agrees', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 8 }), json.object, (tool, args) => {
        let snap: Record<string, unknown>;
        try {
          snap = snapshotJsonObject(args);
        } catch {
          return;
        }
        expect(actionHashOfSnapshot(tool, snap)).toBe(referenceActionHash(tool, snap));
      }),
      { numRuns: 1000 },
    );
  });

  it('the numbers RFC 8785 spells out (appendix B) and -0', () => {
    const cases: [number, string][] = [
      [-0, '0'],
      [1e21, '1e+21'],
      [1e20, '100000000000000000000'],
      [1.5e-7, '1.5e-7'],
      [1e-6, '0.000001'],
      [5e-324, '5e-324'],
      [333333333.3333333, '333333333.3333333'],
      [-1.7976931348623157e308, '-1.7976931348623157e+308'],
    ];
    for (const [n, text] of cases) expect([canonicalSnapshotJson(n), canonicalize(n)]).toEqual([text, text]);
  });

  it('keys sort by UTF-16 code units, not code points', () => {
    const snap = snapshotJsonObject({ '\uffff': 1, '\u{10000}': 2, a: 3 });
    expect(canonicalSnapshotJson(snap)).toBe('{"a":3,"\u{10000}":2,"\uffff":1}');
    expect(canonicalSnapshotJson(snap)).toBe(canonicalize(snap));
    expect(actionHash('t', { '\uffff': 1 })).toBe(referenceActionHash('t', { '\uffff': 1 }));
  });
});

/** The snapshot as it was first written: every key through defineProperty (the reference for the plain-assignment fast path). */
function referenceSnapshot(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(referenceSnapshot);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value)) {
    const v = referenceSnapshot((value as Record<string, unknown>)[k]);
    Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** Own keys, descriptors and prototypes, all the way down. */
function shape(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return Object.is(value, -0) ? '-0' : value;
  if (Array.isArray(value)) return ['array', value.map(shape)];
  return [
    Object.getPrototypeOf(value) === Object.prototype,
    Reflect.ownKeys(value).map((k) => {
      const d = Object.getOwnPropertyDescriptor(value, k) as PropertyDescriptor;
      return [k, d.enumerable, d.writable, d.configurable, shape(d.value)];
    }),
  ];
}

describe('snapshotJson equals the defineProperty-everywhere snapshot', () => {
  it('same own keys in the same order, same descriptors, same prototypes, at every depth', () => {
    fc.assert(
      fc.property(json.value, (value) => {
        let snap: unknown;
        try {
          snap = snapshotJson(value);
        } catch {
          return;
        }
        expect(shape(snap)).toEqual(shape(referenceSnapshot(value)));
      }),
      { numRuns: 1000 },
    );
  });
});
