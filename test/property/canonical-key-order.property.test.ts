/**
 * RFC 8785 section 3.2.3, keys sorted by UTF-16 code units: canonicalSnapshotJson (which sorts up to 16
 * keys in place and more with Array.prototype.sort) against canonicalize and an explicit code-unit
 * comparison, for key sets built to stress that order (surrogate pairs against U+E000..U+FFFF, shared
 * prefixes, the empty key, integer-like keys that V8 lists first), at every size from 0 to 40 keys and
 * at 15, 16 and 17 exactly.
 */
import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { snapshotJsonObject } from '../../src/internal/json.js';
import { canonicalSnapshotJson } from '../../src/permit/hash.js';

const unit = fc.constantFrom(
  'a',
  'b',
  'A',
  '0',
  '1',
  '9',
  '-',
  '.',
  '\ue000',
  '\uffff',
  '\u{10000}',
  '\u{10ffff}',
  '😀',
  'é',
  '\u0000',
  '~',
);
const key = fc.oneof(
  fc.string({ unit, maxLength: 4 }),
  fc.nat({ max: 5000 }).map(String),
  fc.constantFrom(
    '',
    '0',
    '00',
    '-0',
    '1.0',
    '4294967294',
    '4294967295',
    '4294967296',
    '9007199254740993',
    '__proto__',
  ),
);

function objectOf(entries: [string, number][]): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const [k, v] of entries)
    Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  return o;
}

const byCodeUnits = (a: string, b: string) => {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = a.charCodeAt(i) - b.charCodeAt(i);
    if (d !== 0) return d;
  }
  return a.length - b.length;
};

describe('canonicalSnapshotJson key order equals canonicalize', () => {
  it.each([
    [0, 40],
    [15, 15],
    [16, 16],
    [17, 17],
  ])('%i to %i keys', (minLength, maxLength) => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(key, fc.integer()), { selector: ([k]) => k, minLength, maxLength, size: 'max' }),
        (entries) => {
          const snap = snapshotJsonObject(objectOf(entries));
          const text = canonicalSnapshotJson(snap);
          expect(text).toBe(canonicalize(snap));
          const expectedKeys = entries.map(([k]) => k).sort(byCodeUnits);
          expect(text).toBe(
            `{${expectedKeys.map((k) => `${JSON.stringify(k)}:${JSON.stringify(snap[k])}`).join(',')}}`,
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it('surrogate pairs sort below U+E000..U+FFFF, at 16 and 17 keys', () => {
    for (const n of [16, 17]) {
      const keys = Array.from({ length: n - 3 }, (_, i) => String(i * 7));
      keys.push('\uffff', '\u{10000}', '\ue000');
      const snap = snapshotJsonObject(objectOf(keys.reverse().map((k, i) => [k, i])));
      expect(canonicalSnapshotJson(snap)).toBe(canonicalize(snap));
    }
  });
});
