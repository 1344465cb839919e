/**
 * One stage call, decided and observed: the step up to the network (`step.ts`), the request sent to
 * where it goes (the agent-pep path, or the AuthZEN evaluation endpoint, fixed or discovered), inside
 * the decision's span, and the outcome given to telemetry and the observer. Resolves, never rejects.
 * @internal
 */
import { randomUUID } from 'node:crypto';
import { synthesizeBlock } from '../decision.js';
import { blockOutcome, decide } from './exchange.js';
import { observe } from './observe.js';
import { prepareStep } from './step.js';
/** One prepared call over the network (one evaluation over AuthZEN). Resolves, never rejects. */
export function send(shared, p, deadlineAt, span) {
    const headers = { ...shared.headers, 'x-request-id': p.sent.requestId };
    if (shared.endpoints)
        return sendDiscovered(shared, shared.endpoints, p, headers, deadlineAt, span);
    return sendTo(shared, shared.opts.path, p, headers, deadlineAt, span);
}
/** One prepared call to `path`, inside the decision's span when there is one. */
function sendTo(shared, path, p, headers, deadlineAt, span) {
    if (!span)
        return decide(shared.ctx, p, headers, deadlineAt, path);
    span.inject(headers);
    return span.run(() => decide(shared.ctx, p, headers, deadlineAt, path));
}
/** AuthZEN: the evaluation endpoint (fixed, or from the discovery document), then the call. */
async function sendDiscovered(shared, endpoints, p, headers, deadlineAt, span) {
    const e = await endpoints(deadlineAt, p.call.signal);
    if (!e.ok)
        return blockOutcome(p.sent, e.code, e.message, e.attempts, e.status);
    return sendTo(shared, e.value.evaluation, p, headers, deadlineAt, span);
}
/**
 * One observed decision, with the args that were sent (what a permit binds). Args are read once: a
 * snapshot `guardTool` already took is used as it is.
 */
export async function runStep(b, stage, payload, rawOpts, snapshot) {
    const { shared } = b;
    const started = performance.now();
    const telemetry = shared.telemetry;
    const span = telemetry ? telemetry.start() : undefined;
    let outcome;
    try {
        const deadlineAt = started + shared.opts.timeoutMs;
        let step = prepareStep(b, stage, payload, rawOpts, snapshot, deadlineAt, span);
        if (step instanceof Promise)
            step = await step;
        outcome = step.kind === 'decided' ? step.outcome : await send(shared, step.p, deadlineAt, span);
    }
    catch {
        // Unreachable by design; a bug must still fail closed.
        outcome = { decision: synthesizeBlock(stage, randomUUID(), 'invalid_request', 'internal error', 0), attempts: 0 };
    }
    const tool = 'tool' in payload && typeof payload.tool === 'string' ? payload.tool : undefined;
    if (telemetry && span)
        telemetry.end(span, outcome.decision, outcome.attempts, (performance.now() - started) / 1000);
    observe(shared.opts.onDecision, outcome, started, tool);
    return outcome;
}
