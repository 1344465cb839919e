/**
 * The dev PDP's HTTP plumbing (node:http): error bodies `{ code, message }`, body reading with a byte
 * cap, the JSON media type (the only content-type import), I-JSON parsing, replies, and the header and
 * request timeouts that bound a slow client.
 * @packageDocumentation
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { decodeJsonBody } from 'agent-pep/internal';
import contentType from 'content-type';
import { DEV_PDP_DEFAULTS } from './defaults.js';

/** Error codes in the dev PDP's `{ code, message }` error bodies. */
export type DevPdpErrorCode =
  | 'unauthorized'
  | 'forbidden'
  | 'too_many_requests'
  | 'unknown_agent'
  | 'bad_request'
  | 'not_found'
  | 'too_large'
  | 'unsupported_media_type'
  | 'request_timeout'
  | 'escalation_not_found'
  | 'escalation_already_resolved'
  | 'too_many_escalations'
  | 'session_too_long'
  | 'draining'
  | 'fault_status'
  | 'session_store_unavailable'
  | 'invalid_request'
  | 'session_state_lost'
  | 'internal_error';

/** A refusal: the status and code of the error body. The message never quotes content, args or keys. @internal */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: DevPdpErrorCode,
    message: string,
    /** Headers of the answer, such as `retry-after` of a 429 or a 503. */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

/** A 400 `bad_request`. @internal */
export const badRequest = (message: string): HttpError => new HttpError(400, 'bad_request', message);

/** The media type of every answer. @internal */
export const JSON_TYPE = 'application/json; charset=utf-8';

/** A request id that can be echoed in a header: 1-200 visible ASCII characters. @internal */
export const REQUEST_ID = /^[\x21-\x7e]{1,200}$/;

/** `{ code, message }` as bytes. @internal */
export function errorBody(code: DevPdpErrorCode, message: string): Buffer {
  return Buffer.from(JSON.stringify({ code, message }), 'utf8');
}

/** Serializes a JSON answer. @internal */
export function jsonBody(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value), 'utf8');
}

/**
 * Refuses a body that is not declared `application/json` (with at most a `charset=utf-8`): 415
 * `unsupported_media_type`.
 * @internal
 */
export function requireJson(req: IncomingMessage): void {
  const header = req.headers['content-type'];
  let parsed: contentType.ParsedMediaType;
  try {
    if (header === undefined) throw new TypeError('no content type');
    parsed = contentType.parse(header);
  } catch {
    throw new HttpError(415, 'unsupported_media_type', 'the body must be application/json');
  }
  const charset = parsed.parameters.charset;
  const others = Object.keys(parsed.parameters).filter((name) => name !== 'charset');
  if (parsed.type !== 'application/json' || others.length > 0 || (charset !== undefined && charset !== 'utf-8')) {
    throw new HttpError(415, 'unsupported_media_type', 'the body must be application/json (charset utf-8)');
  }
}

/** Reads the whole body; past `limit` it keeps draining (up to 8x) so the 413 can be read, then gives up. @internal */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const tooLarge = () => new HttpError(413, 'too_large', `request body over ${limit} bytes`);
    const declared = Number(req.headers['content-length']);
    let size = 0;
    let over = Number.isFinite(declared) && declared > limit;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) over = true;
      if (over) {
        chunks.length = 0;
        if (size > limit * 8) {
          req.pause();
          reject(tooLarge());
        }
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (over) reject(tooLarge());
      else resolve(Buffer.concat(chunks));
    });
    req.on('error', reject);
  });
}

/** What each problem of the one JSON body decoder is called in a 400 `bad_request`. */
const BODY_PROBLEMS = {
  utf8: 'the body is not valid UTF-8',
  json: 'the body is not valid JSON',
  duplicate: 'the body is not I-JSON (a member name appears twice)',
  value: 'the body is not I-JSON (an unpaired surrogate or a number out of range)',
} as const;

/**
 * Parses a body as one I-JSON object with the one JSON body decoder (`wire/json.ts`: valid UTF-8
 * without a byte-order mark, no duplicate member names, no unpaired surrogates), so that nothing echoed
 * or hashed can break the answer or the evidence log.
 * @throws HttpError 400 `bad_request`
 * @internal
 */
