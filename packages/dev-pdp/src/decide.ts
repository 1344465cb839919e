/**
 * One decision of the dev PDP, whichever protocol asked: read the session's state, evaluate the
 * latches, apply an escalation's resolution or open a new one, mint the permit (bound to the args that
 * run), commit the session's new labels and step, and append the evidence record (docs/dev-pdp.md).
 * @packageDocumentation
 */
import type { EvidenceRecord, Stage, Verdict } from 'agent-pep/internal';
import { referenceActionHash } from 'agent-pep/internal';
import { audienceFor, type ToolAudiences } from './audiences.js';
import type { EscalationBook, EscalationDetails, EscalationSubject } from './escalations.js';
import { type Evaluation, evaluatePolicy } from './evaluate.js';
import type { EvidenceEntry, EvidenceLog } from './evidence.js';
import { HttpError } from './http.js';
import type { CompiledPolicy } from './policy.js';
import type { DecisionRequest } from './request.js';
import type { CallFacts } from './sessions/evaluate.js';
import { factsAfter, readCall } from './sessions/facts.js';
import type { SessionKeeper, SessionPlan } from './sessions/keeper.js';
import { type HistoryStep, labelsAfter, type SessionView } from './sessions/state.js';
import { sessionKey } from './sessions/store.js';
import { randomId, type SigningKey, signPermit } from './signing.js';
import { decideVisibility } from './visibility.js';

/** A decision, before a protocol shapes it. @internal */
export interface Decision {
  verdict: Verdict;
  decisionId: string;
  requestId: string;
  stage: Stage;
  /** Every engaged latch id, in policy order. */
  latches: string[];
  /** The session's labels after this step, sorted (`[]` when none; unchanged by a simulated request). */
  sessionLabels: string[];
  /**
   * Intent grants: on an action, the ids of the live grants the call is inside; on an input step, the ids
   * of the grants it made (none when simulated); `[]` elsewhere. Sent (and recorded) only when not empty.
   */
  grants: string[];
  /** The `mode: "audit"` latches that engaged, with their verdicts (evidence only). */
  audit?: { latch: string; verdict: Verdict }[];
  reason?: string;
  /** Action ALLOW or WARN, not simulated: the permit, bound to the args that run. */
  permitId?: string;
  /** Text WARN: the content with every engaged `redact` applied. */
  transformedContent?: string;
  /** Action WARN from a `setArgs` latch: the args that run. */
  transformedArgs?: Record<string, unknown>;
  /** ESCALATE: the review the request is held for. */
  escalationId?: string;
  simulated: boolean;
}

/** What deciding needs. @internal */
export interface DecideContext {
  policy: CompiledPolicy;
  key: SigningKey;
  evidence: EvidenceLog;
  escalations: EscalationBook;
  sessions: SessionKeeper;
  audience: string;
  /** Per-tool audiences (`toolAudiences`); a tool none matches gets `audience`. */
  toolAudiences?: ToolAudiences | undefined;
  permitTtlSec: number;
  issuer(): string;
  onDecision?: ((record: EvidenceRecord) => void) | undefined;
}

/**
 * Decides one checked request, one at a time per session, against the session's state before the step.
 * @remarks An approved escalation gives a one-time ALLOW (a WARN with `transformedArgs` when a `setArgs`
 * latch engaged too); a denied one a one-time BLOCK; a simulated request reports what would happen
 * without using the resolution up, gets no permit and changes no session. An approval is weighed against
 * the state when it is used: it turns only an ESCALATE into an ALLOW, never a BLOCK that engages then.
 * @throws HttpError 503 `session_store_unavailable` when the session store cannot answer in time
 * @internal
 */
