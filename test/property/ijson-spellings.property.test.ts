/**
 * RFC 7493 for every spelling JSON.parse accepts: ijsonProblem (which counts members) on random JSON
 * texts (random whitespace, \u escapes in either case, short escapes, raw lone surrogates), keys that
 * JS treats specially (__proto__, array-index-like, Object.prototype names), numbers beyond double
 * range, unpaired surrogates in names and values. ijsonProblem must equal both an exact model and the
 * slow reference (hasDuplicateMemberNames, then isIJsonValue).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hasDuplicateMemberNames, ijsonProblem, isIJsonValue } from '../../src/wire/json.js';

type Node =
  | { kind: 'obj'; members: [string, Node][] }
  | { kind: 'arr'; items: Node[] }
  | { kind: 'str'; value: string }
  | { kind: 'num'; text: string }
  | { kind: 'lit'; text: 'true' | 'false' | 'null' };

const unit = fc.constantFrom(
  'a',
  'A',
  '"',
  '\\',
  '/',
  ':',
  ',',
  '{',
  '}',
  '[',
  ']',
  'u',
  ' ',
  '\n',
  '\u0000',
  '\u001f',
  'é',
  '\u2028',
  '😀',
  '\ud800',
  '\udc00',
  '\uffff',
  '0',
  '1',
);
const special = fc.constantFrom(
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'length',
  '0',
  '1',
  '01',
  '1.0',
  '-0',
  '-1',
  '4294967294',
  '4294967295',
  '9007199254740993',
  '1e3',
  '',
  ':',
  '"',
  '\\',
  '\\"',
  '":',
  '\\:',
);
const name = fc.oneof(fc.string({ unit, maxLength: 4 }), special, fc.constantFrom('a', 'b'));
const numText = fc.oneof(
  fc.constantFrom(
    '0',
    '-0',
    '1',
    '0.5',
    '1E+2',
    '1e-400',
    '1e400',
    '-1e400',
    '1.7976931348623157e308',
    '1.7976931348623159e308',
    '123456789012345678901234567890',
  ),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
);

const node: fc.Memo<Node> = fc.memo((depth) => {
  const leaf = fc.oneof(
    fc.string({ unit, maxLength: 5 }).map((value) => ({ kind: 'str' as const, value })),
    numText.map((text) => ({ kind: 'num' as const, text })),
    fc.constantFrom('true', 'false', 'null').map((text) => ({ kind: 'lit' as const, text }) as Node),
  );
  if (depth <= 1) return leaf;
  return fc.oneof(
    leaf,
    fc.array(fc.tuple(name, node(depth - 1)), { maxLength: 5 }).map((members) => ({ kind: 'obj' as const, members })),
    fc.array(node(depth - 1), { maxLength: 3 }).map((items) => ({ kind: 'arr' as const, items })),
  );
});

/** A source of choices for the renderer (whitespace, how each character is spelled). */
type Rng = () => number;
const WS = ['', '', '', ' ', '\n', '\t', '\r', ' \n '];
const SHORT: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '/': '\\/',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

function ws(r: Rng): string {
  return WS[Math.floor(r() * WS.length)] as string;
}

function str(s: string, r: Rng): string {
  let out = '"';
  for (const ch of s.split('')) {
    const c = ch.charCodeAt(0);
    const must = c < 0x20 || ch === '"' || ch === '\\';
    const pick = r();
    if (!must && pick < 0.5)
      out += ch; // raw (a raw lone surrogate too: JSON.parse accepts it)
    else if (SHORT[ch] !== undefined && pick < 0.75) out += SHORT[ch];
    else {
      const hex = c.toString(16).padStart(4, '0');
      out += `\\u${pick < 0.9 ? hex : hex.toUpperCase()}`;
    }
  }
  return `${out}"`;
}

function render(n: Node, r: Rng): string {
  switch (n.kind) {
    case 'str':
      return str(n.value, r);
    case 'num':
    case 'lit':
      return n.text;
    case 'arr':
      return `[${ws(r)}${n.items.map((x) => `${render(x, r)}${ws(r)}`).join(`,${ws(r)}`)}]`;
    case 'obj':
      return `{${ws(r)}${n.members.map(([k, v]) => `${str(k, r)}${ws(r)}:${ws(r)}${render(v, r)}${ws(r)}`).join(`,${ws(r)}`)}}`;
  }
}

