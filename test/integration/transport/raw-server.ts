/**
 * A raw `node:net` HTTP/1.1 server on 127.0.0.1, port 0, for transport tests that need exact bytes on
 * the wire: it reads each request (head and a `content-length` body) and hands it to the test's
 * responder, which writes whatever it likes on the socket. It counts connections, requests and bytes.
 */
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';

/** One request as the server read it. */
export interface RawRequest {
  head: string;
  /** The request body parsed as JSON (`{}` when it is not JSON). */
  body: { requestId?: string; stage?: string } & Record<string, unknown>;
}

export type Responder = (req: RawRequest, socket: Socket) => void;

export interface RawServer {
  url: string;
  responder: Responder;
  /** TCP connections accepted. */
  connections: number;
  /** Whole requests read. */
  requests: number;
  /** Request bytes read, whole or not. */
  bytes: number;
  close(): Promise<void>;
}

/** `head` lines joined with CRLF, a blank line, then `body` (a string or raw bytes). */
export function rawResponse(lines: string[], body: string | Uint8Array = ''): Buffer {
  const bytes = typeof body === 'string' ? Buffer.from(body) : Buffer.from(body);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), bytes]);
}

/** A valid, enforceable ALLOW on a text stage, echoing the request. */
export function allowBody(req: RawRequest): string {
  return JSON.stringify({ verdict: 'ALLOW', requestId: req.body.requestId, stage: req.body.stage });
}

/** A status-200 JSON response with `extra` header lines and an exact `content-length`. */
export function ok(body: string | Uint8Array, extra: string[] = [], type = 'application/json'): Buffer {
  const len = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  return rawResponse(['HTTP/1.1 200 OK', `Content-Type: ${type}`, ...extra, `Content-Length: ${len}`], body);
}

export async function startRawServer(responder: Responder): Promise<RawServer> {
  const sockets = new Set<Socket>();
  const state = { responder, connections: 0, requests: 0, bytes: 0 };
  const server: Server = createServer((socket) => {
    state.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let buf = Buffer.alloc(0);
    socket.on('data', (d: Buffer) => {
      state.bytes += d.length;
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.subarray(0, end).toString('latin1');
        const len = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + len) return;
        let body: RawRequest['body'] = {};
        try {
          body = JSON.parse(buf.subarray(end + 4, end + 4 + len).toString('utf8')) as RawRequest['body'];
        } catch {
          // not JSON: leave empty
        }
        buf = buf.subarray(end + 4 + len);
        state.requests++;
        state.responder({ head, body }, socket);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get responder() {
      return state.responder;
    },
    set responder(r: Responder) {
      state.responder = r;
    },
    get connections() {
      return state.connections;
    },
    get requests() {
      return state.requests;
    },
    get bytes() {
      return state.bytes;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
