/**
 * `createPep`: the client pipeline of `core/` with the guard helpers (`guardTool`, `guardText`) on
 * top. The composition root of the client: it imports the pipeline and the enforcement helpers, and
 * nothing imports it but the entry points and the adapters.
 * @packageDocumentation
 */
import { createClient } from './core/client.js';
import { makeGuards } from './enforce/guard.js';
import { makeKernel } from './enforce/kernel.js';
import { registerKernel } from './enforce/registry.js';
/**
 * Creates a PEP client that sends every step to the PDP and enforces its verdict, failing closed.
 *
 * @param options - see {@link PepOptions}; `pdpUrl`, `agentId` and `session` are required
 * @returns a {@link Pep} with its own keep-alive connection pool
 * @throws Error naming `@opentelemetry/api` when `telemetry` is set and that package is not installed
 * @throws TypeError synchronously on a bad option, with `err.option` naming its path (missing or
 *   non-http(s) `pdpUrl`, empty `agentId` or `session`, negative or non-integer numbers, a duration past
 *   2^31 - 1 ms, `none`/HMAC permit algorithms, an unknown key at any level, duplicate interceptor names, ...)
 * @remarks The five stage methods never reject. A PDP that is down, slow, answers anything but a
 * valid, enforceable decision (docs/fail-closed.md, rules 1-5; RFC 7493 I-JSON), an interceptor that
 * fails, or a caller's abort yields a synthesized BLOCK with a {@link FailClosedCode}, never an ALLOW.
 * With `protocol: 'authzen'` the same rules hold on the OpenID AuthZEN 1.0 wire (docs/authzen.md):
 * a `decision` that is not a boolean, a profile verdict that contradicts it, or (with `discover: true`)
 * a discovery document for another `policy_decision_point` fails closed too.
 * @example
 * ```ts
 * const pep = createPep({ pdpUrl: 'http://127.0.0.1:8787', agentId: 'support-ai', session: 'sess_demo',
 *   permits: { keys: 'http://127.0.0.1:8787/.well-known/jwks.json', issuer: 'http://127.0.0.1:8787' } });
 * const d = await pep.checkInput('Where is my order?');
 * if (d.verdict === 'BLOCK') console.log(d.synthesized?.code ?? d.reason);
 * await pep.close();
 * ```
 */
export function createPep(options) {
    return withGuards(createClient(options));
}
/** A core client with the enforcement layer (src/enforce/) and the guard helpers of its session. */
function withGuards(core) {
    const kernel = makeKernel(core.internals);
    const guards = makeGuards(kernel);
    const pep = {
        authorizeAction: core.authorizeAction,
        authorizeActions: core.authorizeActions,
        visibleTools: core.visibleTools,
        checkInput: core.checkInput,
        checkContextEgress: core.checkContextEgress,
        checkOutput: core.checkOutput,
        checkDelivery: core.checkDelivery,
        guardTool: guards.guardTool,
        guardText: guards.guardText,
        withSession: (id) => withGuards(core.withSession(id)),
        close: core.close,
    };
    // Adapters decide through the client's enforcement layer (docs/adapters.md); its own refusals
    // (tool_changed, docs/visibility.md) reach the observers and telemetry like any decision.
    registerKernel(pep, kernel);
    return pep;
}
