/**
 * Where AuthZEN evaluations go: the paths under `pdpUrl`, or, with `discover: true`, the endpoints of
 * the PDP's discovery document (AuthZEN 1.0 section 9; for a `pdpUrl` with a path, the tenant form
 * `/.well-known/authzen-configuration/{path}`, then `{path}/.well-known/authzen-configuration`), fetched once, within the deadline of the first
 * decision that needs it. A document for another `policy_decision_point` is discarded for good: every
 * decision is then a synthesized BLOCK `pdp_unreachable` (docs/authzen.md).
 * @internal
 */

import { ABORT_CAUSES } from '../internal/abort.js';
import { joinUrl } from '../internal/url.js';
import type { HttpResponse } from '../transport/types.js';
import {
  AUTHZEN_PATHS,
  DiscardedConfiguration,
  defaultEndpoints,
  type Endpoints,
  parseConfiguration,
} from '../wire/authzen.js';
import { type DecisionContext, type Exchanged, exchange } from './exchange.js';

/**
 * Resolves the endpoints for one decision, within its deadline; `aborted` as soon as the caller's
 * `signal` fires (the fetch itself goes on for the other decisions waiting on it). Never rejects.
 */
export type EndpointSource = (deadlineAt: number, signal?: AbortSignal) => Promise<Exchanged<Endpoints>>;

const ABORTED: Exchanged<never> = Object.freeze({
  ok: false,
  code: ABORT_CAUSES.caller.code,
  message: ABORT_CAUSES.caller.message,
  attempts: 0,
});

/**
 * `work`, or `aborted` when the caller's `signal` fires first. A signal that cannot be listened to
 * fails closed (`invalid_request`), as in an exchange.
 */
function unlessAborted<T>(work: Promise<Exchanged<T>>, signal: AbortSignal | undefined): Promise<Exchanged<T>> {
  if (signal === undefined) return work;
  if (signal.aborted) return Promise.resolve(ABORTED);
  return new Promise((resolve) => {
    const onAbort = (): void => resolve(ABORTED);
    try {
      signal.addEventListener('abort', onAbort, { once: true });
    } catch {
      resolve({ ok: false, code: 'invalid_request', message: 'signal must be an AbortSignal', attempts: 0 });
      return;
    }
    work
      .then(resolve, () =>
        // Unreachable by design (the fetch never rejects); a bug still fails closed.
        resolve({ ok: false, code: 'pdp_unreachable', message: 'AuthZEN discovery failed', attempts: 0 }),
      )
      .finally(() => {
        try {
          signal.removeEventListener('abort', onAbort);
        } catch {
          // a signal that throws here cannot keep the decision from resolving
        }
      });
  });
}

/** The AuthZEN paths under `base` (the path of `pdpUrl`). */
export function fixedEndpoints(base: string): EndpointSource {
  const value = defaultEndpoints(base);
  const ready = Promise.resolve({ ok: true, value, attempts: 0 } as const);
  return () => ready;
}

/**
 * The endpoints of the discovery document of `pdpUrl`. A failed
 * fetch fails the decisions waiting on it with its code and is tried again by the next decision; a
 * document that is discarded stays discarded.
 */
export function discoveredEndpoints(
  ctx: DecisionContext,
  pdp: URL,
  base: string,
  headers: Readonly<Record<string, string>>,
): EndpointSource {
  const { 'content-type': _type, ...getHeaders } = headers;
  let known: Endpoints | undefined;
  let discarded: string | undefined;
  let pending: Promise<Exchanged<Endpoints | DiscardedConfiguration>> | undefined;
  const refused = (): Exchanged<never> => ({
    ok: false,
    code: 'pdp_unreachable',
    message: `AuthZEN discovery document discarded: ${discarded}`,
    attempts: 0,
  });
  const read = (res: HttpResponse): Endpoints | DiscardedConfiguration => {
    try {
      return parseConfiguration(res.body, pdp);
    } catch (err) {
      if (err instanceof DiscardedConfiguration) return err;
      throw err;
    }
  };
  const get = (path: string, deadlineAt: number) =>
    exchange(ctx, undefined, { path, headers: getHeaders, body: () => undefined }, deadlineAt, read);
  // AuthZEN 1.0 section 9 (as RFC 8414): the well-known path goes between the host and the path of
  // pdpUrl; a PDP that serves it under its path instead (Keycloak: /realms/{realm}/.well-known/...) is
  // asked there after a 404.
  const fetchDocument = async (deadlineAt: number) => {
    if (base === '') return get(AUTHZEN_PATHS.configuration, deadlineAt);
    const first = await get(joinUrl(AUTHZEN_PATHS.configuration, base), deadlineAt);
    if (first.ok || first.status !== 404) return first;
    return get(joinUrl(base, AUTHZEN_PATHS.configuration), deadlineAt);
  };
  return async (deadlineAt, signal) => {
    if (discarded !== undefined) return refused();
    if (known !== undefined) return { ok: true, value: known, attempts: 0 };
    if (signal?.aborted) return ABORTED;
    pending ??= fetchDocument(deadlineAt).then((r) => {
      pending = undefined;
      if (r.ok) {
        if (r.value instanceof DiscardedConfiguration) discarded = r.value.message;
        else known = r.value;
      }
      return r;
    });
    const r = await unlessAborted(pending, signal);
    if (!r.ok) return r;
    if (r.value instanceof DiscardedConfiguration) return refused();
    return { ok: true, value: r.value, attempts: r.attempts };
  };
}
