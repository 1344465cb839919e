/**
 * `POST /api/escalations/{id}`: a reviewer resolves an open escalation (docs/dev-pdp.md); 404 without a
 * reviewer key, 401 without the right one.
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DEV_PDP_DEFAULTS } from '../defaults.js';
import { EscalationError } from '../escalations.js';
import { badRequest, HttpError, jsonBody, readJsonObject, send } from '../http.js';
import type { RequestIds, RouteContext } from './context.js';

/** The path of the escalation endpoint; group 1 is the escalation id. @internal */
export const ESCALATION_PATH = /^\/api\/escalations\/([A-Za-z0-9_-]{1,200})$/;

/** The body of `POST /api/escalations/{id}`: `{ resolution: 'approve' | 'deny', note? }`. */
function resolutionOf(body: Record<string, unknown>): { resolution: 'approve' | 'deny'; note: string | undefined } {
  const { resolution, note } = body;
  if (resolution !== 'approve' && resolution !== 'deny') throw badRequest('resolution must be "approve" or "deny"');
  if (note !== undefined && (typeof note !== 'string' || note.length > DEV_PDP_DEFAULTS.consoleNoteLength)) {
    throw badRequest(`note must be a string of at most ${DEV_PDP_DEFAULTS.consoleNoteLength} characters`);
  }
  return { resolution, note };
}

/** Resolves escalation `id` as the reviewer's body says; 409 when already resolved, 404 when unknown. @internal */
export async function escalationRequest(
  ctx: RouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  id: string,
  ids: RequestIds,
): Promise<void> {
  if (ctx.reviewerKey === undefined) throw new HttpError(404, 'not_found', 'no such endpoint');
  if (!ctx.reviewerKey(req)) throw new HttpError(401, 'unauthorized', 'a valid reviewer key is required');
  const body = await readJsonObject(req, DEV_PDP_DEFAULTS.escalationBodyBytes);
  const { resolution, note } = resolutionOf(body);
  try {
    ctx.config.escalations.resolve(id, resolution, 'api', note);
  } catch (error) {
    if (error instanceof EscalationError && error.code === 'escalation_already_resolved') {
      throw new HttpError(409, error.code, 'escalation already resolved');
    }
    throw new HttpError(404, 'escalation_not_found', 'unknown escalation id');
  }
  send(res, ids.reply, 200, jsonBody({ escalationId: id, resolution }));
}
