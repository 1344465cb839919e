/**
 * A scriptable fake PDP on 127.0.0.1, port 0: each test sets `handler` to decide how to answer.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface Received {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
  raw: string;
}

export type Handler = (req: Received, res: ServerResponse, socket: Socket) => unknown;

export interface FakePdp {
  url: string;
  received: Received[];
  handler: Handler;
  /** Sockets currently open on the server side. */
  openSockets(): number;
  close(): Promise<void>;
}

/** Answers a valid decision echoing the request id and stage. */
export function answer(res: ServerResponse, body: unknown, status = 200, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(text);
}

export const allowEcho: Handler = (req, res) =>
  answer(res, { verdict: 'ALLOW', requestId: req.body.requestId, stage: req.body.stage, decisionId: 'd-1' });

export async function startFakePdp(handler: Handler = allowEcho): Promise<FakePdp> {
  const sockets = new Set<Socket>();
  const received: Received[] = [];
  const state: { handler: Handler } = { handler };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        // leave empty
      }
      const r: Received = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, raw };
      received.push(r);
      Promise.resolve(state.handler(r, res, req.socket)).catch(() => res.destroy());
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    get handler() {
      return state.handler;
    },
    set handler(h: Handler) {
      state.handler = h;
    },
    openSockets: () => sockets.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A port on 127.0.0.1 with nothing listening (connections are refused). */
export async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
