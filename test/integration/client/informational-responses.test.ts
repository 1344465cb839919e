/** 1xx informational responses before the final one (RFC 9110 section 15.2) do not confuse the status check. */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPep } from '../../../src/index.js';
import { answer, type FakePdp, startFakePdp } from '../../support/fake-pdp.js';

let pdp: FakePdp;
beforeAll(async () => {
  pdp = await startFakePdp();
});
afterAll(async () => {
  await pdp.close();
});

it('103 Early Hints then 200: the final decision counts', async () => {
  pdp.handler = (req, res) => {
    res.writeEarlyHints({ link: '</x>; rel=preload' });
    answer(res, { verdict: 'ALLOW', requestId: req.body.requestId });
  };
  const pep = createPep({ pdpUrl: pdp.url, agentId: 'a', session: 's' });
  expect((await pep.checkInput('x')).verdict).toBe('ALLOW');
  await pep.close();
});

it('103 Early Hints then 503: pdp_status 503', async () => {
  pdp.handler = (_req, res) => {
    res.writeEarlyHints({ link: '</x>; rel=preload' });
    answer(res, {}, 503);
  };
  const pep = createPep({ pdpUrl: pdp.url, agentId: 'a', session: 's', retries: 0 });
  const d = await pep.checkInput('x');
  expect(d.synthesized?.code).toBe('pdp_status');
  expect(d.synthesized?.status).toBe(503);
  await pep.close();
});

/** Resolves when the client has closed its side of `socket` (FIN or reset). */
function clientClosed(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    if (socket.readableEnded || socket.destroyed) return resolve();
    socket.once('end', () => resolve());
    socket.once('close', () => resolve());
  });
}

it('a non-200 whose body never ends is pdp_status at once, and its connection is dropped', async () => {
  let carried: Socket | undefined;
  pdp.handler = (_req, res, socket) => {
    carried = socket;
    res.writeHead(503, { 'content-type': 'application/json' });
    res.write('{');
  };
  const pep = createPep({ pdpUrl: pdp.url, agentId: 'a', session: 's', timeoutMs: 5000, retries: 0 });
  const t0 = performance.now();
  const d = await pep.checkInput('x');
  expect(d.synthesized?.code).toBe('pdp_status');
  expect(d.synthesized?.status).toBe(503);
  expect(performance.now() - t0).toBeLessThan(2500);
  await clientClosed(carried as Socket);
  await pep.close();
});

it.each([
  ['hangs before headers', () => undefined],
  [
    'trickles a 200 body',
    (_q: unknown, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{');
    },
  ],
])('a PDP that %s: the client drops that connection when the decision ends', async (_l, handler) => {
  let carried: Socket | undefined;
  pdp.handler = (q, res, socket) => {
    carried = socket;
    (handler as (q: unknown, r: ServerResponse) => void)(q, res);
  };
  const pep = createPep({ pdpUrl: pdp.url, agentId: 'a', session: 's', timeoutMs: 200, retries: 0 });
  expect((await pep.checkInput('x')).synthesized?.code).toBe('pdp_timeout');
  await clientClosed(carried as Socket);
  await pep.close();
});
