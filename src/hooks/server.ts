/**
 * The HTTP hook endpoint behind `agent-pep hook serve` (CONTRACT.md section 17, docs/cli.md): one warm
 * client answering `POST /hooks/<host>` with the JSON the process hook prints, 200, so a Claude Code
 * HTTP hook (`"type": "http"`) or a host's command that posts the event gets the same answer without
 * starting a process.
 *
 * Fails closed at every step. A request without `Authorization: Bearer <token>` is 401 (compared in
 * constant time), another path 404, another method 405, a body over the cap 413, a request beyond the
 * bounded queue 503 with the host's deny as its body; none reaches the PDP. Claude Code reads a non-2xx
 * status as a failure of the hook, which `"onFailure": "block"` turns into a block; a command that
 * posts with `curl --fail` falls back to the host's deny (`agent-pep hook init --http`). An event that
 * cannot be read, a PDP failure, an exception and the endpoint's own deadline (below the host's hook
 * timeout) are 200 with the host's deny, as the process hook answers them.
 * @internal
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Pep } from '../pep.js';
import { type AnswerLabel, answerStep, failedAnswer, failureContext, parseEvent } from './answer.js';
import { type HostName, type HostStep, type HostWire, hostWire } from './hosts/index.js';
import { type HookAnswer, HookEventError } from './wire.js';

/** Largest request body, in bytes (1 MiB); more is 413. */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Requests answered at once by default; one more is 503. */
export const DEFAULT_MAX_PENDING = 64;

/** One request's line for the log: never the event, its args or content, nor the token. */
export interface HookServeRecord {
  /** The host of the path, or undefined for a path that names none. */
  host: HostName | undefined;
  /** The host's event name, when it was read. */
  event: string | undefined;
  /** What the answer said, or what the request was refused for. */
  label: AnswerLabel | 'unauthorized' | 'not_found' | 'method_not_allowed' | 'too_large' | 'busy';
  status: number;
  /** The fail-closed code behind a synthesized decision (`pdp_status`, `pdp_unreachable`, ...), else absent. */
  code?: string | undefined;
  /** Milliseconds from the request to the answer. */
  ms: number;
}

/** Options of {@link startHookServer}. */
export interface HookServerOptions {
  /** The client every answer decides through (closed by `close()`). */
  pep: Pep;
  /** The bearer token a request must carry. */
  token: string;
  /** Address to bind. @defaultValue '127.0.0.1' */
  host?: string;
  /** Port to bind; 0 picks a free one. @defaultValue 0 */
  port?: number;
  /** Each request's deadline from its arrival, in milliseconds; at it, the host's deny. */
  timeoutMs: number;
  /** What ESCALATE becomes for each host (`ask` only where the host can ask), else the host's default. */
  escalate?: 'ask' | 'deny' | undefined;
  /** Requests answered at once; beyond, 503. @defaultValue 64 */
  maxPending?: number;
  /** Called once per answered request. */
  onRecord?: (record: HookServeRecord) => void;
}

/** A running endpoint. */
export interface HookServer {
  /** `http://<host>:<port>`. */
  readonly url: string;
  readonly port: number;
  /** Stops accepting, lets the requests in flight finish (each within its deadline), closes the client. */
  close(): Promise<void>;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Whether the request carries the token, compared in constant time (over digests of equal length). */
function authorized(req: IncomingMessage, expected: Buffer): boolean {
  const header = req.headers.authorization;
  if (typeof header !== 'string' || !header.startsWith('Bearer ')) return false;
  return timingSafeEqual(digest(header.slice('Bearer '.length)), expected);
}

function send(
  res: ServerResponse,
  status: number,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(`${JSON.stringify(body)}\n`);
}

/** Reads the body, at most {@link MAX_BODY_BYTES}; rejects with `too_large` beyond. */
function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) {
      reject(new Error('too_large'));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        req.pause();
        reject(new Error('too_large'));
        return;
      }
      chunks.push(chunk);
    });
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', () => reject(new HookEventError('the request body could not be read')));
  });
}

