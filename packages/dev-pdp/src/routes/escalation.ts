/**
 * The escalation endpoints (docs/dev-pdp.md): `POST /api/escalations/{id}` resolves one and
 * `GET /api/escalations` lists the pending ones (reviewer key; 404 without one); `GET
 * /api/escalations/{id}` says where one stands, `{ status }` only (the agent's API key or the reviewer
 * key), so an agent can wait for its review and retry. The reviewer key is throttled here as at the
 * console's sign-in, by one counter per client address.
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DEV_PDP_DEFAULTS } from '../defaults.js';
import { EscalationError, type PendingEscalation } from '../escalations.js';
import type { HeldSession } from '../held-session.js';
import { badRequest, HttpError, jsonBody, readJsonObject, send } from '../http.js';
import { storeUnavailable } from '../sessions/keeper.js';
import type { RequestIds, RouteContext } from './context.js';

/** The path of one escalation; group 1 is the escalation id. @internal */
export const ESCALATION_PATH = /^\/api\/escalations\/([A-Za-z0-9_-]{1,200})$/;

/** The path of the list of pending escalations. @internal */
export const ESCALATIONS_PATH = '/api/escalations';

/** The body of `POST /api/escalations/{id}`: `{ resolution: 'approve' | 'deny', note? }`. */
function resolutionOf(body: Record<string, unknown>): { resolution: 'approve' | 'deny'; note: string | undefined } {
  const { resolution, note } = body;
  if (resolution !== 'approve' && resolution !== 'deny') throw badRequest('resolution must be "approve" or "deny"');
  if (note !== undefined && (typeof note !== 'string' || note.length > DEV_PDP_DEFAULTS.consoleNoteLength)) {
    throw badRequest(`note must be a string of at most ${DEV_PDP_DEFAULTS.consoleNoteLength} characters`);
  }
  return { resolution, note };
}

/**
 * Checks the reviewer key, throttled per client address: a client past its failed attempts is refused
 * 429 (`retry-after`) whatever key it sends; a wrong key counts one failure and is a 401.
 * @throws HttpError 404 without a reviewer key, 429, 401
 */
function requireReviewer(ctx: RouteContext, req: IncomingMessage): void {
  if (ctx.reviewerKey === undefined) throw new HttpError(404, 'not_found', 'no such endpoint');
  const client = req.socket.remoteAddress ?? '?';
  const retryAfter = ctx.config.throttle.blocked(client);
  if (retryAfter !== undefined) {
    throw new HttpError(429, 'too_many_requests', 'too many failed reviewer-key attempts; wait and try again', {
      'retry-after': String(retryAfter),
    });
  }
  if (!ctx.reviewerKey(req)) {
    ctx.config.throttle.failed(client);
    throw new HttpError(401, 'unauthorized', 'a valid reviewer key is required');
  }
}

/** A store that did not answer is a 503; an EscalationError passes. */
function storeFailure(error: unknown): never {
  if (error instanceof EscalationError || error instanceof HttpError) throw error;
  throw storeUnavailable();
}

/** Resolves escalation `id` as the reviewer's body says; 409 when already resolved, 404 when unknown. @internal */
export async function escalationRequest(
  ctx: RouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  id: string,
  ids: RequestIds,
): Promise<void> {
  requireReviewer(ctx, req);
  const body = await readJsonObject(req, DEV_PDP_DEFAULTS.escalationBodyBytes);
  const { resolution, note } = resolutionOf(body);
  try {
    await ctx.config.escalations.resolve(id, resolution, 'api', note).catch(storeFailure);
  } catch (error) {
    if (error instanceof EscalationError && error.code === 'escalation_already_resolved') {
      throw new HttpError(409, error.code, 'escalation already resolved');
    }
    if (error instanceof HttpError) throw error;
    throw new HttpError(404, 'escalation_not_found', 'unknown escalation id');
  }
  send(res, ids.reply, 200, jsonBody({ escalationId: id, resolution }));
}

/**
 * The session of a held request as `GET /api/escalations` lists it: `grants` (each with `expiresAt` as
 * an ISO 8601 time), `flows`, and `origin` and `grantsLeftOut` when there are.
 */
function heldListed(held: HeldSession): Record<string, unknown> {
  return {
    grants: held.grants.map(({ expiresAt, ...g }) => ({
      ...g,
      ...(expiresAt !== undefined ? { expiresAt: new Date(expiresAt).toISOString() } : {}),
    })),
    ...(held.grantsLeftOut !== undefined ? { grantsLeftOut: held.grantsLeftOut } : {}),
    flows: held.flows,
    ...(held.origin !== undefined ? { origin: held.origin } : {}),
  };
}

/** One pending escalation as `GET /api/escalations` lists it: what a reviewer needs to decide. */
function listed(e: PendingEscalation, escalationTtlMs: number): Record<string, unknown> {
  const { subject } = e;
  return {
    escalationId: e.id,
    agentId: subject.agentId,
    session: subject.session,
    stage: subject.stage,
    ...(subject.tool !== undefined ? { tool: subject.tool } : {}),
    ...(subject.stage === 'action' ? { argsHash: subject.hash } : {}),
    ...(subject.toolPin !== undefined ? { toolPin: subject.toolPin } : {}),
    ...(e.reason !== undefined ? { reason: e.reason } : {}),
    latches: e.latches,
    ...(e.labels !== undefined ? { labels: e.labels } : {}),
    ...(e.args !== undefined ? { args: e.args } : {}),
    ...(e.content !== undefined ? { content: e.content } : {}),
    ...(e.held !== undefined ? heldListed(e.held) : {}),
    openedAt: new Date(e.openedAt).toISOString(),
    expiresAt: new Date(e.openedAt + escalationTtlMs).toISOString(),
  };
}

/** `GET /api/escalations` (reviewer key): the pending escalations, newest first. @internal */
export async function listEscalations(
  ctx: RouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  ids: RequestIds,
): Promise<void> {
  requireReviewer(ctx, req);
  req.resume();
  const pending = await ctx.config.escalations.pending().catch(storeFailure);
  const ttl = ctx.config.escalationTtlMs;
  send(res, ids.reply, 200, jsonBody({ escalations: pending.map((e) => listed(e, ttl)) }));
}

/**
 * `GET /api/escalations/{id}`: `{ status: 'pending' | 'approved' | 'denied' | 'expired' }`, never the
 * args, with the agent's API key (or the reviewer key, throttled); 404 for an unknown id.
 * @internal
 */
export async function escalationStatus(
  ctx: RouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  id: string,
  ids: RequestIds,
): Promise<void> {
  req.resume();
  if (!ctx.agentKey(req)) {
    if (ctx.reviewerKey === undefined) throw new HttpError(401, 'unauthorized', 'a valid API key is required');
    requireReviewer(ctx, req);
  }
  const status = await ctx.config.escalations.status(id).catch(storeFailure);
  if (status === undefined) throw new HttpError(404, 'escalation_not_found', 'unknown escalation id');
  send(res, ids.reply, 200, jsonBody({ status }));
}
