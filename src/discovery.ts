/**
 * Where AuthZEN evaluations go: the paths under `pdpUrl`, or, with `discover: true`, the endpoints of
 * the PDP's discovery document (AuthZEN 1.0 section 9), fetched once, within the deadline of the first
 * decision that needs it. A document for another `policy_decision_point` is discarded for good: every
 * decision is then a synthesized BLOCK `pdp_unreachable` (CONTRACT.md section 9).
 * @internal
 */
import { type DecisionContext, type Exchanged, exchange } from './decide.js';
import {
  AUTHZEN_PATHS,
  DiscardedConfiguration,
  defaultEndpoints,
  type Endpoints,
  parseConfiguration,
} from './protocol/authzen.js';

/** Resolves the endpoints for one decision, within its deadline. Never rejects. */
export type EndpointSource = (deadlineAt: number) => Promise<Exchanged<Endpoints>>;

/** The AuthZEN paths under `base` (the path of `pdpUrl`). */
export function fixedEndpoints(base: string): EndpointSource {
  const value = defaultEndpoints(base);
  const ready = Promise.resolve({ ok: true, value, attempts: 0 } as const);
  return () => ready;
}

/**
 * The endpoints of the discovery document at `{pdpUrl}/.well-known/authzen-configuration`. A failed
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
  return async (deadlineAt) => {
    if (discarded !== undefined) return refused();
    if (known !== undefined) return { ok: true, value: known, attempts: 0 };
    pending ??= exchange(
      ctx,
      undefined,
      { path: `${base}${AUTHZEN_PATHS.configuration}`, headers: getHeaders, body: () => undefined },
      deadlineAt,
      (res) => {
        try {
          return parseConfiguration(res.body, pdp);
        } catch (err) {
          if (err instanceof DiscardedConfiguration) return err;
          throw err;
        }
      },
    ).then((r) => {
      pending = undefined;
      if (r.ok) {
        if (r.value instanceof DiscardedConfiguration) discarded = r.value.message;
        else known = r.value;
      }
      return r;
    });
    const r = await pending;
    if (!r.ok) return r;
    if (r.value instanceof DiscardedConfiguration) return refused();
    return { ok: true, value: r.value, attempts: r.attempts };
  };
}