/** Answers one authorized POST to a host's path: the host's answer, 200, by the deadline at the latest. */
async function answerRequest(
  req: IncomingMessage,
  wire: HostWire,
  options: HookServerOptions,
): Promise<{
  status: number;
  answer: HookAnswer;
  label: HookServeRecord['label'];
  event: string | undefined;
  code?: string | undefined;
}> {
  let step: HostStep | undefined;
  let response: unknown;
  const failure = (error: unknown) => {
    const reason = error instanceof HookEventError ? error.message : 'internal error';
    return {
      status: 200,
      answer: failedAnswer(wire, failureContext(error, step), reason, response),
      label: 'failed' as const,
      event: step?.native,
    };
  };
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<ReturnType<typeof failure>>((resolve) => {
    timer = setTimeout(
      () => resolve(failure(new HookEventError('the hook deadline passed', step?.event))),
      options.timeoutMs,
    );
  });
  const work = (async () => {
    let bytes: Buffer;
    try {
      bytes = await readBody(req);
    } catch (error) {
      if (error instanceof Error && error.message === 'too_large') {
        return {
          status: 413,
          answer: failedAnswer(wire, {}, 'the hook event is too large'),
          label: 'too_large' as const,
          event: undefined,
        };
      }
      throw error;
    }
    const value = parseEvent(bytes, 'the request body');
    if (typeof value === 'object' && value !== null) response = (value as { tool_response?: unknown }).tool_response;
    step = wire.read(value);
    const escalate = options.escalate === 'ask' && !wire.canAsk ? 'deny' : (options.escalate ?? wire.escalateDefault);
    const r = await answerStep(options.pep, wire, step, escalate);
    return { status: 200, answer: r.answer, label: r.label, event: step.native, code: r.code };
  })().catch(failure);
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Starts the endpoint.
 * @returns once it listens
 * @throws Error from `listen` (`EADDRINUSE`, `EACCES`)
 */
export async function startHookServer(options: HookServerOptions): Promise<HookServer> {
  const expected = digest(options.token);
  const maxPending = options.maxPending ?? DEFAULT_MAX_PENDING;
  let pending = 0;
  let stopping = false;
  const server = createServer((req, res) => {
    const started = performance.now();
    const path = (req.url ?? '').split('?')[0] ?? '';
    const match = /^\/hooks\/([a-z-]{1,32})$/.exec(path);
    const wire = match?.[1] === undefined ? undefined : hostWire(match[1]);
    const record = (label: HookServeRecord['label'], status: number, event?: string, code?: string) =>
      options.onRecord?.({
        host: wire?.name,
        event,
        label,
        status,
        ...(code === undefined ? {} : { code }),
        ms: Math.round(performance.now() - started),
      });
    // A refused request's connection is closed after the answer (its body is never read to the end).
    const refuse = (status: number, label: HookServeRecord['label'], headers: Record<string, string> = {}) => {
      req.resume();
      send(res, status, { error: label }, { ...headers, connection: 'close' });
      record(label, status);
    };
    if (!authorized(req, expected)) return refuse(401, 'unauthorized', { 'www-authenticate': 'Bearer' });
    if (wire === undefined) return refuse(404, 'not_found');
    if (req.method !== 'POST') return refuse(405, 'method_not_allowed', { allow: 'POST' });
    if (pending >= maxPending) {
      req.resume();
      send(res, 503, failedAnswer(wire, {}, 'agent-pep hook serve is busy').stdout, { connection: 'close' });
      record('busy', 503);
      return;
    }
    pending++;
    void answerRequest(req, wire, options).then((r) => {
      pending--;
      // A stopping endpoint, and a request whose body did not arrive whole (too large, or still coming
      // at the deadline), closes the connection after the answer.
      send(res, r.status, r.answer.stdout, stopping || !req.complete ? { connection: 'close' } : {});
      record(r.label, r.status, r.event, r.code);
    });
  });
  // A slow sender cannot hold a connection past the deadline (the answer is already a deny by then).
  server.requestTimeout = options.timeoutMs + 1000;
  server.headersTimeout = Math.min(server.requestTimeout, 10_000);
  server.maxConnections = maxPending * 4;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const bound = options.host ?? '127.0.0.1';
  const url = `http://${bound.includes(':') ? `[${bound}]` : bound}:${port}`;
  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    close() {
      closing ??= (async () => {
        stopping = true;
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        await closed;
        await options.pep.close().catch(() => undefined);
      })();
      return closing;
    },
  };
}
