/**
 * I-JSON checks (RFC 7493) that `JSON.parse` does not make (src/wire/json.ts): duplicate member
 * names, lone surrogates, numbers out of double range. (Random inputs: test/property/ijson.property.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { hasDuplicateMemberNames, ijsonProblem, isIJsonValue } from '../../../src/wire/json.js';

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

describe('ijsonProblem (RFC 7493 sections 2.1 to 2.3, on a text and what it parsed to)', () => {
  const problem = (text: string) => ijsonProblem(text, JSON.parse(text));

  it.each([
    ['{"a":1,"a":2}', 'duplicate'],
    ['{"a":1,"\\u0061":2}', 'duplicate'],
    ['{"x":{"a":1,"a":2}}', 'duplicate'],
    ['[{"a":1},{"a":2}]', undefined],
    ['{"a":{"a":1}}', undefined],
    ['{"a\\"":1,"a":2}', undefined],
    ['{"a\\\\":1,"a\\\\":2}', 'duplicate'],
    ['{}', undefined],
    ['[]', undefined],
    ['"a:b"', undefined],
  ])('%s: %s', (text, expected) => {
    expect(problem(text)).toBe(expected);
  });

  it('counts only the colons between members: colons in names and values are not members', () => {
    expect(problem('{"iss":"https://pdp.example:8443","a:b":"c:d"}')).toBeUndefined();
    expect(problem('{"iss":"https://pdp.example:8443","iss":"x"}')).toBe('duplicate');
    expect(problem('{"a":"::::","a":1}')).toBe('duplicate');
    expect(problem('{"a":"\\u003a","b":"\\":"}')).toBeUndefined();
  });

  it('finds a duplicate even when Object.prototype has an enumerable property (a polluted realm)', () => {
    const key = 'ijsonPolluted';
    Object.defineProperty(Object.prototype, key, { value: 1, enumerable: true, configurable: true, writable: true });
    try {
      expect(problem('{"a":1,"a":2}')).toBe('duplicate');
      expect(problem('{"a":{"b":1,"b":2},"c":3}')).toBe('duplicate');
      expect(problem('{"a":1,"b":2}')).toBeUndefined();
    } finally {
      delete (Object.prototype as Record<string, unknown>)[key];
    }
  });

  it('a parsed __proto__ member is a member like any other', () => {
    expect(problem('{"__proto__":1,"a":2}')).toBeUndefined();
    expect(problem('{"__proto__":1,"__proto__":2}')).toBe('duplicate');
  });

  it('a lone surrogate or a number beyond double range is a value problem', () => {
    expect(problem('{"a":"\\ud800"}')).toBe('value');
    expect(problem('{"\\udc00":1}')).toBe('value');
    expect(problem('{"a":[1e400]}')).toBe('value');
    expect(problem(`${'['.repeat(600)}${']'.repeat(600)}`)).toBe('value');
  });

  it('duplicates are named first when a text has both problems (the order the client always reported)', () => {
    expect(problem('{"a":"\\ud800","a":1}')).toBe('duplicate');
    expect(problem('{"a":1,"a":1e400}')).toBe('duplicate');
  });
});
