import { evaluatePolicy } from './evaluate.js';
import { randomId } from './signing.js';
/** How long a batch whose requests did not all arrive waits before it is recorded as it stands. */
const PARTIAL_BATCH_MS = 5000;
/** The latches that may decide visibility, per policy. */
const toolOnly = new WeakMap();
/** Action-stage latches with neither `when`, `content` nor `session` conditions. */
function visibilityPolicy(policy) {
    let out = toolOnly.get(policy);
    if (out === undefined) {
        const latches = policy.latches.filter((latch) => latch.stages.has('action') &&
            latch.when.length === 0 &&
            latch.content === undefined &&
            latch.session.length === 0);
        out = { ...policy, latches };
        toolOnly.set(policy, out);
    }
    return out;
}
/** The open batches of each evidence log (one per dev PDP). */
const openBatches = new WeakMap();
/** The record of a whole (or, after {@link PARTIAL_BATCH_MS}, partial) batch. */
async function record(ctx, batch) {
    if (batch.done)
        return;
    batch.done = true;
    if (batch.timer)
        clearTimeout(batch.timer);
    openBatches.get(ctx.evidence)?.delete(`${batch.agentId}\u0000${batch.session}\u0000${batch.id}`);
    const order = visibilityPolicy(ctx.policy).latches.map((latch) => latch.id);
    const entry = {
        decisionId: batch.decisionId,
        requestId: batch.id,
        agentId: batch.agentId,
        session: batch.session,
        stage: 'action',
        verdict: batch.hidden.length > 0 ? 'BLOCK' : 'ALLOW',
        latches: order.filter((id) => batch.latches.has(id)),
        reason: `visibility: ${batch.hidden.length} of ${batch.seen.size} tools hidden`,
        visibility: { size: batch.size, decided: batch.seen.size, hidden: [...batch.hidden] },
        simulated: true,
    };
    await append(ctx, entry);
}
async function append(ctx, entry) {
    const written = await ctx.evidence.append(entry);
    try {
        ctx.onDecision?.(structuredClone(written));
    }
    catch {
        // an observer cannot change the decision
    }
}
/** The batch `request` belongs to, opened at its first request. */
function batchOf(ctx, request, tag) {
    let open = openBatches.get(ctx.evidence);
    if (open === undefined) {
        open = new Map();
        openBatches.set(ctx.evidence, open);
    }
    const key = `${request.agentId}\u0000${request.session}\u0000${tag.id}`;
    let batch = open.get(key);
    if (batch === undefined || batch.size !== tag.size) {
        batch = {
            decisionId: randomId('dec_'),
            id: tag.id,
            size: tag.size,
            agentId: request.agentId,
            session: request.session,
            seen: new Set(),
            hidden: [],
            latches: new Set(),
            timer: undefined,
            done: false,
        };
        const opened = batch;
        open.set(key, opened);
        opened.timer = setTimeout(() => void record(ctx, opened).catch(() => undefined), PARTIAL_BATCH_MS);
        opened.timer.unref();
    }
    return batch;
}
/**
 * Decides one visibility request; records it (alone, or as part of its batch).
 * @internal
 */
export async function decideVisibility(ctx, request) {
    const tool = request.tool;
    const evaluation = evaluatePolicy(visibilityPolicy(ctx.policy), { stage: 'action', tool });
    const hidden = evaluation.verdict === 'BLOCK';
    const tag = request.visibilityBatch;
    let decisionId;
    if (tag === undefined) {
        decisionId = randomId('dec_');
        const entry = {
            decisionId,
            requestId: request.requestId,
            agentId: request.agentId,
            session: request.session,
            stage: 'action',
            verdict: evaluation.verdict,
            latches: evaluation.latches,
            tool,
            visibility: { size: 1, decided: 1, hidden: hidden ? [tool] : [] },
            simulated: true,
        };
        if (evaluation.reason !== undefined)
            entry.reason = evaluation.reason;
        await append(ctx, entry);
    }
    else {
        const batch = batchOf(ctx, request, tag);
        decisionId = batch.decisionId;
        if (!batch.done && !batch.seen.has(request.requestId)) {
            batch.seen.add(request.requestId);
            if (hidden && !batch.hidden.includes(tool))
                batch.hidden.push(tool);
            for (const id of evaluation.latches)
                batch.latches.add(id);
            if (batch.seen.size >= batch.size)
                await record(ctx, batch);
        }
    }
    const decision = {
        verdict: evaluation.verdict,
        decisionId,
        requestId: request.requestId,
        stage: 'action',
        latches: evaluation.latches,
        simulated: true,
    };
    if (evaluation.reason !== undefined)
        decision.reason = evaluation.reason;
    return decision;
}