function modelDup(n: Node): boolean {
  if (n.kind === 'arr') return n.items.some(modelDup);
  if (n.kind !== 'obj') return false;
  const names = n.members.map(([k]) => k);
  return new Set(names).size !== names.length || n.members.some(([, v]) => modelDup(v));
}

function modelBad(n: Node): boolean {
  if (n.kind === 'str') return !n.value.isWellFormed();
  if (n.kind === 'num') return !Number.isFinite(Number(n.text));
  if (n.kind === 'arr') return n.items.some(modelBad);
  if (n.kind === 'obj') return n.members.some(([k, v]) => !k.isWellFormed() || modelBad(v));
  return false;
}

function reference(text: string, parsed: unknown): 'duplicate' | 'value' | undefined {
  if (hasDuplicateMemberNames(text)) return 'duplicate';
  return isIJsonValue(parsed) ? undefined : 'value';
}

function mulberry(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('ijsonProblem against a model and the slow reference (adversarial spellings)', () => {
  it('every generated text', () => {
    fc.assert(
      fc.property(node(5), fc.integer(), (n, seed) => {
        const text = render(n, mulberry(seed));
        const parsed: unknown = JSON.parse(text);
        const expected = modelDup(n) ? 'duplicate' : modelBad(n) ? 'value' : undefined;
        expect(reference(text, parsed)).toBe(expected);
        expect(ijsonProblem(text, parsed)).toBe(expected);
      }),
      { numRuns: Number(process.env.IJSON_RUNS ?? 5000) },
    );
  });

  it('the generator makes duplicates and value problems often', () => {
    const s = fc.sample(node(5), 3000);
    expect(s.filter(modelDup).length).toBeGreaterThan(100);
    expect(s.filter((n) => !modelDup(n) && modelBad(n)).length).toBeGreaterThan(100);
  });

  it('a duplicate, or none, at every depth around the 512 limit, with and without a bad value', () => {
    for (let d = 505; d <= 520; d++) {
      for (const inner of ['1', '1e400', '"\\ud800"']) {
        for (const [dup, want] of [
          ['{"a":1,"a":2}', 'duplicate'],
          ['{"a":1,"b":2}', undefined],
        ] as const) {
          const text = `${'{"x":['.repeat(d)}${dup},${inner}${']}'.repeat(d)}`;
          const parsed: unknown = JSON.parse(text);
          const ref = reference(text, parsed);
          expect(ijsonProblem(text, parsed)).toBe(ref);
          if (want === 'duplicate') expect(ref).toBe('duplicate');
        }
      }
    }
  });

  it('huge texts: one duplicate among 20 000 members, colons in strings or not', () => {
    for (const v of ['1', '":::"', '"\\":"']) {
      const members = Array.from({ length: 20_000 }, (_, i) => `"k${i}":${v}`);
      const clean = `{${members.join(',')}}`;
      expect(ijsonProblem(clean, JSON.parse(clean))).toBeUndefined();
      const dup = `{${members.join(',')},"k19999":${v}}`;
      expect(ijsonProblem(dup, JSON.parse(dup))).toBe('duplicate');
      const escaped = `{${members.join(',')},"\\u006b0":${v}}`;
      expect(ijsonProblem(escaped, JSON.parse(escaped))).toBe('duplicate');
    }
  });

  it('a realm whose Object.prototype and Array.prototype have enumerable properties', () => {
    const O = Object.prototype as Record<string, unknown>;
    const A = Array.prototype as unknown as Record<string, unknown>;
    O.a = 1;
    O['0'] = { b: 1 };
    A['0'] = { c: 1 };
    A.extra = 1;
    try {
      for (const [text, want] of [
        ['{"a":1,"a":2}', 'duplicate'],
        ['{"0":1,"0":2}', 'duplicate'],
        ['{"b":[],"c":{}}', undefined],
        ['[[],{}]', undefined],
        ['{"x":[{"a":1},{"a":1,"\\u0061":2}]}', 'duplicate'],
      ] as const) {
        expect(ijsonProblem(text, JSON.parse(text))).toBe(want);
      }
    } finally {
      delete O.a;
      delete O['0'];
      delete A['0'];
      delete A.extra;
    }
  });
});
