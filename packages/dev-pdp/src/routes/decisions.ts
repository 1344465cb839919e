/**
 * The decision endpoints of the dev PDP: the native `POST /api/policy/authorize` (docs/fail-closed.md)
 * and the AuthZEN 1.0 evaluation endpoints, behind the injected fault and the API key.
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  AUTHZEN_PATHS,
  fromEvaluation,
  parseEvaluations,
  stopsAfter,
  toEvaluationAnswer,
  toEvaluationError,
} from '../authzen.js';
import { decide } from '../decide.js';
import { DEV_PDP_DEFAULTS } from '../defaults.js';
import { GARBAGE_BODY } from '../faults.js';
import { badRequest, HttpError, JSON_TYPE, readBody, readJsonObject } from '../http.js';
import type { RefusedRequest } from '../log.js';
import type { DecisionRequest } from '../request.js';
import { fromAuthorizeBody, toAuthorizeAnswer } from '../wire.js';
import { answer, type RequestIds, type Route, type RouteContext, refuse } from './context.js';

/**
 * The request, when it is within the limits nothing may be stored past (contract section 19): a
 * session id of at most `maxSessionLength` characters.
 * @throws HttpError 400 `session_too_long`
 */
function limited(request: DecisionRequest): DecisionRequest {
  if (request.session.length > DEV_PDP_DEFAULTS.maxSessionLength) {
    throw new HttpError(
      400,
      'session_too_long',
      `session ids are at most ${DEV_PDP_DEFAULTS.maxSessionLength} characters`,
    );
  }
  return request;
}

/** The native decision endpoint. @internal */
export const AUTHORIZE_PATH = '/api/policy/authorize';

/** `POST /api/policy/authorize`: one step, answered in the native protocol. */
const authorize: Route = async (ctx, req, res, ids) => {
  const { config } = ctx;
  const body = await readJsonObject(req, config.maxBodyBytes);
  const decision = await decide(config, limited(fromAuthorizeBody(body, config.policy, ids.header)));
  answer(ctx, res, decision.requestId, toAuthorizeAnswer(decision));
};

/** `POST /access/v1/evaluation`: one AuthZEN evaluation. */
const evaluation: Route = async (ctx, req, res, ids) => {
  const { config } = ctx;
  const body = await readJsonObject(req, config.maxBodyBytes);
  const parts = { subject: body.subject, action: body.action, resource: body.resource, context: body.context };
  const decision = await decide(config, limited(fromEvaluation(parts, config.policy, ids.header)));
  answer(ctx, res, ids.header ?? decision.requestId, toEvaluationAnswer(decision));
};

/** One item of a batch, decided on its own; a refused item is logged and answered as an error result. */
async function evaluationItem(
  ctx: RouteContext,
  item: Parameters<typeof fromEvaluation>[0],
): Promise<{ decision: boolean; context: Record<string, unknown> }> {
  try {
    return toEvaluationAnswer(await decide(ctx.config, limited(fromEvaluation(item, ctx.config.policy, undefined))));
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    const refusal: RefusedRequest = {
      status: error.status,
      code: error.code,
      method: 'POST',
      route: AUTHZEN_PATHS.evaluations,
    };
    ctx.config.log(refusal);
    return toEvaluationError(error);
  }
}

/** `POST /access/v1/evaluations`: a batch, one item at a time, in order, up to where its semantic stops. */
const evaluations: Route = async (ctx, req, res, ids) => {
  const { config } = ctx;
  const body = await readJsonObject(req, config.maxBodyBytes);
  const batch = parseEvaluations(body, DEV_PDP_DEFAULTS.maxEvaluations);
  if (batch.single) {
    const [only] = batch.items;
    const decision = await decide(
      config,
      limited(fromEvaluation(only as (typeof batch.items)[0], config.policy, undefined)),
    );
    answer(ctx, res, ids.reply, toEvaluationAnswer(decision));
    return;
  }
  const results: unknown[] = [];
  // one at a time, in order: each item is decided on its own (its request id, its permit, its record)
  for (const item of batch.items) {
    const result = await evaluationItem(ctx, item);
    results.push(result);
    if (stopsAfter(batch.semantic, result.decision)) break;
  }
  answer(ctx, res, ids.reply, { evaluations: results });
};

/** The decision endpoints, by path. @internal */
export const DECISION_ROUTES: ReadonlyMap<string, Route> = new Map([
  [AUTHORIZE_PATH, authorize],
  [AUTHZEN_PATHS.evaluation, evaluation],
  [AUTHZEN_PATHS.evaluations, evaluations],
]);

/** Applies the injected fault; true when it answered (or will never answer). */
async function faulted(
  ctx: RouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  route: string,
  replyId: string,
): Promise<boolean> {
  const fault = ctx.config.fault();
  if (fault === null || fault.kind === 'slow') return false;
  if (fault.kind === 'reset') {
    req.socket.resetAndDestroy();
    return true;
  }
  if (fault.kind === 'hang') {
    req.resume(); // read the request, never answer; close() ends the socket
    return true;
  }
  await readBody(req, ctx.config.maxBodyBytes).catch(() => undefined);
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
  refuse(ctx, req, res, route, replyId, new HttpError(fault.status, 'fault_status', 'injected fault'));
  return true;
}

/**
 * A decision request to `path`: a bad `x-request-id` is a 400, then the injected fault (if any) answers,
 * then the API key is checked, then `handler` decides.
 * @internal
 */
export async function decisionRequest(
  ctx: RouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  handler: Route,
  ids: RequestIds,
): Promise<void> {
  if (typeof ids.raw === 'string' && ids.header === undefined) {
    throw badRequest('x-request-id must be 1-200 visible ASCII characters');
  }
  if (await faulted(ctx, req, res, path, ids.reply)) return;
  if (!ctx.agentKey(req)) throw new HttpError(401, 'unauthorized', 'a valid API key is required');
  return handler(ctx, req, res, ids);
}
