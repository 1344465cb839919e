/**
 * One attempt is one request on the wire, and retries are the PEP's own (CONTRACT.md section 3,
 * "Retries": at most `retries` extra attempts). A caller's dispatcher that re-sends a request by itself
 * (undici's retry interceptor, allowed to retry POST) has the re-send refused before a byte is written.
 */
import { Agent, type Dispatcher, interceptors } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPep } from '../../../src/index.js';
import { type RawServer, rawResponse, startRawServer } from './raw-server.js';

let pdp: RawServer;
let dispatcher: Dispatcher;

beforeAll(async () => {
  // Every request is cut off before any response: a reset the retry interceptor would retry.
  pdp = await startRawServer((_req, socket) => socket.destroy());
  dispatcher = new Agent().compose(
    interceptors.retry({ methods: ['POST'], maxRetries: 3, minTimeout: 1, maxTimeout: 1, timeoutFactor: 1 }),
  );
});
afterAll(async () => {
  await dispatcher.close();
  await pdp.close();
});

it('a retry interceptor re-sending a POST is refused: the PDP sees one request, the decision fails closed', async () => {
  const pep = createPep({ pdpUrl: pdp.url, agentId: 'a', session: 's', timeoutMs: 2000, retries: 0, dispatcher });
  try {
    const d = await pep.checkInput('hello');
    expect(d.verdict).toBe('BLOCK');
    expect(d.synthesized?.code).toBe('pdp_unreachable');
    expect(d.synthesized?.attempts).toBe(1);
    expect(pdp.requests).toBe(1);
  } finally {
    await pep.close();
  }
});

describe('a cut-off 200 resumed with a range request', () => {
  let resuming: RawServer;
  const heads: string[] = [];
  beforeAll(async () => {
    resuming = await startRawServer((req, socket) => {
      heads.push(req.head);
      const full = JSON.stringify({ verdict: 'ALLOW', requestId: req.body.requestId, stage: req.body.stage }).padEnd(
        100,
      );
      if (!/^range:/im.test(req.head)) {
        // A 200 that declares 100 bytes, sends 10, then resets: undici's retry interceptor resumes it.
        socket.write(
          rawResponse(['HTTP/1.1 200 OK', 'Content-Type: application/json', 'Content-Length: 100'], full.slice(0, 10)),
        );
        setTimeout(() => socket.destroy(), 20);
      } else {
        socket.write(
          rawResponse(
            [
              'HTTP/1.1 206 Partial Content',
              'Content-Type: application/json',
              'Content-Range: bytes 10-99/100',
              'Content-Length: 90',
            ],
            full.slice(10),
          ),
        );
      }
    });
  });
  afterAll(() => resuming.close());

  /** One `checkInput` through the retry dispatcher with `retries`: its decision, and the requests it made. */
  async function decideThrough(retries: number) {
    heads.length = 0;
    const before = resuming.requests;
    const pep = createPep({ pdpUrl: resuming.url, agentId: 'a', session: 's', timeoutMs: 2000, retries, dispatcher });
    try {
      return { d: await pep.checkInput('hello'), requests: resuming.requests - before };
    } finally {
      await pep.close();
    }
  }

  it('is a re-send the PEP never sees start again: the body is sent once, so the interceptor cannot resume it; the decision fails closed', async () => {
    const { d, requests } = await decideThrough(0);
    expect(d.verdict).toBe('BLOCK');
    expect(d.synthesized?.code).toBe('pdp_unreachable');
    expect(requests).toBe(1);
    expect(heads.some((h) => /^range:/im.test(h))).toBe(false);
  });

  it("with the PEP's own retries, each attempt is one request and none is a range request", async () => {
    const { d, requests } = await decideThrough(2);
    expect(d.synthesized?.code).toBe('pdp_unreachable');
    expect(requests).toBe(3);
    expect(heads.some((h) => /^range:/im.test(h))).toBe(false);
  });
});
