/**
 * The dev PDP's HTTP server (node:http), routing only: the native decision endpoint (docs/fail-closed.md), the AuthZEN 1.0 endpoints and discovery document (docs/authzen.md), the JWKS, and the reviewer's
 * escalation endpoint. Every refusal is answered `{ code, message }` and logged.
 * @packageDocumentation
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { bearerCheck } from './auth.js';
import {
  AUTHZEN_PATHS,
  configurationDocument,
  fromEvaluation,
  parseEvaluations,
  stopsAfter,
  toEvaluationAnswer,
  toEvaluationError,
} from './authzen.js';
import type { ConsoleHandler } from './console/routes.js';
import { type DecideContext, decide } from './decide.js';
import { DEV_PDP_DEFAULTS } from './defaults.js';
import { EscalationError } from './escalations.js';
import { DEFAULT_SLOW_BYTES_PER_SECOND, type Fault, GARBAGE_BODY } from './faults.js';
import {
  applyTimeouts,
  badRequest,
  checkingIntervalMs,
  errorBody,
  HttpError,
  JSON_TYPE,
  jsonBody,
  REQUEST_ID,
  readBody,
  readJsonObject,
  type ServerTimeouts,
  send,
  sendError,
  trickle,
} from './http.js';
import { loggablePath, type RefusedRequest } from './log.js';
import { randomId } from './signing.js';
import { fromAuthorizeBody, toAuthorizeAnswer } from './wire.js';

export type { DevPdpErrorCode } from './http.js';

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
}

/** The running server. @internal */
export interface PdpServer {
  readonly server: Server;
  /** Destroys every open socket (hung ones included) and stops listening. */
  close(): Promise<void>;
}

const AUTHORIZE_PATH = '/api/policy/authorize';
const JWKS_PATH = '/.well-known/jwks.json';
const ESCALATION_PATH = /^\/api\/escalations\/([A-Za-z0-9_-]{1,200})$/;
const DECISION_ROUTES: ReadonlySet<string> = new Set([
  AUTHORIZE_PATH,
  AUTHZEN_PATHS.evaluation,
  AUTHZEN_PATHS.evaluations,
]);

/** The body of `POST /api/escalations/{id}`: `{ resolution: 'approve' | 'deny', note? }`. */
function resolutionOf(body: Record<string, unknown>): { resolution: 'approve' | 'deny'; note: string | undefined } {
  const { resolution, note } = body;
  if (resolution !== 'approve' && resolution !== 'deny') throw badRequest('resolution must be "approve" or "deny"');
  if (note !== undefined && (typeof note !== 'string' || note.length > DEV_PDP_DEFAULTS.consoleNoteLength)) {
    throw badRequest(`note must be a string of at most ${DEV_PDP_DEFAULTS.consoleNoteLength} characters`);
  }
  return { resolution, note };
}

