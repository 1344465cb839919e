/**
 * Deadline bounds (generous margins; timing figures live in bench/): nothing runs past timeoutMs,
 * whatever the server does, retries and backoff included.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { createPep, type PolicyDecision } from '../../../src/index.js';
import { type FakePdp, type Handler, startFakePdp } from '../../support/fake-pdp.js';

let pdp: FakePdp;
beforeAll(async () => {
  pdp = await startFakePdp();
});
afterAll(async () => {
  await pdp.close();
});

const TIMEOUT = 400;
const MARGIN = 600;

const behaviours: [string, Handler][] = [
  ['accepts and never answers', () => undefined],
  [
    'sends headers, then trickles the body',
    (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const t = setInterval(() => res.write(' '), 20);
      res.on('close', () => clearInterval(t));
    },
  ],
  [
    'streams an endless body slowly, under the byte cap',
    (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"verdict":"ALLOW","pad":"');
      const t = setInterval(() => res.write('x'), 5);
      res.on('close', () => clearInterval(t));
    },
  ],
  [
    'answers 503 with a short Retry-After forever',
    (_req, res) => {
      res.writeHead(503, { 'retry-after': '0' });
      res.end();
    },
  ],
  [
    'sends headers slowly (one every 50 ms)',
    (_req, res) => {
      const sock = res.socket;
      sock?.write('HTTP/1.1 200 OK\r\n');
      const t = setInterval(() => sock?.write('x-slow: 1\r\n'), 50);
      sock?.on('close', () => clearInterval(t));
    },
  ],
];

describe.each(behaviours)('a PDP that %s', (_label, handler) => {
  // The three cases of one behaviour share its handler, so they run at once (each its own client).
  it.concurrent.for([0, 2, 5])('resolves BLOCK within timeoutMs + margin (retries %i)', async (retries, { expect }) => {
    pdp.handler = handler;
    const pep = createPep({ pdpUrl: pdp.url, agentId: 'a', session: 's', timeoutMs: TIMEOUT, retries });
    const t0 = performance.now();
    const results: PolicyDecision[] = await Promise.all([pep.checkInput('x'), pep.authorizeAction('t', { a: 1 })]);
    const elapsed = performance.now() - t0;
    for (const d of results) {
      expect(d.verdict).toBe('BLOCK');
      expect(d.synthesized).toBeDefined();
    }
    expect(elapsed).toBeLessThan(TIMEOUT + MARGIN);
    await pep.close();
  });
});
