import { resolveOptions } from '../options/pep.js';
import { decideAll } from './batch.js';
import { runStep } from './decide.js';
import { observe } from './observe.js';
import { isSessionId } from './request.js';
import { createShared, permitChecker } from './shared.js';
import { visibleTools } from './visibility.js';
/**
 * Creates the client pipeline: resolves the options once (one frozen config) and builds the shared state.
 * @throws TypeError with `err.option` on a bad option (see `createPep`)
 * @internal
 */
export function createClient(options) {
    const shared = createShared(resolveOptions(options));
    return bindClient(shared, shared.opts.session);
}
/** What the guard helpers of one session are built from. */
function internalsOf(b) {
    const { shared } = b;
    const { opts } = shared;
    return {
        agentId: opts.agentId,
        session: b.session,
        timeoutMs: opts.timeoutMs,
        permits: opts.permits === undefined ? undefined : opts.permits === false ? 'off' : 'on',
        checker: () => permitChecker(shared),
        run: (stage, payload, rawOpts, snapshot) => runStep(b, stage, payload, rawOpts, snapshot),
        observe(outcome, started, tool) {
            shared.telemetry?.record(outcome.decision, outcome.attempts, started, tool);
            return observe(opts.onDecision, outcome, started, tool);
        },
        after: shared.chains.action.after,
    };
}
function bindClient(shared, session) {
    const b = { shared, session };
    const run = async (stage, payload, rawOpts) => (await runStep(b, stage, payload, rawOpts)).decision;
    return {
        authorizeAction: (tool, args, o) => run('action', { tool, args }, o),
        authorizeActions: (calls, o) => decideAll(b, calls, o),
        visibleTools: (names, o) => visibleTools(names, o, (calls, v) => decideAll(b, calls, undefined, v)),
        checkInput: (content, o) => run('input', { content }, o),
        checkContextEgress: (content, o) => run('context_egress', { content }, o),
        checkOutput: (content, o) => run('output', { content }, o),
        checkDelivery: (content, o) => run('delivery', { content }, o),
        withSession(id) {
            if (!isSessionId(id))
                throw new TypeError('withSession: expected a non-empty session id');
            return bindClient(shared, id);
        },
        async close() {
            shared.ctx.closed = true;
            shared.ctx.inflight.stopAll('closed');
            await shared.ctx.transport.close();
        },
        internals: internalsOf(b),
    };
}
