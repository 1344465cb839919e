/**
 * CONTRACT.md section 3, rule 3: no content coding. A `Content-Encoding` other than `identity`, or a
 * `Transfer-Encoding` other than `chunked`, is `invalid_response` and is not retried, even when the raw
 * bytes of the body are a valid ALLOW: the body is refused, never decoded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PolicyDecision } from '../../../src/index.js';
import { decideOnce } from '../../support/clients.js';
import { allowBody, ok, type RawRequest, type RawServer, rawResponse, startRawServer } from './raw-server.js';

let pdp: RawServer;

beforeAll(async () => {
  pdp = await startRawServer(() => {});
});
afterAll(async () => {
  await pdp.close();
});

function ask(): Promise<PolicyDecision> {
  return decideOnce({ pdpUrl: pdp.url, agentId: 'a', session: 's', timeoutMs: 2000 }, (pep) => pep.checkInput('hello'));
}

/** The body in HTTP/1.1 chunked framing, in two chunks. */
function chunked(body: string): string {
  const half = Math.floor(body.length / 2);
  const a = body.slice(0, half);
  const b = body.slice(half);
  return `${a.length.toString(16)}\r\n${a}\r\n${b.length.toString(16)}\r\n${b}\r\n0\r\n\r\n`;
}

const chunkedResponse = (te: string) => (req: RawRequest) =>
  rawResponse(
    ['HTTP/1.1 200 OK', 'Content-Type: application/json', `Transfer-Encoding: ${te}`],
    chunked(allowBody(req)),
  );

describe('Content-Encoding other than identity is refused, not decoded', () => {
  it.each([['gzip'], ['br'], ['deflate'], ['zstd'], ['x-gzip'], ['gzip, br'], ['identity, gzip']])(
    'Content-Encoding: %s over a raw ALLOW -> invalid_response, one attempt',
    async (coding) => {
      const before = pdp.requests;
      pdp.responder = (req, socket) => socket.write(ok(allowBody(req), [`Content-Encoding: ${coding}`]));
      const d = await ask();
      expect(d.verdict).toBe('BLOCK');
      expect(d.synthesized?.code).toBe('invalid_response');
      expect(d.synthesized?.attempts).toBe(1);
      expect(pdp.requests - before).toBe(1);
    },
  );

  it('two Content-Encoding lines (identity, then gzip) -> invalid_response', async () => {
    pdp.responder = (req, socket) =>
      socket.write(ok(allowBody(req), ['Content-Encoding: identity', 'Content-Encoding: gzip']));
    const d = await ask();
    expect(d.synthesized?.code).toBe('invalid_response');
  });

  it('Content-Encoding: identity is no coding: the ALLOW stands', async () => {
    pdp.responder = (req, socket) => socket.write(ok(allowBody(req), ['Content-Encoding: identity']));
    const d = await ask();
    expect(d.verdict).toBe('ALLOW');
  });
});

describe('Transfer-Encoding other than chunked is refused, not decoded', () => {
  it.each([['gzip, chunked'], ['deflate, chunked'], ['br, chunked']])(
    'Transfer-Encoding: %s over a raw chunked ALLOW -> invalid_response, one attempt',
    async (te) => {
      const before = pdp.requests;
      pdp.responder = (req, socket) => socket.write(chunkedResponse(te)(req));
      const d = await ask();
      expect(d.verdict).toBe('BLOCK');
      expect(d.synthesized?.code).toBe('invalid_response');
      expect(d.synthesized?.attempts).toBe(1);
      expect(pdp.requests - before).toBe(1);
    },
  );

  it('Transfer-Encoding: gzip (read to the close) -> invalid_response', async () => {
    pdp.responder = (req, socket) =>
      socket.end(
        rawResponse(['HTTP/1.1 200 OK', 'Content-Type: application/json', 'Transfer-Encoding: gzip'], allowBody(req)),
      );
    const d = await ask();
    expect(d.synthesized?.code).toBe('invalid_response');
  });

  it('Transfer-Encoding: chunked alone is framing, not coding: the ALLOW stands', async () => {
    pdp.responder = (req, socket) => socket.write(chunkedResponse('chunked')(req));
    const d = await ask();
    expect(d.verdict).toBe('ALLOW');
    expect(d.synthesized).toBeUndefined();
  });
});