export function decide(ctx: DecideContext, request: DecisionRequest): Promise<Decision> {
  const key = request.stateless ? undefined : sessionKey(request.agentId, request.session);
  if (request.purpose === 'visibility') {
    // decided on the tool alone and changes nothing, but says what the session holds (sessionLabels)
    return ctx.sessions.run(key, true, async (view) => {
      checkIntegrity(request, view);
      return {
        finish: async () => ({
          ...(await decideVisibility(ctx, request)),
          sessionLabels: labelsAfter(view, []),
          grants: [],
        }),
      };
    });
  }
  return ctx.sessions.run(key, request.simulated, (view) => plan(ctx, request, view));
}

/**
 * A session the store lost is never decided on an empty state (docs/dev-pdp.md, "Session integrity"):
 * the store knows it lost it (the Redis epoch), or it does not know a session the PEP has counted
 * decided steps of (`sessionStep > 1`).
 * @throws HttpError 409 `session_state_lost`
 */
function checkIntegrity(request: DecisionRequest, view: SessionView): void {
  if (request.stateless) return;
  if (view.lost === true || (view.steps === 0 && (request.sessionStep ?? 1) > 1)) {
    throw new HttpError(409, 'session_state_lost', 'the PDP holds no state for this session: start a new session');
  }
}

/** The outcome before anything is written. */
interface Outcome {
  verdict: Verdict;
  reason: string | undefined;
  transformedContent: string | undefined;
  transformedArgs: Record<string, unknown> | undefined;
  /** The escalation's resolution this decision uses up, if any. */
  resolved: 'approve' | 'deny' | undefined;
  subject: EscalationSubject | undefined;
}

