/**
 * I-JSON checks (RFC 7493) that `JSON.parse` does not make (src/internal/ijson.ts): duplicate member
 * names, lone surrogates, numbers out of double range. (Random inputs: test/property/ijson.property.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { hasDuplicateMemberNames, isIJsonValue } from '../../../src/internal/ijson.js';

describe('hasDuplicateMemberNames (RFC 7493 section 2.3)', () => {
  it.each([
    ['{"a":1,"a":2}', true],
    ['{"a":1,"\\u0061":2}', true],
    ['{"x":{"a":1,"a":2}}', true],
    ['[{"a":1},{"a":2}]', false],
    ['{"a":{"a":1}}', false],
    ['{"a":"a","b":"a"}', false],
    ['{"a\\"":1,"a":2}', false],
    ['{"a\\\\":1,"a\\\\":2}', true],
    ['["a","a"]', false],
    ['{}', false],
  ])('%s: %s', (text, dup) => {
    JSON.parse(text); // every case is valid JSON
    expect(hasDuplicateMemberNames(text)).toBe(dup);
  });
});

describe('isIJsonValue (RFC 7493 sections 2.1, 2.2)', () => {
  it('true for well-formed strings and finite numbers, at any depth', () => {
    expect(isIJsonValue(JSON.parse('{"a":[1,"x",{"b":null,"c":true}]}'))).toBe(true);
  });

  it('false for a lone surrogate in a value or a name', () => {
    expect(isIJsonValue(JSON.parse('{"a":"\\ud800"}'))).toBe(false);
    expect(isIJsonValue(JSON.parse('{"\\udc00":1}'))).toBe(false);
    expect(isIJsonValue(JSON.parse('["\\ud800"]'))).toBe(false);
  });

  it('false for a number beyond double range (JSON.parse gives Infinity)', () => {
    expect(isIJsonValue(JSON.parse('{"a":1e400}'))).toBe(false);
  });

  it('false past 512 levels of nesting', () => {
    expect(isIJsonValue(JSON.parse(`${'['.repeat(600)}${']'.repeat(600)}`))).toBe(false);
  });
});