/** Creates the server; the caller listens. @internal */
export function createPdpServer(config: ServerConfig): PdpServer {
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let closing: Promise<void> | undefined;
  const agentKey = bearerCheck(config.apiKey);
  const reviewerKey = config.reviewerApiKey === undefined ? undefined : bearerCheck(config.reviewerApiKey);

  function refuse(
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
    config.log(refusal);
  }

  /** Applies the injected fault; true when it answered (or will never answer). */
  async function faulted(req: IncomingMessage, res: ServerResponse, route: string, replyId: string): Promise<boolean> {
    const fault = config.fault();
    if (fault === null || fault.kind === 'slow') return false;
    if (fault.kind === 'reset') {
      req.socket.resetAndDestroy();
      return true;
    }
    if (fault.kind === 'hang') {
      req.resume(); // read the request, never answer; close() ends the socket
      return true;
    }
    await readBody(req, config.maxBodyBytes).catch(() => undefined);
    if (fault.kind === 'garbage') {
      if (res.destroyed) return true;
      res.writeHead(200, {
        'content-type': JSON_TYPE,
        'content-length': String(GARBAGE_BODY.length),
        'x-request-id': replyId,
      });
      res.end(GARBAGE_BODY);
      return true;
    }
    refuse(req, res, route, replyId, new HttpError(fault.status, 'fault_status', 'injected fault'));
    return true;
  }

  function answer(res: ServerResponse, replyId: string, value: unknown): void {
    const payload = jsonBody(value);
    const fault = config.fault();
    if (fault?.kind === 'slow') {
      trickle(res, replyId, payload, fault.bytesPerSecond ?? DEFAULT_SLOW_BYTES_PER_SECOND, timers);
    } else {
      send(res, replyId, 200, payload);
    }
  }

  async function authorize(req: IncomingMessage, res: ServerResponse, headerId: string | undefined): Promise<void> {
    const body = await readJsonObject(req, config.maxBodyBytes);
    const decision = await decide(config, fromAuthorizeBody(body, config.policy, headerId));
    answer(res, decision.requestId, toAuthorizeAnswer(decision));
  }

  async function evaluation(req: IncomingMessage, res: ServerResponse, headerId: string | undefined): Promise<void> {
    const body = await readJsonObject(req, config.maxBodyBytes);
    const parts = { subject: body.subject, action: body.action, resource: body.resource, context: body.context };
    const decision = await decide(config, fromEvaluation(parts, config.policy, headerId));
    answer(res, headerId ?? decision.requestId, toEvaluationAnswer(decision));
  }

  async function evaluations(req: IncomingMessage, res: ServerResponse, replyId: string): Promise<void> {
    const body = await readJsonObject(req, config.maxBodyBytes);
    const batch = parseEvaluations(body, DEV_PDP_DEFAULTS.maxEvaluations);
    if (batch.single) {
      const [only] = batch.items;
      const decision = await decide(config, fromEvaluation(only as (typeof batch.items)[0], config.policy, undefined));
      answer(res, replyId, toEvaluationAnswer(decision));
      return;
    }
    const results: unknown[] = [];
    // one at a time, in order: each item is decided on its own (its request id, its permit, its record)
    for (const item of batch.items) {
      let result: { decision: boolean; context: Record<string, unknown> };
      try {
        result = toEvaluationAnswer(await decide(config, fromEvaluation(item, config.policy, undefined)));
      } catch (error) {
        if (!(error instanceof HttpError)) throw error;
        const refusal: RefusedRequest = {
          status: error.status,
          code: error.code,
          method: 'POST',
          route: AUTHZEN_PATHS.evaluations,
        };
        config.log(refusal);
        result = toEvaluationError(error);
      }
      results.push(result);
      if (stopsAfter(batch.semantic, result.decision)) break;
    }
    answer(res, replyId, { evaluations: results });
  }

  async function escalation(req: IncomingMessage, res: ServerResponse, id: string, requestId: string): Promise<void> {
    if (reviewerKey === undefined) throw new HttpError(404, 'not_found', 'no such endpoint');
    if (!reviewerKey(req)) throw new HttpError(401, 'unauthorized', 'a valid reviewer key is required');
    const body = await readJsonObject(req, DEV_PDP_DEFAULTS.escalationBodyBytes);
    const { resolution, note } = resolutionOf(body);
    try {
      config.escalations.resolve(id, resolution, 'api', note);
    } catch (error) {
      if (error instanceof EscalationError && error.code === 'escalation_already_resolved') {
        throw new HttpError(409, error.code, 'escalation already resolved');
      }
      throw new HttpError(404, 'escalation_not_found', 'unknown escalation id');
    }
    send(res, requestId, 200, jsonBody({ escalationId: id, resolution }));
  }

  function getJson(req: IncomingMessage, res: ServerResponse, requestId: string, value: unknown, cache: string): void {
    const body = jsonBody(value);
    res.writeHead(200, {
      'content-type': JSON_TYPE,
      'content-length': String(body.length),
      'cache-control': cache,
      'x-request-id': requestId,
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  async function route(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const rawId = req.headers['x-request-id'];
    const headerId = typeof rawId === 'string' && REQUEST_ID.test(rawId) ? rawId : undefined;
    const requestId = headerId ?? randomId('req_');
    const isGet = req.method === 'GET' || req.method === 'HEAD';
    if (path === JWKS_PATH && isGet) return getJson(req, res, requestId, config.key.jwks, 'public, max-age=60');
    if (path === AUTHZEN_PATHS.configuration && isGet) {
      return getJson(req, res, requestId, configurationDocument(config.issuer()), 'public, max-age=60');
    }
    if (DECISION_ROUTES.has(path) && req.method === 'POST') {
      if (typeof rawId === 'string' && headerId === undefined) {
        throw badRequest('x-request-id must be 1-200 visible ASCII characters');
      }
      if (await faulted(req, res, path, requestId)) return;
      if (!agentKey(req)) throw new HttpError(401, 'unauthorized', 'a valid API key is required');
      if (path === AUTHORIZE_PATH) return authorize(req, res, headerId);
      if (path === AUTHZEN_PATHS.evaluation) return evaluation(req, res, headerId);
      return evaluations(req, res, requestId);
    }
    if (config.console !== undefined && (path === '/console' || path.startsWith('/console/'))) {
      return config.console.handle(req, res, path);
    }
    const match = ESCALATION_PATH.exec(path);
    if (match?.[1] !== undefined && req.method === 'POST') return escalation(req, res, match[1], requestId);
    req.resume();
    throw new HttpError(404, 'not_found', 'no such endpoint');
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let path: string;
    try {
      path = new URL(req.url ?? '/', 'http://localhost').pathname;
    } catch {
      path = '';
    }
    const known = DECISION_ROUTES.has(path) || path === JWKS_PATH || path === AUTHZEN_PATHS.configuration;
    const routeName = known ? path : ESCALATION_PATH.test(path) ? '/api/escalations/{id}' : '(other)';
    try {
      await route(req, res, path);
    } catch (error) {
      const rawId = req.headers['x-request-id'];
      const replyId = typeof rawId === 'string' && REQUEST_ID.test(rawId) ? rawId : randomId('req_');
      // a body that was not read cannot be left on a kept-alive connection
      if (!req.complete) req.resume();
      // the path of a request to no endpoint is logged: a PEP configured with a wrong pdpUrl shows here
      refuse(req, res, routeName, replyId, error, routeName === '(other)' ? path : undefined);
    }
  }

  const server = createServer({ connectionsCheckingInterval: checkingIntervalMs(config.timeouts) }, (req, res) => {
    void handle(req, res);
  });
  applyTimeouts(server, config.timeouts);
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    const timedOut = error.code === 'ERR_HTTP_REQUEST_TIMEOUT';
    const [status, code, text] = timedOut
      ? ([408, 'request_timeout', 'Request Timeout'] as const)
      : ([400, 'bad_request', 'Bad Request'] as const);
    config.log({ status, code, method: '?', route: '(unparsed)' });
    if (socket.writable) {
      const body = errorBody(code, timedOut ? 'the request took too long' : 'malformed HTTP request');
      socket.end(
        `HTTP/1.1 ${status} ${text}\r\nconnection: close\r\ncontent-type: ${JSON_TYPE}\r\ncontent-length: ${body.length}\r\n\r\n${body.toString('utf8')}`,
      );
    } else {
      socket.destroy();
    }
  });

  return {
    server,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const timer of timers) clearInterval(timer);
        timers.clear();
        for (const socket of sockets) socket.destroy();
        sockets.clear();
        if (!server.listening) resolve();
      });
      return closing;
    },
  };
}