export function parseJsonObject(body: Buffer): Record<string, unknown> {
  const d = decodeJsonBody(body);
  if (d.ok && (typeof d.value !== 'object' || d.value === null || Array.isArray(d.value))) {
    throw badRequest('the body must be a JSON object');
  }
  if (!d.ok) throw badRequest(BODY_PROBLEMS[d.problem]);
  return d.value as Record<string, unknown>;
}

/** Reads, checks and parses a JSON request body. @internal */
export async function readJsonObject(req: IncomingMessage, limit: number): Promise<Record<string, unknown>> {
  requireJson(req);
  return parseJsonObject(await readBody(req, limit));
}

/** Writes a whole JSON answer, once. @internal */
export function send(
  res: ServerResponse,
  requestId: string,
  status: number,
  body: Buffer,
  extra: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, {
    'content-type': JSON_TYPE,
    'content-length': String(body.length),
    'cache-control': 'no-store',
    'x-request-id': requestId,
    ...extra,
  });
  res.end(body);
}

/** Writes the error body of a refusal (`internal_error` for anything that is not an HttpError). @internal */
export function sendError(res: ServerResponse, requestId: string, error: unknown): HttpError {
  const e = error instanceof HttpError ? error : new HttpError(500, 'internal_error', 'internal error');
  const extra: Record<string, string> = { ...e.headers };
  if (e.status === 401) extra['www-authenticate'] = 'Bearer';
  if (e.status === 413 || e.status === 415) extra.connection = 'close';
  send(res, requestId, e.status, errorBody(e.code, e.message), extra);
  return e;
}

/**
 * Writes a 200 answer headers first, then the body at `bytesPerSecond` (the `slow` fault). The timer
 * is registered in `timers` so that close() can stop it.
 * @internal
 */
export function trickle(
  res: ServerResponse,
  requestId: string,
  body: Buffer,
  bytesPerSecond: number,
  timers: Set<NodeJS.Timeout>,
): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(200, {
    'content-type': JSON_TYPE,
    'content-length': String(body.length),
    'cache-control': 'no-store',
    'x-request-id': requestId,
  });
  res.flushHeaders();
  const chunk = Math.max(1, Math.floor(bytesPerSecond / 20));
  const interval = Math.max(1, Math.round((chunk * 1000) / bytesPerSecond));
  let offset = 0;
  const stop = () => {
    clearInterval(timer);
    timers.delete(timer);
  };
  const timer = setInterval(() => {
    if (res.destroyed) return stop();
    const next = body.subarray(offset, offset + chunk);
    offset += next.length;
    if (offset >= body.length) {
      stop();
      res.end(next);
    } else {
      res.write(next);
    }
  }, interval);
  timers.add(timer);
  res.on('close', stop);
}

/** The server's time bounds on a client, in milliseconds. @internal */
export interface ServerTimeouts {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

/**
 * Bounds how long a client may take (issue: a client trickling its headers held a socket for 20 s and
 * more): headers within `headersTimeoutMs`, the whole request within `requestTimeoutMs`, and idle
 * kept-alive connections closed after `keepAliveTimeoutMs`. node:http checks the first two every
 * `connectionsCheckingInterval` (set at creation, see {@link checkingIntervalMs}).
 * @internal
 */
export function applyTimeouts(server: Server, timeouts: ServerTimeouts = DEV_PDP_DEFAULTS): void {
  server.headersTimeout = timeouts.headersTimeoutMs;
  server.requestTimeout = timeouts.requestTimeoutMs;
  server.keepAliveTimeout = timeouts.keepAliveTimeoutMs;
}

/** How often node:http checks the header and request timeouts: a fraction of the shorter one. @internal */
export function checkingIntervalMs(timeouts: ServerTimeouts): number {
  return Math.max(50, Math.min(1000, Math.floor(Math.min(timeouts.headersTimeoutMs, timeouts.requestTimeoutMs) / 4)));
}
