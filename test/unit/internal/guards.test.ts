/**
 * The shared type guards (src/internal/guards.ts): one plain-object test and one record test, each with
 * one meaning, and no second copy of either anywhere in src/ or the dev PDP (STYLE.md, "one isPlainObject").
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { isPlainObject, isRecord, isSessionId } from '../../../src/internal/guards.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

class Point {
  x = 1;
}

describe('isPlainObject: what an object literal, JSON.parse or Object.create(null) makes', () => {
  it('holds for a literal, a parsed object, a null-prototype object and a plain object of another realm', () => {
    for (const v of [{}, { a: 1 }, JSON.parse('{"a":[1]}'), Object.create(null), runInNewContext('({ a: 1 })')]) {
      expect(isPlainObject(v)).toBe(true);
    }
  });

  it('refuses arrays, class instances, Date, Map, boxed values, functions and non-objects', () => {
    const others = [[], [1], new Point(), new Date(0), new Map(), Object(1), () => 1, null, undefined, 'x', 1];
    for (const v of [...others, runInNewContext('[1]'), runInNewContext('new Date(0)')]) {
      expect(isPlainObject(v)).toBe(false);
    }
  });
});

describe('isRecord: any object but null and an array', () => {
  it('holds for plain objects and for class instances, Date and Map alike', () => {
    for (const v of [{}, Object.create(null), new Point(), new Date(0), new Map()]) expect(isRecord(v)).toBe(true);
  });

  it('refuses null, arrays and non-objects', () => {
    for (const v of [null, [], runInNewContext('[]'), 'x', 1, undefined, () => 1]) expect(isRecord(v)).toBe(false);
  });
});

describe('isSessionId', () => {
  it('holds for a non-empty, well-formed string that is not only white space', () => {
    expect(isSessionId('sess_1')).toBe(true);
    for (const v of ['', '  ', '\ud800', 1, undefined, null]) expect(isSessionId(v)).toBe(false);
  });
});

/** Every `.ts` file under `dir`, with its path. */
function sources(dir: string): Array<[string, string]> {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => [join(dir, f), readFileSync(join(ROOT, dir, f), 'utf8')]);
}

describe('one home', () => {
  it('no module of the SDK defines its own plain-object or record test', () => {
    const copies = /function\s+(isPlainObject|isPlain|isRecord)\s*\(/;
    const found = sources('src')
      .filter(([path, text]) => path !== join('src', 'internal', 'guards.ts') && copies.test(text))
      .map(([path]) => path);
    expect(found).toEqual([]);
  });

  it('the dev PDP takes its plain-object and record tests from the SDK (agent-pep/internal), not copies', () => {
    const found = sources('packages/dev-pdp/src')
      .filter(([, text]) => /function\s+(isPlainObject|isPlain|isRecord)\s*\(/.test(text))
      .map(([path]) => path);
    expect(found).toEqual([]);
  });
});
