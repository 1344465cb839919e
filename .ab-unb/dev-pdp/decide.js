import { referenceActionHash } from '../permit/hash.js';
import { audienceFor } from './audiences.js';
import { evaluatePolicy } from './evaluate.js';
import { labelsAfter } from './sessions/state.js';
import { sessionKey } from './sessions/store.js';
import { randomId, signPermit } from './signing.js';
import { decideVisibility } from './visibility.js';
/**
 * Decides one checked request, one at a time per session, against the session's state before the step.
 * @remarks An approved escalation gives a one-time ALLOW (a WARN with `transformedArgs` when a `setArgs`
 * latch engaged too); a denied one a one-time BLOCK; a simulated request reports what would happen
 * without using the resolution up, gets no permit and changes no session. An approval is weighed against
 * the state when it is used: it turns only an ESCALATE into an ALLOW, never a BLOCK that engages then.
 * @throws HttpError 503 `session_store_unavailable` when the session store cannot answer in time
 * @internal
 */
export function decide(ctx, request) {
    const key = request.stateless ? undefined : sessionKey(request.agentId, request.session);
    if (request.purpose === 'visibility') {
        // decided on the tool alone and changes nothing, but says what the session holds (sessionLabels)
        return ctx.sessions.run(key, true, async (view) => ({
            finish: async () => ({ ...(await decideVisibility(ctx, request)), sessionLabels: labelsAfter(view, []) }),
        }));
    }
    return ctx.sessions.run(key, request.simulated, (view) => plan(ctx, request, view));
}
function outcomeOf(ctx, request, evaluation, view) {
    const out = {
        verdict: evaluation.verdict,
        reason: evaluation.reason,
        transformedContent: evaluation.transformedContent,
        transformedArgs: evaluation.transformedArgs,
        resolved: undefined,
        subject: undefined,
    };
    if (out.verdict === 'ESCALATE') {
        out.subject = {
            agentId: request.agentId,
            session: request.session,
            stage: request.stage,
            hash: request.actHash ?? ctx.evidence.contentHash(request.content ?? ''),
            ...(request.tool !== undefined ? { tool: request.tool } : {}),
        };
        // looked at, not taken: it is used up only once the step is committed
        out.resolved = ctx.escalations.take(out.subject, false);
        if (out.resolved === 'approve') {
            // the setArgs of latches that engaged beside the escalation still apply
            out.transformedArgs = request.stage === 'action' ? transformedArgsOf(ctx.policy, request, view) : undefined;
            out.verdict = out.transformedArgs !== undefined ? 'WARN' : 'ALLOW';
            out.reason = 'approved by a reviewer';
            out.transformedContent = undefined;
        }
        else if (out.resolved === 'deny') {
            out.verdict = 'BLOCK';
            out.reason = 'denied by a reviewer';
        }
    }
    if (out.verdict !== 'WARN') {
        out.transformedContent = undefined;
        out.transformedArgs = undefined;
    }
    return out;
}
async function plan(ctx, request, view) {
    const evaluation = evaluatePolicy(ctx.policy, {
        stage: request.stage,
        ...(request.tool !== undefined ? { tool: request.tool } : {}),
        ...(request.args !== undefined ? { args: request.args } : {}),
        ...(request.content !== undefined ? { content: request.content } : {}),
        session: view,
    });
    const outcome = outcomeOf(ctx, request, evaluation, view);
    const { verdict } = outcome;
    // a simulated request, or one in no session (AuthZEN), changes no state: it adds no label
    const added = request.simulated || request.stateless ? [] : (evaluation.labels ?? []);
    const sessionLabels = labelsAfter(view, added);
    const decisionId = randomId('dec_');
    let permitId;
    if (request.stage === 'action' && (verdict === 'ALLOW' || verdict === 'WARN') && !request.simulated) {
        permitId = await signPermit(ctx.key, {
            issuer: ctx.issuer(),
            audience: audienceFor(ctx.toolAudiences ?? [], request.tool, ctx.audience),
            agentId: request.agentId,
            session: request.session,
            tool: request.tool,
            args: (outcome.transformedArgs ?? request.args),
            decisionId,
            ttlSec: ctx.permitTtlSec,
            labels: sessionLabels,
        });
    }
    const step = {
        stage: request.stage,
        verdict,
        latches: evaluation.latches,
        ...(request.tool !== undefined ? { tool: request.tool } : {}),
    };
    const finish = () => finishDecision(ctx, request, { outcome, decisionId, permitId, evaluation, sessionLabels });
    return request.simulated ? { finish } : { update: { labels: added, step }, finish };
}
/** After the commit: use up or open the escalation, append the evidence record, shape the decision. */
async function finishDecision(ctx, request, made) {
    const { outcome, decisionId, permitId, evaluation, sessionLabels } = made;
    const { verdict, reason, transformedContent, transformedArgs, subject } = outcome;
    let escalationId;
    if (subject !== undefined && outcome.resolved !== undefined) {
        if (!request.simulated)
            ctx.escalations.take(subject, true);
    }
    else if (subject !== undefined) {
        escalationId = ctx.escalations.open(subject, heldDetails(request, evaluation.latches, reason));
    }
    const entry = {
        decisionId,
        requestId: request.requestId,
        agentId: request.agentId,
        session: request.session,
        stage: request.stage,
        verdict,
        latches: evaluation.latches,
        labels: sessionLabels,
        simulated: request.simulated,
    };
    if (reason !== undefined)
        entry.reason = reason;
    if (request.tool !== undefined)
        entry.tool = request.tool;
    if (request.actHash !== undefined) {
        // the act_hash of the args that run: the permit's
        entry.argsHash =
            transformedArgs !== undefined ? referenceActionHash(request.tool, transformedArgs) : request.actHash;
    }
    if (request.content !== undefined)
        entry.content = request.content;
    const record = await ctx.evidence.append(entry);
    // the session's labels, where the PDP keeps sessions, shown to the reviewer
    if (escalationId !== undefined)
        ctx.escalations.label(escalationId, record.labels);
    try {
        ctx.onDecision?.(structuredClone(record));
    }
    catch {
        // an observer cannot change the decision
    }
    const decision = {
        verdict,
        decisionId,
        requestId: request.requestId,
        stage: request.stage,
        latches: evaluation.latches,
        sessionLabels,
        simulated: request.simulated,
    };
    if (reason !== undefined)
        decision.reason = reason;
    if (permitId !== undefined)
        decision.permitId = permitId;
    if (transformedContent !== undefined && request.stage !== 'action')
        decision.transformedContent = transformedContent;
    if (transformedArgs !== undefined && request.stage === 'action')
        decision.transformedArgs = transformedArgs;
    if (escalationId !== undefined)
        decision.escalationId = escalationId;
    return decision;
}
/** What a reviewer sees of a held request. */
function heldDetails(request, latches, reason) {
    const details = { requestId: request.requestId, latches };
    if (reason !== undefined)
        details.reason = reason;
    if (request.args !== undefined)
        details.args = request.args;
    if (request.content !== undefined)
        details.content = request.content;
    return details;
}
/** The args an approved escalation runs with: those of the `setArgs` latches that engaged, if any. */
function transformedArgsOf(policy, request, session) {
    const withoutEscalations = {
        agents: policy.agents,
        latches: policy.latches.filter((latch) => latch.verdict !== 'ESCALATE'),
    };
    const again = evaluatePolicy(withoutEscalations, {
        stage: 'action',
        ...(request.tool !== undefined ? { tool: request.tool } : {}),
        ...(request.args !== undefined ? { args: request.args } : {}),
        session,
    });
    return again.verdict === 'WARN' ? again.transformedArgs : undefined;
}
