/**
 * Coverage probes (raw node:net PDP): malformed or odd HTTP/1.x framing and headers must never yield
 * the PDP's ALLOW (CONTRACT.md section 3, rules 1-4), and keep-alive reuse must not hand one decision
 * bytes that arrived for another. Each case answers an otherwise valid ALLOW.
 */

import type { AddressInfo } from 'node:net';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPep, type PolicyDecision } from '../../../src/index.js';
import { decideOnce } from '../../support/clients.js';

type Responder = (req: { requestId: string; stage: string }, socket: Socket, n: number) => void;
let server: Server;
let url: string;
let responder: Responder;
let count = 0;
const sockets = new Set<Socket>();

beforeAll(async () => {
  server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let buf = '';
    socket.on('data', (d) => {
      buf += d.toString('latin1');
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const len = Number(/content-length: *(\d+)/i.exec(buf.slice(0, end))?.[1] ?? 0);
        if (buf.length < end + 4 + len) return;
        const body = JSON.parse(buf.slice(end + 4, end + 4 + len)) as { requestId: string; stage: string };
        buf = buf.slice(end + 4 + len);
        responder(body, socket, ++count);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((r) => server.close(() => r()));
});

const allow = (b: { requestId: string }) => JSON.stringify({ verdict: 'ALLOW', requestId: b.requestId });
const block = (b: { requestId: string }) => JSON.stringify({ verdict: 'BLOCK', requestId: b.requestId });
const head = (lines: string[], body: string) => `${lines.join('\r\n')}\r\n\r\n${body}`;

function ask(opts: { retries?: number; connections?: number } = {}): Promise<PolicyDecision> {
  return decideOnce({ pdpUrl: url, agentId: 'a', session: 's', timeoutMs: 800, retries: 0, ...opts }, (pep) =>
    pep.checkInput('hi'),
  );
}

const cases: [string, Responder][] = [
  [
    'two content-type headers (json + html)',
    (b, s) => {
      const body = allow(b);
      s.write(
        head(
          [
            'HTTP/1.1 200 OK',
            'Content-Type: application/json',
            'Content-Type: text/html',
            `Content-Length: ${body.length}`,
          ],
          body,
        ),
      );
    },
  ],
  [
    'content-type list in one header',
    (b, s) => {
      const body = allow(b);
      s.write(
        head(['HTTP/1.1 200 OK', 'Content-Type: application/json, text/html', `Content-Length: ${body.length}`], body),
      );
    },
  ],
  [
    'two x-request-id headers (right one + wrong one)',
    (b, s) => {
      const body = JSON.stringify({ verdict: 'ALLOW' });
      s.write(
        head(
          [
            'HTTP/1.1 200 OK',
            'Content-Type: application/json',
            `X-Request-Id: ${b.requestId}`,
            'X-Request-Id: other',
            `Content-Length: ${body.length}`,
          ],
          body,
        ),
      );
    },
  ],
  [
    'content-length and chunked together',
    (b, s) => {
      const body = allow(b);
      s.write(
        head(
          [
            'HTTP/1.1 200 OK',
            'Content-Type: application/json',
            `Content-Length: ${body.length}`,
            'Transfer-Encoding: chunked',
          ],
          `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
        ),
      );
    },
  ],
  [
    'two different content-length headers',
    (b, s) => {
      const body = allow(b);
      s.write(
        head(
          [
            'HTTP/1.1 200 OK',
            'Content-Type: application/json',
            `Content-Length: ${body.length}`,
            `Content-Length: ${body.length + 1}`,
          ],
          body,
        ),
      );
    },
  ],
  [
    'content-length longer than the body, then close',
    (b, s) => {
      const body = allow(b);
      s.end(head(['HTTP/1.1 200 OK', 'Content-Type: application/json', `Content-Length: ${body.length + 10}`], body));
    },
  ],
  [
    'chunked body cut by close before the last chunk',
    (b, s) => {
      const body = allow(b);
      s.end(
        head(
          ['HTTP/1.1 200 OK', 'Content-Type: application/json', 'Transfer-Encoding: chunked'],
          `${body.length.toString(16)}\r\n${body}\r\n`,
        ),
      );
    },
  ],
  [
    '101 Switching Protocols to a POST',
    (b, s) => {
      const body = allow(b);
      s.write(head(['HTTP/1.1 101 Switching Protocols', 'Connection: Upgrade', 'Upgrade: evil'], ''));
      s.write(head(['HTTP/1.1 200 OK', 'Content-Type: application/json', `Content-Length: ${body.length}`], body));
    },
  ],
  [
    '100 Continue (never asked for) then 200',
    (b, s) => {
      const body = allow(b);
      s.write(head(['HTTP/1.1 100 Continue'], ''));
      s.write(head(['HTTP/1.1 200 OK', 'Content-Type: application/json', `Content-Length: ${body.length}`], body));
    },
  ],
  [
    'HTTP/0.9-style bare body',
    (b, s) => {
      s.end(allow(b));
    },
  ],
];

describe('odd HTTP framing never yields ALLOW', () => {
  it.each(cases)('%s', async (_label, r) => {
    responder = r;
    const d = await ask();
    expect(d.verdict).toBe('BLOCK');
    expect(d.synthesized).toBeDefined();
  });

  it('a BLOCK answer with a smuggled second ALLOW response does not leak into the next decision', async () => {
    // First request: content-length covers a BLOCK, then a whole unsolicited ALLOW response follows.
    // Second request (same client, one connection): the server answers it with nothing but BLOCK.
    responder = (b, s, n) => {
      const first = block(b);
      if (n % 2 === 1) {
        const smuggled = JSON.stringify({ verdict: 'ALLOW' });
        s.write(
          head(['HTTP/1.1 200 OK', 'Content-Type: application/json', `Content-Length: ${first.length}`], first) +
            head(['HTTP/1.1 200 OK', 'Content-Type: application/json', `Content-Length: ${smuggled.length}`], smuggled),
        );
      } else {
        s.write(head(['HTTP/1.1 200 OK', 'Content-Type: application/json', `Content-Length: ${first.length}`], first));
      }
    };
    count = 0;
    const pep = createPep({ pdpUrl: url, agentId: 'a', session: 's', timeoutMs: 800, retries: 2, connections: 1 });
    try {
      const [a, b] = await Promise.all([pep.checkInput('one'), pep.checkInput('two')]);
      const c = await pep.checkInput('three');
      for (const d of [a, b, c]) expect(d.verdict).toBe('BLOCK');
    } finally {
      await pep.close();
    }
  });
});
