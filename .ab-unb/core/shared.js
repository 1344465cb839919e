/**
 * What one client shares between its decisions and its `withSession` clients: the frozen config, the
 * transport and in-flight registry, the headers, the interceptor chains per stage, the AuthZEN
 * endpoints, telemetry and the permit checker. Built once by `createClient`.
 * @internal
 */
import { Inflight } from '../internal/inflight.js';
import { createPermitChecker } from '../permit/verifier.js';
import { createTelemetry } from '../telemetry.js';
import { HttpTransport } from '../transport/http.js';
import { VERSION } from '../version.js';
import { discoveredEndpoints, fixedEndpoints } from './discovery.js';
import { chainsByStage } from './interceptors.js';
import { baseHeaders } from './request.js';
/** The checker, counting each result in `pep.permit.verifications` when telemetry is on. */
function counted(checker, telemetry) {
    return telemetry ? { check: (permit, expected) => telemetry.countPermit(checker.check(permit, expected)) } : checker;
}
/** The transport and the decision context of one client. */
function decisionContext(opts) {
    const transport = new HttpTransport({
        origin: opts.origin,
        path: opts.path,
        maxResponseBytes: opts.maxResponseBytes,
        dispatcher: opts.dispatcher,
        connections: opts.connections,
    });
    return {
        transport,
        inflight: new Inflight(),
        retries: opts.retries,
        attemptTimeoutMs: opts.attemptTimeoutMs,
        enforce: {
            checkPermitBinding: typeof opts.permits === 'object',
            requireEcho: opts.requireEcho,
            // Section 9: a PDP that mints no permits (AuthZEN with `permits: false`).
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
export function createShared(opts) {
    const ctx = decisionContext(opts);
    const headers = baseHeaders(`agent-pep/${VERSION}`, opts.apiKey);
    let endpoints;
    if (opts.protocol === 'authzen') {
        endpoints = opts.discover ? discoveredEndpoints(ctx, opts.pdp, opts.base, headers) : fixedEndpoints(opts.base);
    }
    const shared = {
        opts,
        ctx,
        headers,
        chains: chainsByStage(opts.interceptors),
        endpoints,
        checker: undefined,
        telemetry: opts.telemetry === undefined ? undefined : createTelemetry(opts.telemetry, { origin: opts.origin }),
    };
    if (typeof opts.permits === 'object') {
        try {
            permitChecker(shared);
        }
        catch (err) {
            throw underPermits(err);
        }
    }
    return shared;
}
/** A permit option error names its path under `permits`. */
function underPermits(err) {
    if (err instanceof TypeError) {
        const option = err.option;
        err.option =
            typeof option !== 'string' ? 'permits' : option.startsWith('permits') ? option : `permits.${option}`;
    }
    return err;
}
/**
 * The client's permit checker, built on first use.
 * @throws TypeError when `permits` is not configured
 */
export function permitChecker(shared) {
    if (!shared.checker) {
        const { permits } = shared.opts;
        if (typeof permits !== 'object')
            throw new TypeError('permits are not configured');
        shared.checker = counted(createPermitChecker(permits), shared.telemetry);
    }
    return shared.checker;
}
