/**
 * What every route of the dev PDP's server shares: the server's config, its timers, the key checks,
 * the request ids of a request, and the two ways out (an answer, a logged refusal).
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { bearerCheck, type KeyCheck, type KeyThrottle } from '../auth.js';
import type { ConsoleHandler } from '../console/routes.js';
import type { DecideContext } from '../decide.js';
import { DEFAULT_SLOW_BYTES_PER_SECOND, type Fault } from '../faults.js';
import { jsonBody, REQUEST_ID, type ServerTimeouts, send, sendError, trickle } from '../http.js';
import { loggablePath, type RefusedRequest } from '../log.js';
import { randomId } from '../signing.js';

/** Everything the server needs. @internal */
export interface ServerConfig extends DecideContext {
  apiKey: string | undefined;
  /** Key of the escalation endpoint; without it the endpoint answers 404. */
  reviewerApiKey: string | undefined;
  /** The reviewer console at `/console`, when there is one (else 404). */
  console?: ConsoleHandler | undefined;
  maxBodyBytes: number;
  timeouts: ServerTimeouts;
  fault(): Readonly<Fault> | null;
  log(refusal: RefusedRequest): void;
  /** Failed reviewer-key attempts per client, shared with the console's sign-in. */
  throttle: KeyThrottle;
  /** `escalationTtlSec` in milliseconds (a listed escalation's `expiresAt`). */
  escalationTtlMs: number;
  /** Resolves when the stores answer (`/readyz`); rejects when they do not. */
  ready(): Promise<void>;
}

/** One server's state, as its routes see it. @internal */
export interface RouteContext {
  readonly config: ServerConfig;
  /** The intervals of slow answers in flight; `close()` clears them. */
  readonly timers: Set<NodeJS.Timeout>;
  /** The API key check of the decision endpoints. */
  readonly agentKey: KeyCheck;
  /** The reviewer key check of the escalation endpoint; undefined without a reviewer key. */
  readonly reviewerKey: KeyCheck | undefined;
  /** Set by a drain: no new decision is taken (503 `draining`), `/readyz` answers 503. */
  draining: boolean;
  /** Requests being answered; a drain waits for none. */
  inFlight: number;
  /** Called when the last request in flight is answered (set by a drain). */
  idle?: () => void;
}

/** The context of a server made with `config`. @internal */
export function routeContext(config: ServerConfig): RouteContext {
  return {
    config,
    timers: new Set(),
    agentKey: bearerCheck(config.apiKey),
    reviewerKey: config.reviewerApiKey === undefined ? undefined : bearerCheck(config.reviewerApiKey),
    draining: false,
    inFlight: 0,
  };
}

/** The request ids of one request. @internal */
export interface RequestIds {
  /** The `x-request-id` header as sent (any value). */
  readonly raw: string | string[] | undefined;
  /** The header, when it is 1-200 visible ASCII characters. */
  readonly header: string | undefined;
  /** The id the answer carries: the header's, or a fresh one. */
  readonly reply: string;
}

/** The request ids of `req`. @internal */
export function requestIds(req: IncomingMessage): RequestIds {
  const raw = req.headers['x-request-id'];
  const header = typeof raw === 'string' && REQUEST_ID.test(raw) ? raw : undefined;
  return { raw, header, reply: header ?? randomId('req_') };
}

/** A route's handler: answers `req` or throws (an HttpError is answered as such, anything else a 500). @internal */
export type Route = (ctx: RouteContext, req: IncomingMessage, res: ServerResponse, ids: RequestIds) => Promise<void>;

/** Answers a refusal `{ code, message }` and logs it (with the path of a request to no endpoint). @internal */
export function refuse(
  ctx: RouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  route: string,
  requestId: string,
  error: unknown,
  path?: string,
): void {
  const e = sendError(res, requestId, error);
  const refusal: RefusedRequest = { status: e.status, code: e.code, method: req.method ?? '?', route };
  if (path !== undefined) refusal.path = loggablePath(path);
  const header = req.headers['x-request-id'];
  if (typeof header === 'string' && REQUEST_ID.test(header)) refusal.requestId = header;
  ctx.config.log(refusal);
}

/** Answers a decision 200, trickled when a `slow` fault is injected. @internal */
export function answer(ctx: RouteContext, res: ServerResponse, replyId: string, value: unknown): void {
  const payload = jsonBody(value);
  const fault = ctx.config.fault();
  if (fault?.kind === 'slow') {
    trickle(res, replyId, payload, fault.bytesPerSecond ?? DEFAULT_SLOW_BYTES_PER_SECOND, ctx.timers);
  } else {
    send(res, replyId, 200, payload);
  }
}
