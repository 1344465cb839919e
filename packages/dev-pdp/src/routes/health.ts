/**
 * `GET /healthz` (the process is up) and `GET /readyz` (the policy is loaded and the stores answer; not
 * while draining), both without the API key and saying nothing but their status (docs/dev-pdp.md).
 * @packageDocumentation
 */
import { HttpError, jsonBody, send } from '../http.js';
import type { Route } from './context.js';

/** The health paths. @internal */
export const HEALTH_PATHS = Object.freeze({ healthz: '/healthz', readyz: '/readyz' });

/** `GET /healthz`: 200 `{ status: 'ok' }` while the process serves. @internal */
export const healthz: Route = async (_ctx, req, res, ids) => {
  req.resume();
  send(res, ids.reply, 200, jsonBody({ status: 'ok' }));
};

/**
 * `GET /readyz`: 200 `{ status: 'ready' }` when a decision can be made now; 503 `draining` during a
 * drain, 503 `session_store_unavailable` when a store does not answer in time. @internal
 */
export const readyz: Route = async (ctx, req, res, ids) => {
  req.resume();
  if (ctx.draining) throw new HttpError(503, 'draining', 'this PDP is shutting down');
  try {
    await ctx.config.ready();
  } catch {
    throw new HttpError(503, 'session_store_unavailable', 'the store did not answer in time');
  }
  send(res, ids.reply, 200, jsonBody({ status: 'ready' }));
};
