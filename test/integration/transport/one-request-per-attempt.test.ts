/**
 * One attempt is one request on the wire, and retries are the PEP's own (CONTRACT.md section 3,
 * "Retries": at most `retries` extra attempts). A caller's dispatcher that re-sends a request by itself
 * (undici's retry interceptor, allowed to retry POST) has the re-send refused before a byte is written.
 */
import { Agent, type Dispatcher, interceptors } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPep } from '../../../src/index.js';
import { type RawServer, startRawServer } from './raw-server.js';

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
