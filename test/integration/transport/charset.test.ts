/**
 * CONTRACT.md section 3, rule 3: the content type is exactly `application/json`, with at most one
 * `charset` parameter, and that `utf-8`. A charset hidden in a quoted parameter value does not count,
 * a repeated charset is refused whatever its order, and a malformed media type is refused. Every refusal
 * is `invalid_response`, not retried, even though each body is a valid ALLOW.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPep, type PolicyDecision } from '../../../src/index.js';
import { allowBody, ok, type RawServer, rawResponse, startRawServer } from './raw-server.js';

let pdp: RawServer;

beforeAll(async () => {
  pdp = await startRawServer(() => {});
});
afterAll(async () => {
  await pdp.close();
});

async function withContentType(type: string): Promise<PolicyDecision> {
  pdp.responder = (req, socket) => socket.write(ok(allowBody(req), [], type));
  const pep = createPep({ pdpUrl: pdp.url, agentId: 'a', session: 's', timeoutMs: 2000 });
  try {
    return await pep.checkInput('hello');
  } finally {
    await pep.close();
  }
}

describe('one charset, and only utf-8', () => {
  it.each([
    'application/json',
    'application/json; charset=utf-8',
    'application/json;charset=UTF-8',
    'application/json; charset="utf-8"',
    'application/json; profile="https://pdp.example/decision; charset=utf-16"',
  ])('%j: the ALLOW stands', async (type) => {
    const d = await withContentType(type);
    expect(d.verdict).toBe('ALLOW');
    expect(d.synthesized).toBeUndefined();
  });

  it.each([
    'application/json; charset=utf-8; charset=utf-16',
    'application/json; charset=utf-16; charset=utf-8',
    'application/json; charset=utf-8; Charset=utf-8',
    'application/json; x="; charset=utf-8"; charset=utf-16',
    'application/json; charset=utf-16',
    'application/json; charset=iso-8859-1',
    'application/json; charset=utf8',
  ])('%j -> invalid_response, one attempt', async (type) => {
    const before = pdp.requests;
    const d = await withContentType(type);
    expect(d.verdict).toBe('BLOCK');
    expect(d.synthesized?.code).toBe('invalid_response');
    expect(d.synthesized?.attempts).toBe(1);
    expect(pdp.requests - before).toBe(1);
  });
});

describe('exactly application/json, well formed', () => {
  it.each([
    'text/json',
    'application/problem+json',
    'application/json-patch+json',
    'application/json;',
    'application/json; charset',
    'application/json; charset="utf-8',
    'application/json, text/html',
    'application/json garbage',
  ])('%j -> invalid_response', async (type) => {
    const d = await withContentType(type);
    expect(d.synthesized?.code).toBe('invalid_response');
  });

  it('two Content-Type lines -> invalid_response', async () => {
    pdp.responder = (req, socket) => {
      const body = allowBody(req);
      socket.write(
        rawResponse(
          [
            'HTTP/1.1 200 OK',
            'Content-Type: application/json',
            'Content-Type: application/json; charset=utf-16',
            `Content-Length: ${body.length}`,
          ],
          body,
        ),
      );
    };
    const pep = createPep({ pdpUrl: pdp.url, agentId: 'a', session: 's', timeoutMs: 2000 });
    try {
      const d = await pep.checkInput('hello');
      expect(d.synthesized?.code).toBe('invalid_response');
    } finally {
      await pep.close();
    }
  });

  it('no Content-Type at all -> invalid_response', async () => {
    pdp.responder = (req, socket) => {
      const body = allowBody(req);
      socket.write(rawResponse(['HTTP/1.1 200 OK', `Content-Length: ${body.length}`], body));
    };
    const pep = createPep({ pdpUrl: pdp.url, agentId: 'a', session: 's', timeoutMs: 2000 });
    try {
      const d = await pep.checkInput('hello');
      expect(d.synthesized?.code).toBe('invalid_response');
    } finally {
      await pep.close();
    }
  });
});
