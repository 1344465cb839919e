/**
 * What one client shares between its decisions and its `withSession` clients: the frozen config, the
 * transport and in-flight registry, the headers, the interceptor chains per stage, the AuthZEN
 * endpoints, telemetry and the permit checker. Built once by `createClient`.
 * @internal
 */

import { Inflight } from '../internal/inflight.js';
import { optionError } from '../internal/option-kit.js';
import type { ResolvedOptions } from '../options/pep.js';
import { createPermitChecker, type PermitChecker } from '../permit/verifier.js';
import { createTelemetry, type Telemetry } from '../telemetry.js';
import { FetchTransport } from '../transport/fetch.js';
import { HttpTransport } from '../transport/http.js';
import { undiciLoads } from '../transport/pool.js';
import type { Transport } from '../transport/types.js';
import { VERSION } from '../version.js';
import { discoveredEndpoints, type EndpointSource, fixedEndpoints } from './discovery.js';
import type { DecisionContext } from './exchange.js';
import { type Chains, chainsByStage } from './interceptors.js';
import { baseHeaders } from './request.js';
import { SessionSteps } from './session-steps.js';

/** One client's shared state. */
export interface Shared {
  readonly opts: ResolvedOptions;
  readonly ctx: DecisionContext;
  readonly headers: Readonly<Record<string, string>>;
  readonly chains: Chains;
  /** AuthZEN: where evaluations go (fixed paths, or the discovery document's). */
  readonly endpoints: EndpointSource | undefined;
  checker: PermitChecker | undefined;
  /** Set only with the `telemetry` option (then `@opentelemetry/api` is loaded). */
  readonly telemetry: Telemetry | undefined;
  /** `sessionStep` counts, per session id. */
  readonly steps: SessionSteps;
}

/** The checker, counting each result in `pep.permit.verifications` when telemetry is on. */
function counted(checker: PermitChecker, telemetry: Telemetry | undefined): PermitChecker {
  return telemetry ? { check: (permit, expected) => telemetry.countPermit(checker.check(permit, expected)) } : checker;
}

/**
 * The client's transport (docs/runtimes.md): `fetch` when asked for, or where undici cannot load
 * (workerd, Vercel Edge) and no dispatcher was given; else undici.
 * @throws TypeError (`err.option` = `'transport'`) for `transport: 'undici'` where undici cannot load,
 *   or `'fetch'` where the runtime has no `fetch`
 */
function transportOf(opts: ResolvedOptions): Transport {
  const { origin, path, maxResponseBytes } = opts;
  const kind = opts.transport ?? (opts.dispatcher !== undefined || undiciLoads() ? 'undici' : 'fetch');
  if (kind === 'fetch') {
    if (opts.fetch === undefined && typeof globalThis.fetch !== 'function') {
      optionError('createPep', 'transport', 'this runtime has no fetch');
    }
    return new FetchTransport({ origin, path, maxResponseBytes, fetch: opts.fetch });
  }
  if (opts.dispatcher === undefined && !undiciLoads()) {
    optionError('createPep', 'transport', "undici cannot load here; use 'fetch'");
  }
  return new HttpTransport({
    origin,
    path,
    maxResponseBytes,
    dispatcher: opts.dispatcher,
    connections: opts.connections,
  });
}

/** The transport and the decision context of one client. */
function decisionContext(opts: ResolvedOptions): DecisionContext {
  const transport = transportOf(opts);
  return {
    transport,
    inflight: new Inflight(),
    retries: opts.retries,
    attemptTimeoutMs: opts.attemptTimeoutMs,
    enforce: {
      checkPermitBinding: typeof opts.permits === 'object',
      requireEcho: opts.requireEcho,
      // docs/authzen.md: a PDP that mints no permits (AuthZEN with `permits: false`).
      allowWithoutPermit: opts.protocol === 'authzen' && opts.permits === false,
    },
    protocol: opts.protocol,
    closed: false,
  };
}

/**
 * Builds a client's shared state from its resolved options. The permit checker is built now, so that
 * a bad `permits` option (key, issuer, algorithms) is a TypeError at construction.
 * @throws TypeError with `err.option` under `permits`
 */
export function createShared(opts: ResolvedOptions): Shared {
  const ctx = decisionContext(opts);
  const headers = baseHeaders(`agent-pep/${VERSION}`, opts.apiKey);
  let endpoints: EndpointSource | undefined;
  if (opts.protocol === 'authzen') {
    endpoints = opts.discover ? discoveredEndpoints(ctx, opts.pdp, opts.base, headers) : fixedEndpoints(opts.base);
  }
  const shared: Shared = {
    opts,
    ctx,
    headers,
    chains: chainsByStage(opts.interceptors),
    endpoints,
    checker: undefined,
    telemetry: opts.telemetry === undefined ? undefined : createTelemetry(opts.telemetry, { origin: opts.origin }),
    steps: new SessionSteps(),
  };
  if (typeof opts.permits === 'object') {
    try {
      permitChecker(shared);
    } catch (err) {
      throw underPermits(err);
    }
  }
  return shared;
}

/** A permit option error names its path under `permits`. */
function underPermits(err: unknown): unknown {
  if (err instanceof TypeError) {
    const option = (err as TypeError & { option?: unknown }).option;
    (err as TypeError & { option: string }).option =
      typeof option !== 'string' ? 'permits' : option.startsWith('permits') ? option : `permits.${option}`;
  }
  return err;
}

/**
 * The client's permit checker, built on first use.
 * @throws TypeError when `permits` is not configured
 */
export function permitChecker(shared: Shared): PermitChecker {
  if (!shared.checker) {
    const { permits } = shared.opts;
    if (typeof permits !== 'object') throw new TypeError('permits are not configured');
    shared.checker = counted(createPermitChecker(permits), shared.telemetry);
  }
  return shared.checker;
}
