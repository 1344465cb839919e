/** A client that trickles its headers (or its body) is cut off: the dev PDP bounds header and request time. */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type DevPdp, type RefusedRequest, startDevPdp } from '../../src/index.js';

let pdp: DevPdp;
const refusals: RefusedRequest[] = [];
beforeAll(async () => {
  pdp = await startDevPdp({
    policy: { agents: ['a'], latches: [] },
    headersTimeoutMs: 300,
    requestTimeoutMs: 600,
    log: (r) => refusals.push(r),
  });
});
afterAll(() => pdp.close());

/** Opens a socket, writes `first`, then `drip` every 50 ms until the server closes it; resolves with what came back. */
function trickle(first: string, drip: string): Promise<{ closed: boolean; received: string }> {
  const { port } = new URL(pdp.url);
  return new Promise((resolve) => {
    const socket: Socket = connect(Number(port), '127.0.0.1');
    let received = '';
    const timer = setInterval(() => {
      if (socket.writable) socket.write(drip);
    }, 50);
    // generous bound: the server must close long before this
    const giveUp = setTimeout(() => {
      clearInterval(timer);
      socket.destroy();
      resolve({ closed: false, received });
    }, 8000);
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      clearTimeout(giveUp);
      resolve({ closed: true, received });
    });
    socket.on('connect', () => socket.write(first));
  });
}

describe('header and request time are bounded', () => {
  test('a client that trickles its headers is cut off (the socket closes)', async () => {
    const result = await trickle('POST /api/policy/authorize HTTP/1.1\r\nHost: x\r\n', 'x-pad: 1\r\n');
    expect(result.closed).toBe(true);
    expect(result.received).toMatch(/^HTTP\/1\.1 408 /);
    expect(refusals).toContainEqual(expect.objectContaining({ status: 408, code: 'request_timeout' }));
  });

  test('a client that trickles its body is cut off too', async () => {
    const head =
      'POST /api/policy/authorize HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n{';
    const result = await trickle(head, ' ');
    expect(result.closed).toBe(true);
  });

  test('a prompt request on the same server is still answered', async () => {
    const res = await fetch(`${pdp.url}/.well-known/jwks.json`);
    expect(res.status).toBe(200);
  });
});
