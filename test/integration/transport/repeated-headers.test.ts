/**
 * CONTRACT.md section 3, rule 3: a PDP answer has one `Content-Type`. A header sent twice is read as
 * sent, both values, whichever transport reads it (undici's pool, or node:http for the hook, whose
 * parsed `headers` would keep the first Content-Type and drop the second: this file runs in the
 * `node-http` project too).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PolicyDecision } from '../../../src/index.js';
import { decideOnce } from '../../support/clients.js';
import { allowBody, type RawServer, rawResponse, startRawServer } from './raw-server.js';

let pdp: RawServer;

beforeAll(async () => {
  pdp = await startRawServer(() => {});
});
afterAll(async () => {
  await pdp.close();
});

function ask(): Promise<PolicyDecision> {
  return decideOnce({ pdpUrl: pdp.url, agentId: 'a', session: 's', timeoutMs: 2000, retries: 0 }, (pep) =>
    pep.checkInput('hello'),
  );
}

describe('a header sent twice is read as sent', () => {
  it.each([
    ['Content-Type twice, the first JSON', ['Content-Type: application/json', 'Content-Type: text/html']],
    ['Content-Type twice, both JSON', ['Content-Type: application/json', 'Content-Type: application/json']],
    [
      'Content-Encoding identity, then gzip',
      ['Content-Type: application/json', 'Content-Encoding: identity', 'Content-Encoding: gzip'],
    ],
  ])('%s over a raw ALLOW -> invalid_response', async (_label, lines) => {
    pdp.responder = (req, socket) => {
      const body = allowBody(req);
      socket.write(rawResponse(['HTTP/1.1 200 OK', ...lines, `Content-Length: ${Buffer.byteLength(body)}`], body));
    };
    const d = await ask();
    expect(d.verdict).toBe('BLOCK');
    expect(d.synthesized?.code).toBe('invalid_response');
  });

  it('one Content-Type over the same raw ALLOW is an ALLOW (the cases above fail on the repeat alone)', async () => {
    pdp.responder = (req, socket) => {
      const body = allowBody(req);
      socket.write(
        rawResponse(
          ['HTTP/1.1 200 OK', 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`],
          body,
        ),
      );
    };
    expect((await ask()).verdict).toBe('ALLOW');
  });
});
