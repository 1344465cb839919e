/**
 * The dev PDP's HTTP server (node:http), routing only: the native decision endpoint (docs/fail-closed.md),
 * the AuthZEN 1.0 endpoints and discovery document (docs/dev-pdp.md), the JWKS, the reviewer's
 * escalation endpoint and console. Each route is in src/routes/. Every refusal is answered
 * `{ code, message }` and logged.
 * @packageDocumentation
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { AUTHZEN_PATHS } from './authzen.js';
import { applyTimeouts, checkingIntervalMs, errorBody, HttpError, JSON_TYPE } from './http.js';
import {
  type RequestIds,
  type Route,
  type RouteContext,
  refuse,
  requestIds,
  routeContext,
  type ServerConfig,
} from './routes/context.js';
import { DECISION_ROUTES, decisionRequest } from './routes/decisions.js';
import { configuration, JWKS_PATH, jwks } from './routes/discovery.js';
import { ESCALATION_PATH, escalationRequest } from './routes/escalation.js';

export type { DevPdpErrorCode } from './http.js';
export type { ServerConfig } from './routes/context.js';

/** The running server. @internal */
export interface PdpServer {
  readonly server: Server;
  /** Destroys every open socket (hung ones included) and stops listening. */
  close(): Promise<void>;
}

/** The GET (and HEAD) endpoints, by path. */
const GET_ROUTES: ReadonlyMap<string, Route> = new Map([
  [JWKS_PATH, jwks],
  [AUTHZEN_PATHS.configuration, configuration],
]);

/** Finds the route of `path` and runs it; an unknown endpoint is a 404. */
async function route(ctx: RouteContext, req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  const ids: RequestIds = requestIds(req);
  const get = GET_ROUTES.get(path);
  if (get !== undefined && (req.method === 'GET' || req.method === 'HEAD')) return get(ctx, req, res, ids);
  const decision = DECISION_ROUTES.get(path);
  if (decision !== undefined && req.method === 'POST') return decisionRequest(ctx, req, res, path, decision, ids);
  const reviewerConsole = ctx.config.console;
  if (reviewerConsole !== undefined && (path === '/console' || path.startsWith('/console/'))) {
    return reviewerConsole.handle(req, res, path);
  }
  const match = ESCALATION_PATH.exec(path);
  if (match?.[1] !== undefined && req.method === 'POST') return escalationRequest(ctx, req, res, match[1], ids);
  req.resume();
  throw new HttpError(404, 'not_found', 'no such endpoint');
}

/** The route a refusal is logged under: a known path, the escalation pattern, or `(other)`. */
function routeName(path: string): string {
  if (DECISION_ROUTES.has(path) || GET_ROUTES.has(path)) return path;
  return ESCALATION_PATH.test(path) ? '/api/escalations/{id}' : '(other)';
}

/** Handles one request: routes it, and answers and logs whatever it throws. */
async function handle(ctx: RouteContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  let path: string;
  try {
    path = new URL(req.url ?? '/', 'http://localhost').pathname;
  } catch {
    path = '';
  }
  const name = routeName(path);
  try {
    await route(ctx, req, res, path);
  } catch (error) {
    // a body that was not read cannot be left on a kept-alive connection
    if (!req.complete) req.resume();
    // the path of a request to no endpoint is logged: a PEP configured with a wrong pdpUrl shows here
    refuse(ctx, req, res, name, requestIds(req).reply, error, name === '(other)' ? path : undefined);
  }
}

/** Answers a request node:http could not parse (400) or that took too long to arrive (408), and logs it. */
function clientError(config: ServerConfig, error: NodeJS.ErrnoException, socket: Socket): void {
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
}

/** Creates the server; the caller listens. @internal */
export function createPdpServer(config: ServerConfig): PdpServer {
  const ctx = routeContext(config);
  const sockets = new Set<Socket>();
  let closing: Promise<void> | undefined;
  const server = createServer({ connectionsCheckingInterval: checkingIntervalMs(config.timeouts) }, (req, res) => {
    void handle(ctx, req, res);
  });
  applyTimeouts(server, config.timeouts);
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => clientError(config, error, socket));
  return {
    server,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const timer of ctx.timers) clearInterval(timer);
        ctx.timers.clear();
        for (const socket of sockets) socket.destroy();
        sockets.clear();
        if (!server.listening) resolve();
      });
      return closing;
    },
  };
}
