/**
 * The reviewer console's routes under `/console` (docs/dev-pdp.md, "The reviewer console"): the page,
 * its script and styles, sign-in and sign-out, and approve/deny. Every answer carries a CSP that allows
 * only this origin; every form post needs the session's CSRF token. Refusals are logged (status and
 * code, never a key, a note or args).
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import contentType from 'content-type';
import type { JSONWebKeySet } from 'jose';
import type { KeyThrottle } from '../auth.js';
import { DEV_PDP_DEFAULTS } from '../defaults.js';
import { type EscalationBook, EscalationError } from '../escalations.js';
import type { EvidenceLog } from '../evidence.js';
import { type DevPdpErrorCode, HttpError, readBody } from '../http.js';
import type { RefusedRequest } from '../log.js';
import { CONSOLE_SCRIPT, CONSOLE_STYLE } from './assets.js';
import { ConsoleAuth, type ConsoleSession } from './auth.js';
import { isHttps, sessionCookie, sessionIdOf } from './cookie.js';
import { csrfPasses } from './csrf.js';
import { EvidenceCheck } from './evidence-check.js';
import { ASSET_PATHS, type ConsoleView, consolePage, messagePage, signInPage, VERDICT_FILTERS } from './pages.js';

/** The `Content-Security-Policy` of every console answer: this origin only, no inline script or style. */
export const CONSOLE_CSP =
  "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'";

/** What the console needs from the PDP. @internal */
export interface ConsoleDeps {
  reviewerApiKey: string;
  apiKey: string | undefined;
  escalations: EscalationBook;
  evidence: EvidenceLog;
  keys: JSONWebKeySet;
  /** Failed reviewer-key attempts, shared with `POST /api/escalations/{id}` and `GET /api/escalations`. */
  throttle: KeyThrottle;
  log(refusal: RefusedRequest): void;
}

/** The console's request handler; it answers every request it is given and never throws. @internal */
export interface ConsoleHandler {
  handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void>;
}

const ESCALATION_PATH = /^\/console\/escalations\/(esc_[A-Za-z0-9_-]{1,200})$/;
const HTML_TYPE = 'text/html; charset=utf-8';

function headers(type: string, length: number): Record<string, string> {
  return {
    'content-type': type,
    'content-length': String(length),
    'cache-control': 'no-store',
    'content-security-policy': CONSOLE_CSP,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'same-origin',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
  };
}

function reply(res: ServerResponse, status: number, type: string, text: string, extra: Record<string, string> = {}) {
  if (res.headersSent || res.destroyed) return;
  const body = Buffer.from(text, 'utf8');
  res.writeHead(status, { ...headers(type, body.length), ...extra });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

function redirect(res: ServerResponse, location: string, extra: Record<string, string> = {}): void {
  reply(res, 303, 'text/plain; charset=utf-8', `See ${location}\n`, { location, ...extra });
}

const wantsJson = (req: IncomingMessage): boolean => /\bapplication\/json\b/.test(req.headers.accept ?? '');

/** Reads a form post (`application/x-www-form-urlencoded`, bounded). */
async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  let type: string | undefined;
  try {
    type = contentType.parse(req).type;
  } catch {
    type = undefined;
  }
  if (type !== 'application/x-www-form-urlencoded') {
    req.resume();
    throw new HttpError(415, 'unsupported_media_type', 'the body must be a form (application/x-www-form-urlencoded)');
  }
  const body = await readBody(req, DEV_PDP_DEFAULTS.consoleFormBytes);
  return new URLSearchParams(body.toString('utf8'));
}

/** One value of a form field: absent, or sent more than once, is undefined. */
function field(form: URLSearchParams, name: string): string | undefined {
  const values = form.getAll(name);
  return values.length === 1 ? values[0] : undefined;
}

/** Makes the console for a PDP with a reviewer key. @internal */
export function createConsole(deps: ConsoleDeps): ConsoleHandler {
  const routes = new ConsoleRoutes(deps);
  return {
    async handle(req, res, path) {
      try {
        await routes.route(req, res, path);
      } catch (error) {
        if (!req.complete) req.resume();
        const e = error instanceof HttpError ? error : new HttpError(500, 'internal_error', 'internal error');
        routes.refuse(req, res, e.status, e.code, e.message);
      }
    },
  };
}

