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
import {
  ESCALATION_PATH,
  ESCALATIONS_PATH,
  escalationRequest,
  escalationStatus,
  listEscalations,
} from './routes/escalation.js';
import { HEALTH_PATHS, healthz, readyz } from './routes/health.js';

export type { DevPdpErrorCode } from './http.js';
export type { ServerConfig } from './routes/context.js';

/** The running server. @internal */
export interface PdpServer {
  readonly server: Server;
  /** Destroys every open socket (hung ones included) and stops listening. */
  close(): Promise<void>;
  /**
   * Stops taking decisions (503 `draining`, `/readyz` 503) and new connections, and resolves once
   * every request in flight is answered, or after `timeoutMs` (the caller then closes).
   */
  drain(timeoutMs: number): Promise<void>;
}

/** The GET (and HEAD) endpoints, by path. */
const GET_ROUTES: ReadonlyMap<string, Route> = new Map([
  [JWKS_PATH, jwks],
  [AUTHZEN_PATHS.configuration, configuration],
  [HEALTH_PATHS.healthz, healthz],
  [HEALTH_PATHS.readyz, readyz],
  [ESCALATIONS_PATH, listEscalations],
]);

/** Finds the route of `path` and runs it; an unknown endpoint is a 404. */
async function route(ctx: RouteContext, req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  const ids: RequestIds = requestIds(req);
  const get = GET_ROUTES.get(path);
  if (get !== undefined && (req.method === 'GET' || req.method === 'HEAD')) return get(ctx, req, res, ids);
  const decision = DECISION_ROUTES.get(path);
  if (decision !== undefined && req.method === 'POST') {
    if (ctx.draining) {
      req.resume();
      throw new HttpError(503, 'draining', 'this PDP is shutting down; ask another replica', { connection: 'close' });
    }
    return decisionRequest(ctx, req, res, path, decision, ids);
  }
  const reviewerConsole = ctx.config.console;
  if (reviewerConsole !== undefined && (path === '/console' || path.startsWith('/console/'))) {
    return reviewerConsole.handle(req, res, path);
  }
  const match = ESCALATION_PATH.exec(path);
  if (match?.[1] !== undefined && req.method === 'POST') return escalationRequest(ctx, req, res, match[1], ids);
  if (match?.[1] !== undefined && req.method === 'GET') return escalationStatus(ctx, req, res, match[1], ids);
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
  if (req.url !== undefined && DECISION_ROUTES.has(req.url)) {
    // a decision route as sent: already its own pathname (parsing a URL cost ~4% of a decision)
    path = req.url;
  } else {
    try {
      path = new URL(req.url ?? '/', 'http://localhost').pathname;
    } catch {
      path = '';
    }
  }
  const name = routeName(path);
  ctx.inFlight++;
  // a draining PDP ends each connection with its answer
  if (ctx.draining) res.setHeader('connection', 'close');
  res.once('close', () => {
    ctx.inFlight--;
    if (ctx.inFlight === 0) ctx.idle?.();
  });
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
    drain(timeoutMs: number) {
      ctx.draining = true;
      // no new connection; kept-alive ones are told to close with their next answer
      server.close();
      server.closeIdleConnections();
      if (ctx.inFlight === 0) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        timer.unref();
        ctx.idle = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    },
  };
}
