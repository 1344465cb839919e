/**
 * CONTRACT.md section 3, rule 3, on the headers (src/transport/headers.ts): `application/json` with at
 * most one `charset`, that one `utf-8`; no content coding. Everything refused is `invalid_response`.
 */
import { describe, expect, it } from 'vitest';
import { AttemptFailure } from '../../../src/internal/failure.js';
import { checkContentType, checkNoContentCoding } from '../../../src/transport/headers.js';

function codeOf(f: () => void): string | undefined {
  try {
    f();
    return undefined;
  } catch (e) {
    expect(e).toBeInstanceOf(AttemptFailure);
    return (e as AttemptFailure).code;
  }
}

describe('checkContentType', () => {
  it.each([
    'application/json',
    'application/json; charset=utf-8',
    'application/json;charset=utf-8',
    'APPLICATION/JSON;charset="UTF-8"',
    'application/json; charset=UTF-8',
    'Application/Json ; charset=utf-8',
    'application/json; foo=bar',
    'application/json; foo="a; charset=utf-16"',
    'application/json; charset=utf-8; foo="charset=latin1"',
  ])('accepts %j', (ct) => {
    expect(codeOf(() => checkContentType(ct))).toBeUndefined();
  });

  it.each([
    [undefined, 'absent'],
    [['application/json', 'application/json'], 'sent twice'],
    ['', 'empty'],
    ['text/json', 'another type'],
    ['text/html', 'another type'],
    ['application/jsonx', 'another subtype'],
    ['application/problem+json', 'a suffix type'],
    ['application/json-seq', 'another subtype'],
    ['application/*', 'a range'],
    ['application/json; charset=utf-16', 'another charset'],
    ['application/json; charset=utf8', 'a charset that is not the name utf-8'],
    ['application/json; charset=latin1', 'another charset'],
    ['application/json; charset=""', 'an empty charset'],
    ['application/json; charset=utf-8; charset=utf-16', 'two charsets, last one wrong'],
    ['application/json; charset=utf-16; charset=utf-8', 'two charsets, first one wrong'],
    ['application/json; charset=utf-8; charset=utf-8', 'the same charset twice'],
    ['application/json; charset=utf-8; CHARSET=utf-8', 'two charsets in different case'],
    ['application/json; foo=1; foo=2', 'any parameter twice'],
    ['application/json; x="; charset=utf-8"; charset=utf-16', 'a quoted decoy before a wrong charset'],
    ['application/json;', 'an empty parameter'],
    ['application/json; charset', 'a parameter without a value'],
    ['application/json; charset=utf-8 utf-16', 'a value with a space'],
    ['application/json; charset="utf-8', 'an unclosed quote'],
    ['application/json, text/html', 'a list'],
    ['application/json text/html', 'garbage after the type'],
    ['application /json', 'space inside the type'],
    ['json', 'no subtype'],
  ])('refuses %j (%s)', (ct, _why) => {
    expect(codeOf(() => checkContentType(ct as string | string[] | undefined))).toBe('invalid_response');
  });
});

describe('checkNoContentCoding', () => {
  it.each([
    [{}],
    [{ 'content-encoding': 'identity' }],
    [{ 'content-encoding': 'IDENTITY' }],
    [{ 'transfer-encoding': 'chunked' }],
    [{ 'transfer-encoding': 'Chunked', 'content-encoding': 'identity' }],
  ])('accepts %j', (headers) => {
    expect(codeOf(() => checkNoContentCoding(headers))).toBeUndefined();
  });

  it.each([
    [{ 'content-encoding': 'gzip' }],
    [{ 'content-encoding': 'br' }],
    [{ 'content-encoding': 'deflate' }],
    [{ 'content-encoding': 'zstd' }],
    [{ 'content-encoding': 'gzip, br' }],
    [{ 'content-encoding': 'identity, gzip' }],
    [{ 'content-encoding': '' }],
    [{ 'content-encoding': ['identity', 'gzip'] }],
    [{ 'content-encoding': ['identity', 'identity'] }],
    [{ 'transfer-encoding': 'gzip, chunked' }],
    [{ 'transfer-encoding': 'deflate, chunked' }],
    [{ 'transfer-encoding': 'gzip' }],
    [{ 'transfer-encoding': 'identity' }],
    [{ 'transfer-encoding': ['chunked', 'chunked'] }],
  ])('refuses %j', (headers) => {
    expect(codeOf(() => checkNoContentCoding(headers))).toBe('invalid_response');
  });
});