/** The console's routes, one method each. */
class ConsoleRoutes {
  readonly #deps: ConsoleDeps;
  readonly #auth: ConsoleAuth;
  readonly #check: EvidenceCheck;
  readonly #maxAgeSec = Math.floor(DEV_PDP_DEFAULTS.consoleSessionIdleMs / 1000);

  constructor(deps: ConsoleDeps) {
    this.#deps = deps;
    this.#auth = new ConsoleAuth(deps.reviewerApiKey, deps.apiKey, {
      throttle: deps.throttle,
      idleMs: DEV_PDP_DEFAULTS.consoleSessionIdleMs,
    });
    this.#check = new EvidenceCheck(deps.evidence, deps.keys);
  }

  async route(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const method = req.method ?? '';
    const isGet = method === 'GET' || method === 'HEAD';
    if (isGet && (path === '/console' || path === '/console/')) return this.#page(req, res);
    if (isGet && path === ASSET_PATHS.script) return reply(res, 200, 'text/javascript; charset=utf-8', CONSOLE_SCRIPT);
    if (isGet && path === ASSET_PATHS.style) return reply(res, 200, 'text/css; charset=utf-8', CONSOLE_STYLE);
    if (method === 'POST' && path === '/console/sign-in') return this.#signIn(req, res);
    if (method === 'POST' && path === '/console/sign-out') return this.#signOut(req, res);
    const match = ESCALATION_PATH.exec(path);
    if (method === 'POST' && match?.[1] !== undefined) return this.#resolve(req, res, match[1]);
    req.resume();
    this.refuse(req, res, 404, 'not_found', 'There is no such page.');
  }

  /** Logs a refusal and answers it (JSON when the script asked, else a page). */
  refuse(req: IncomingMessage, res: ServerResponse, status: number, code: DevPdpErrorCode, message: string): void {
    this.#deps.log({ status, code, method: req.method ?? '?', route: routeOf(req) });
    if (wantsJson(req)) reply(res, status, 'application/json; charset=utf-8', JSON.stringify({ code, message }));
    else reply(res, status, HTML_TYPE, messagePage(status === 403 ? 'Refused' : 'Not done', message));
  }

  async #page(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const session = this.#auth.session(sessionIdOf(req));
    if (session === undefined || !session.signedIn) return this.#showSignIn(req, res, 200);
    const url = new URL(req.url ?? '/console', 'http://localhost');
    reply(res, 200, HTML_TYPE, consolePage(await this.#view(session, url)));
  }

  /** The sign-in page, with a visitor session (and its cookie) when the request has none. */
  #showSignIn(req: IncomingMessage, res: ServerResponse, status: number, error?: string, retry?: number): void {
    let session = this.#auth.session(sessionIdOf(req));
    const extra: Record<string, string> = {};
    if (session === undefined || session.signedIn) {
      session = this.#auth.visitor();
      extra['set-cookie'] = sessionCookie(session.id, isHttps(req), this.#maxAgeSec);
    }
    if (retry !== undefined) extra['retry-after'] = String(retry);
    reply(res, status, HTML_TYPE, signInPage(session.csrf, error), extra);
  }

  async #view(session: ConsoleSession, url: URL): Promise<ConsoleView> {
    const verdictParam = url.searchParams.get('verdict') ?? '';
    const verdict = VERDICT_FILTERS.includes(verdictParam) ? verdictParam : '';
    const sessionFilter = (url.searchParams.get('session') ?? '').slice(0, 200);
    const log = this.#deps.evidence;
    const pending = (await this.#deps.escalations.pending()).map((p) => ({
      ...p,
      history: log.latest(
        (r) =>
          r.agentId === p.subject.agentId &&
          r.session === p.subject.session &&
          r.stage !== 'review' &&
          r.requestId !== p.requestId &&
          Date.parse(r.ts) <= p.openedAt,
        5,
      ),
    }));
    const decisions = log.latest(
      (r) =>
        r.stage !== 'review' &&
        (verdict === '' || r.verdict === verdict) &&
        (sessionFilter === '' || r.session === sessionFilter),
      DEV_PDP_DEFAULTS.consoleRecentDecisions,
    );
    const view: ConsoleView = {
      csrf: session.csrf,
      now: Date.now(),
      pending,
      decisions,
      reviews: log.latest((r) => r.stage === 'review', 20),
      evidence: await this.#check.status(),
      filter: { verdict, session: sessionFilter },
    };
    const done = url.searchParams.get('done');
    const id = url.searchParams.get('id') ?? '';
    if ((done === 'approve' || done === 'deny') && /^esc_[A-Za-z0-9_-]{1,200}$/.test(id)) {
      view.flash = `${done === 'approve' ? 'Approved' : 'Denied'} ${id}.`;
    }
    return view;
  }

  async #signIn(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = await readForm(req);
    const session = this.#auth.session(sessionIdOf(req));
    if (session === undefined || !csrfPasses(req, form, session.csrf)) {
      this.#deps.log({ status: 403, code: 'forbidden', method: 'POST', route: '/console/sign-in' });
      return this.#showSignIn(req, res, 403, 'The sign-in form expired or did not come from this console; try again.');
    }
    const client = req.socket.remoteAddress ?? '?';
    const result = this.#auth.signIn(client, session.id, field(form, 'key') ?? '');
    if (result.ok) {
      const cookie = sessionCookie(result.session.id, isHttps(req), this.#maxAgeSec);
      return redirect(res, '/console', { 'set-cookie': cookie });
    }
    const [status, code, message] =
      result.why === 'rate_limited'
        ? ([429, 'too_many_requests', 'Too many failed sign-ins from this address; wait and try again.'] as const)
        : result.why === 'agent_key'
          ? ([401, 'unauthorized', "That is the agent's API key; only the reviewer key signs in."] as const)
          : ([401, 'unauthorized', 'That key does not sign in.'] as const);
    this.#deps.log({ status, code, method: 'POST', route: '/console/sign-in' });
    this.#showSignIn(req, res, status, message, result.retryAfterSec);
  }

  async #signOut(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const ok = await this.#authorized(req, res);
    if (ok === undefined) return;
    this.#auth.signOut(ok.session.id);
    redirect(res, '/console', { 'set-cookie': sessionCookie(undefined, isHttps(req), 0) });
  }

  /** The signed-in session of a form post whose CSRF token passes; else refuses and returns undefined. */
  async #authorized(
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<{ session: ConsoleSession; form: URLSearchParams } | undefined> {
    const session = this.#auth.session(sessionIdOf(req));
    if (session === undefined || !session.signedIn) {
      req.resume();
      this.refuse(req, res, 401, 'unauthorized', 'Sign in to the console first.');
      return undefined;
    }
    const form = await readForm(req);
    if (!csrfPasses(req, form, session.csrf)) {
      this.refuse(req, res, 403, 'forbidden', 'The request did not carry this session’s CSRF token.');
      return undefined;
    }
    return { session, form };
  }

  async #resolve(req: IncomingMessage, res: ServerResponse, id: string): Promise<void> {
    const ok = await this.#authorized(req, res);
    if (ok === undefined) return;
    const resolution = field(ok.form, 'resolution');
    const note = (field(ok.form, 'note') ?? '').trim();
    const maxNote = DEV_PDP_DEFAULTS.consoleNoteLength;
    if (resolution !== 'approve' && resolution !== 'deny') {
      return this.refuse(req, res, 400, 'bad_request', 'resolution must be approve or deny');
    }
    if (note.length > maxNote)
      return this.refuse(req, res, 400, 'bad_request', `a note is at most ${maxNote} characters`);
    try {
      await this.#deps.escalations.resolve(id, resolution, 'console', note === '' ? undefined : note);
    } catch (error) {
      if (error instanceof EscalationError && error.code === 'escalation_already_resolved') {
        return this.refuse(req, res, 409, error.code, 'This escalation was already resolved (or it expired).');
      }
      if (!(error instanceof EscalationError)) {
        return this.refuse(
          req,
          res,
          503,
          'session_store_unavailable',
          'The escalation store did not answer; try again.',
        );
      }
      return this.refuse(req, res, 404, 'escalation_not_found', 'There is no such escalation.');
    }
    if (wantsJson(req)) {
      return reply(res, 200, 'application/json; charset=utf-8', JSON.stringify({ escalationId: id, resolution }));
    }
    redirect(res, `/console?done=${resolution}&id=${id}`);
  }
}

/** The route named in a log line: a known console path, never the raw URL. */
function routeOf(req: IncomingMessage): string {
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  if (ESCALATION_PATH.test(path)) return '/console/escalations/{id}';
  const known = [
    '/console',
    '/console/',
    '/console/sign-in',
    '/console/sign-out',
    ASSET_PATHS.script,
    ASSET_PATHS.style,
  ];
  return known.includes(path) ? path : '/console/(other)';
}