function outcomeOf(
  ctx: DecideContext,
  request: DecisionRequest,
  evaluation: Evaluation,
  view: SessionView,
  facts: CallFacts,
): Outcome {
  const out: Outcome = {
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
      out.transformedArgs =
        request.stage === 'action' ? transformedArgsOf(ctx.policy, request, view, facts) : undefined;
      out.verdict = out.transformedArgs !== undefined ? 'WARN' : 'ALLOW';
      out.reason = 'approved by a reviewer';
      out.transformedContent = undefined;
    } else if (out.resolved === 'deny') {
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

async function plan(ctx: DecideContext, request: DecisionRequest, view: SessionView): Promise<SessionPlan<Decision>> {
  checkIntegrity(request, view);
  const now = Date.now();
  const secret = ctx.key.sessionSecret;
  const call = readCall(ctx.policy, request, view, secret, now);
  const evaluation = evaluatePolicy(ctx.policy, {
    stage: request.stage,
    ...(request.tool !== undefined ? { tool: request.tool } : {}),
    ...(request.args !== undefined ? { args: request.args } : {}),
    ...(request.content !== undefined ? { content: request.content } : {}),
    session: view,
    facts: call.facts,
  });
  const outcome = outcomeOf(ctx, request, evaluation, view, call.facts);
  const { verdict } = outcome;
  // a simulated request, or one in no session (AuthZEN), changes no state: it adds no label
  const added = request.simulated || request.stateless ? [] : (evaluation.labels ?? []);
  const sessionLabels = labelsAfter(view, added);
  const decisionId = randomId('dec_');
  let permitId: string | undefined;
  if (request.stage === 'action' && (verdict === 'ALLOW' || verdict === 'WARN') && !request.simulated) {
    permitId = await signPermit(ctx.key, {
      issuer: ctx.issuer(),
      audience: audienceFor(ctx.toolAudiences ?? [], request.tool as string, ctx.audience),
      agentId: request.agentId,
      session: request.session,
      tool: request.tool as string,
      args: (outcome.transformedArgs ?? request.args) as Record<string, unknown>,
      decisionId,
      ttlSec: ctx.permitTtlSec,
      labels: sessionLabels,
    });
  }
  const step: HistoryStep = {
    stage: request.stage,
    verdict,
    latches: evaluation.latches,
    ...(request.tool !== undefined ? { tool: request.tool } : {}),
  };
  const after =
    request.simulated || request.stateless
      ? undefined
      : factsAfter(ctx.policy, request, verdict, view, call.inside, secret, now);
  const grants = request.stage === 'action' ? [...call.facts.grants] : (after?.made ?? []);
  const made = { outcome, decisionId, permitId, evaluation, sessionLabels, grants };
  const finish = () => finishDecision(ctx, request, made);
  return after === undefined ? { finish } : { update: { labels: added, step, facts: after.facts }, finish };
}

/** After the commit: use up or open the escalation, append the evidence record, shape the decision. */
async function finishDecision(
  ctx: DecideContext,
  request: DecisionRequest,
  made: {
    outcome: Outcome;
    decisionId: string;
    permitId: string | undefined;
    evaluation: Evaluation;
    sessionLabels: string[];
    grants: string[];
  },
): Promise<Decision> {
  const { outcome, decisionId, permitId, evaluation, sessionLabels, grants } = made;
  const { verdict, reason, transformedContent, transformedArgs, subject } = outcome;
  let escalationId: string | undefined;
  if (subject !== undefined && outcome.resolved !== undefined) {
    if (!request.simulated) ctx.escalations.take(subject, true);
  } else if (subject !== undefined) {
    escalationId = ctx.escalations.open(subject, heldDetails(request, evaluation.latches, reason));
  }
  const entry: EvidenceEntry = {
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
  if (grants.length > 0) entry.grants = grants;
  if (evaluation.audit !== undefined) entry.audit = evaluation.audit;
  if (reason !== undefined) entry.reason = reason;
  if (request.tool !== undefined) entry.tool = request.tool;
  if (request.actHash !== undefined) {
    // the act_hash of the args that run: the permit's
    entry.argsHash =
      transformedArgs !== undefined ? referenceActionHash(request.tool as string, transformedArgs) : request.actHash;
  }
  if (request.content !== undefined) entry.content = request.content;
  const record = await ctx.evidence.append(entry);
  // the session's labels, where the PDP keeps sessions, shown to the reviewer
  if (escalationId !== undefined) ctx.escalations.label(escalationId, (record as { labels?: string[] }).labels);
  try {
    ctx.onDecision?.(structuredClone(record));
  } catch {
    // an observer cannot change the decision
  }
  const decision: Decision = {
    verdict,
    decisionId,
    requestId: request.requestId,
    stage: request.stage,
    latches: evaluation.latches,
    sessionLabels,
    grants,
    simulated: request.simulated,
  };
  if (evaluation.audit !== undefined) decision.audit = evaluation.audit;
  if (reason !== undefined) decision.reason = reason;
  if (permitId !== undefined) decision.permitId = permitId;
  if (transformedContent !== undefined && request.stage !== 'action') decision.transformedContent = transformedContent;
  if (transformedArgs !== undefined && request.stage === 'action') decision.transformedArgs = transformedArgs;
  if (escalationId !== undefined) decision.escalationId = escalationId;
  return decision;
}

/** What a reviewer sees of a held request. */
function heldDetails(request: DecisionRequest, latches: string[], reason: string | undefined): EscalationDetails {
  const details: EscalationDetails = { requestId: request.requestId, latches };
  if (reason !== undefined) details.reason = reason;
  if (request.args !== undefined) details.args = request.args;
  if (request.content !== undefined) details.content = request.content;
  return details;
}

/** The args an approved escalation runs with: those of the `setArgs` latches that engaged, if any. */
function transformedArgsOf(
  policy: CompiledPolicy,
  request: DecisionRequest,
  session: SessionView,
  facts: CallFacts,
): Record<string, unknown> | undefined {
  const withoutEscalations: CompiledPolicy = {
    ...policy,
    latches: policy.latches.filter((latch) => latch.verdict !== 'ESCALATE'),
  };
  const again = evaluatePolicy(withoutEscalations, {
    stage: 'action',
    ...(request.tool !== undefined ? { tool: request.tool } : {}),
    ...(request.args !== undefined ? { args: request.args } : {}),
    session,
    facts,
  });
  return again.verdict === 'WARN' ? again.transformedArgs : undefined;
}
