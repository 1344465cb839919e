/**
 * The one JSON body decoder (src/wire/json.ts `decodeJsonBody`) and its callers: one UTF-8 rule, one
 * byte-order-mark rule (refused, RFC 8259 section 8.1), one I-JSON rule (RFC 7493), whoever reads.
 */
import { describe, expect, it } from 'vitest';
import { parseJsonObject } from '../../../packages/dev-pdp/src/http.js';
import { AttemptFailure } from '../../../src/internal/failure.js';
import { decodeJsonObject } from '../../../src/wire/agent-pep.js';
import { decodeJsonBody } from '../../../src/wire/json.js';

const bytes = (s: string) => Buffer.from(s, 'utf8');
const BOM = '\ufeff';

describe('decodeJsonBody', () => {
  it.each([
    ['a byte-order mark', bytes(`${BOM}{"a":1}`), 'json'],
    ['invalid UTF-8', Buffer.from([0x7b, 0xff, 0x7d]), 'utf8'],
    ['not JSON', bytes('{"a":'), 'json'],
    ['a member name twice', bytes('{"a":1,"a":2}'), 'duplicate'],
    ['an unpaired surrogate', bytes('{"a":"\\ud800"}'), 'value'],
  ])('refuses %s', (_label, body, problem) => {
    const d = decodeJsonBody(body);
    expect(d.ok).toBe(false);
    if (!d.ok) expect(d.problem).toBe(problem);
  });

  it('decodes an I-JSON value with its text', () => {
    expect(decodeJsonBody(bytes('{"a":[1,"x"]}'))).toEqual({ ok: true, value: { a: [1, 'x'] }, text: '{"a":[1,"x"]}' });
  });
});

describe('one BOM rule for every reader', () => {
  it('the client: invalid_response', () => {
    expect(() => decodeJsonObject(bytes(`${BOM}{"verdict":"ALLOW"}`))).toThrow(AttemptFailure);
  });

  it('the dev PDP: 400 bad_request', () => {
    let err: unknown;
    try {
      parseJsonObject(bytes(`${BOM}{"agentId":"a"}`));
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ status: 400, code: 'bad_request' });
  });
});
