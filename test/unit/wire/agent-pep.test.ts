import canonicalize from 'canonicalize';
import { describe, expect, it } from 'vitest';
import { AttemptFailure } from '../../../src/internal/failure.js';
import { canonicalSnapshotJson } from '../../../src/permit/hash.js';
import { type AuthorizeRequest, encodeRequest, parseResponse } from '../../../src/wire/agent-pep.js';
import { hasDuplicateMemberNames, isIJsonValue } from '../../../src/wire/json.js';

describe('encodeRequest', () => {
  const args = { orderId: 'ord_1', amount: 129.5, nested: { z: 1, a: [true, null, 'q"'] } };
  const base: AuthorizeRequest = { agentId: 'a', session: 's', stage: 'action', requestId: 'r1', tool: 'refund', args };

  it('with the args text the client hashed: the same request, the args as RFC 8785 text', () => {
    for (const req of [base, { ...base, simulated: true as const }]) {
      const body = encodeRequest(req, canonicalSnapshotJson(args));
      expect(JSON.parse(body)).toEqual(JSON.parse(JSON.stringify(req)));
      expect(body).toContain(`"args":${canonicalize(args)}`);
    }
  });

  it('without it (or with no args): JSON.stringify of the request', () => {
    expect(encodeRequest(base)).toBe(JSON.stringify(base));
    const text: AuthorizeRequest = { agentId: 'a', session: 's', stage: 'input', requestId: 'r1', content: 'hi' };
    expect(encodeRequest(text, '{}')).toBe(JSON.stringify(text));
  });
});

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
    ['sessionLabels not an array', enc('{"verdict":"ALLOW","sessionLabels":"untrusted"}')],
    ['sessionLabels with a non-string', enc('{"verdict":"ALLOW","sessionLabels":["a",1]}')],
    ['sessionLabels null', enc('{"verdict":"ALLOW","sessionLabels":null}')],
    ['grants not an array', enc('{"verdict":"ALLOW","grants":"pay"}')],
    ['grants with a non-string', enc('{"verdict":"ALLOW","grants":["pay",1]}')],
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

describe('sessionLabels', () => {
  const enc = (s: string) => new TextEncoder().encode(s);
  it('is carried as sent, and absent when the PDP sends none', () => {
    expect(parseResponse(enc('{"verdict":"ALLOW","sessionLabels":["b","a"]}')).response.sessionLabels).toEqual([
      'b',
      'a',
    ]);
    expect(parseResponse(enc('{"verdict":"ALLOW"}')).response).not.toHaveProperty('sessionLabels');
  });
});

describe('byte order mark', () => {
  it('a body starting with a BOM is invalid_response (RFC 8259 section 8.1: senders MUST NOT add one)', () => {
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode('{"verdict":"ALLOW"}')]);
    expect(() => parseResponse(bom)).toThrow(AttemptFailure);
  });
});
