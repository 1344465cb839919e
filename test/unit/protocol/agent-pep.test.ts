import { describe, expect, it } from 'vitest';
import { AttemptFailure } from '../../../src/internal/failure.js';
import { hasDuplicateMemberNames, isIJsonValue } from '../../../src/internal/ijson.js';
import { parseResponse } from '../../../src/protocol/agent-pep.js';
import { checkContentType, parseRetryAfter } from '../../../src/transport/http.js';

describe('hasDuplicateMemberNames (RFC 7493 section 2.3)', () => {
  it.each([
    ['{"a":1,"a":2}', true],
    ['{"a":1,"\\u0061":2}', true],
    ['{"a":{"b":1,"b":2}}', true],
    ['[{"a":1},{"a":1}]', false],
    ['{"a":{"a":1}}', false],
    ['{"a":"\\"a\\":","b":1}', false],
    ['{"a":[1,{"a":2}],"b":{}}', false],
    ['{"x":[{"k":1,"k":1}]}', true],
    ['{"":1,"":2}', true],
    ['{"a\\\\":1,"a\\\\":2}', true],
    ['{}', false],
    ['"just a string"', false],
    ['[1,2,3]', false],
  ])('%s -> %s', (text, dup) => {
    JSON.parse(text);
    expect(hasDuplicateMemberNames(text)).toBe(dup);
  });
});

describe('isIJsonValue', () => {
  it('refuses unpaired surrogates (values and names) and non-finite numbers', () => {
    expect(isIJsonValue(JSON.parse('{"a":"\\ud800"}'))).toBe(false);
    expect(isIJsonValue(JSON.parse('{"\\udc00":1}'))).toBe(false);
    expect(isIJsonValue(JSON.parse('[1e400]'))).toBe(false);
    expect(isIJsonValue(JSON.parse('{"a":"\\ud83d\\ude00","b":[1.5,null,true]}'))).toBe(true);
  });
});

describe('parseResponse', () => {
  const enc = (s: string) => new TextEncoder().encode(s);
  it('accepts a decision and returns the raw object', () => {
    const { response, raw } = parseResponse(enc('{"verdict":"ALLOW","future":1}'));
    expect(response.verdict).toBe('ALLOW');
    expect(raw.future).toBe(1);
  });
  it.each([
    ['invalid UTF-8', new Uint8Array([0x7b, 0xff, 0x7d])],
    ['not JSON', enc('ALLOW')],
    ['an array', enc('[]')],
    ['duplicates', enc('{"verdict":"BLOCK","verdict":"ALLOW"}')],
    ['a wrong type', enc('{"verdict":"ALLOW","latches":"a"}')],
    ['transformedArgs null', enc('{"verdict":"WARN","transformedArgs":null}')],
  ])('refuses %s with invalid_response', (_l, bytes) => {
    try {
      parseResponse(bytes);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(AttemptFailure);
      expect((e as AttemptFailure).code).toBe('invalid_response');
    }
  });
});

describe('checkContentType', () => {
  it.each(['application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON;charset="UTF-8"'])(
    'accepts %s',
    (ct) => {
      expect(() => checkContentType(ct)).not.toThrow();
    },
  );
  it.each([
    undefined,
    'text/json',
    'application/jsonx',
    'application/problem+json',
    'application/json; charset=utf-16',
  ])('refuses %s', (ct) => {
    expect(() => checkContentType(ct)).toThrow(AttemptFailure);
  });
});

describe('parseRetryAfter (RFC 9110 section 10.2.3)', () => {
  it('reads delta-seconds and HTTP dates', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter('0')).toBe(0);
    const now = Date.parse('Sun, 29 Nov 2026 12:00:00 GMT');
    expect(parseRetryAfter('Sun, 29 Nov 2026 12:00:02 GMT', now)).toBe(2000);
    expect(parseRetryAfter('Sun, 29 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter('-1')).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });
});

describe('byte order mark', () => {
  it('a body starting with a BOM is invalid_response (RFC 8259 section 8.1: senders MUST NOT add one)', () => {
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode('{"verdict":"ALLOW"}')]);
    expect(() => parseResponse(bom)).toThrow(AttemptFailure);
  });
});
