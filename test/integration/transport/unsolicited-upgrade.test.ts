/**
 * A 101 Switching Protocols the request never asked for (it sends no `Upgrade`) ends the attempt at
 * once, as undici's pool ends it (`UND_ERR_SOCKET`, `pdp_unreachable`): the connection is dropped and
 * the decision is a synthesized BLOCK without waiting for the deadline, whatever follows the 101 on
 * the wire (here, a whole ALLOW). Runs on undici's pool (project `shared`) and on the hook's node:http
 * dispatcher (project `node-http`).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPep } from '../../../src/index.js';
import { allowBody, ok, type RawServer, rawResponse, startRawServer } from './raw-server.js';

let pdp: RawServer;
beforeAll(async () => {
  pdp = await startRawServer(() => {});
});
afterAll(async () => {
  await pdp.close();
});

const SWITCHING = ['HTTP/1.1 101 Switching Protocols', 'Upgrade: websocket', 'Connection: Upgrade'];

it.each([
  ['a bare 101', () => rawResponse(SWITCHING)],
  [
    'a 101 followed by a whole ALLOW',
    (req: Parameters<typeof allowBody>[0]) => Buffer.concat([rawResponse(SWITCHING), ok(allowBody(req))]),
  ],
])(
  'an unsolicited 101 Switching Protocols is pdp_unreachable at once, never ALLOW (%s)',
  async (_label, answer) => {
    pdp.responder = (req, socket) => socket.write(answer(req));
    // A deadline far beyond the test's own bound: reaching it would be pdp_timeout.
    const pep = createPep({ pdpUrl: pdp.url, agentId: 'a', session: 's', timeoutMs: 20_000, retries: 0 });
    try {
      const d = await pep.checkInput('x');
      expect(d.verdict).toBe('BLOCK');
      expect(d.synthesized?.code).toBe('pdp_unreachable');
    } finally {
      await pep.close();
    }
  },
  10_000,
);
