/**
 * One decision of the dev PDP, whichever protocol asked: read the session's state, evaluate the
 * latches, apply an escalation's resolution or open a new one, mint the permit (bound to the args that
 * run), commit the session's new labels and step, and append the evidence record (docs/dev-pdp.md).
 * @packageDocumentation
 */
import type { EvidenceRecord, Stage, Verdict } from 'agent-pep/internal';
import { referenceActionHash } from 'agent-pep/internal';
import { audienceFor, type ToolAudiences } from './audiences.js';
import {
  type EscalationBook,
  type EscalationDetails,
  EscalationError,
  type EscalationSubject,
  type WaitingResolution,
} from './escalations.js';
import { type Evaluation, type EvaluationInput, evaluatePolicy } from './evaluate.js';
import type { EvidenceEntry, EvidenceLog } from './evidence.js';
import { heldSession } from './held-session.js';
import { HttpError } from './http.js';
import type { CompiledPolicy } from './policy.js';
import type { DecisionRequest } from './request.js';
import type { CallFacts } from './sessions/evaluate.js';
import { factsAfter, readCall } from './sessions/facts.js';
import { type Confirm, type SessionKeeper, type SessionPlan, storeUnavailable } from './sessions/keeper.js';
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
  /** Action WARN from a `route` latch: the sandbox the action runs in. */
  route?: { to: string; profile?: string };
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
 * @remarks An approved escalation gives a one-time ALLOW, or a WARN when another latch's effect applies
 * (a `setArgs`, a text's redactions): the approval lifts the ESCALATE latches it resolved and nothing
 * else. A denied one gives a one-time BLOCK. The resolution is taken atomically (one use, across
 * replicas and concurrent requests with no session), and given back when the decision fails. A
 * simulated request reports what would happen without using the resolution up, opens no escalation,
 * gets no permit and changes no session. An approval is weighed against the state when it is used: it
 * turns only an ESCALATE into an ALLOW, never a BLOCK that engages then.
 * @throws HttpError 400 `too_many_escalations` past `maxEscalationsPerSession` open in the session
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
  const taken: Taken = {};
  return ctx.sessions
    .run(key, request.simulated, (view, confirm) => plan(ctx, request, view, taken, confirm))
    .catch(async (error) => {
      // a resolution taken by a decision that was not answered waits again for its request
      if (taken.subject !== undefined && taken.waiting !== undefined) {
        await ctx.escalations.giveBack(taken.subject, taken.waiting).catch(() => {});
      }
      throw error;
    });
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
  route: Evaluation['route'];
  /** The escalation's resolution this decision uses, if any (taken already when not simulated). */
  resolved: WaitingResolution | undefined;
  subject: EscalationSubject | undefined;
}

/** A failure of the escalation store: 503, as a session store's (never a decision on a missing state). */
function escalationStoreFailure(error: unknown): never {
  if (error instanceof HttpError) throw error;
  if (error instanceof EscalationError && error.code === 'too_many_escalations') {
    throw new HttpError(400, 'too_many_escalations', 'too many open escalations in this session');
  }
  throw storeUnavailable();
}

/**
 * The decision a resolution makes of an ESCALATE: a denial a BLOCK; an approval lifts the ESCALATE
 * latches it resolved, and nothing else: the request is evaluated again without them, so every other
 * latch's effect stands (a text's redactions, an action's `setArgs`). Undefined when another ESCALATE
 * still engages (the approval does not cover it).
 */
function applyResolution(
  ctx: DecideContext,
  request: DecisionRequest,
  view: SessionView,
  waiting: WaitingResolution,
  facts: CallFacts,
): Pick<Outcome, 'verdict' | 'reason' | 'transformedContent' | 'transformedArgs' | 'route'> | undefined {
  if (waiting.resolution === 'deny') {
    return {
      verdict: 'BLOCK',
      reason: 'denied by a reviewer',
      transformedContent: undefined,
      transformedArgs: undefined,
      route: undefined,
    };
  }
  const lifted = new Set(waiting.latches);
  // the lifted latches did engage: the stage's default (for no latch engaged) does not apply again
  const again = evaluatePolicy(
    {
      ...ctx.policy,
      latches: ctx.policy.latches.filter((l) => !(l.verdict === 'ESCALATE' && lifted.has(l.id))),
      defaults: {},
    },
    {
      ...inputOf(request),
      session: view,
      facts,
    },
  );
  if (again.verdict === 'ESCALATE' || again.verdict === 'BLOCK') return undefined;
  return {
    verdict: again.verdict,
    reason: 'approved by a reviewer',
    transformedContent: again.transformedContent,
    transformedArgs: again.transformedArgs,
    route: again.route,
  };
}

/** What evaluation reads of a request: stage, purpose, tool, args, content. */
function inputOf(request: DecisionRequest): EvaluationInput {
  return {
    stage: request.stage,
    ...(request.purpose === 'model_request' ? { purpose: request.purpose } : {}),
    ...(request.tool !== undefined ? { tool: request.tool } : {}),
    ...(request.args !== undefined ? { args: request.args } : {}),
    ...(request.content !== undefined ? { content: request.content } : {}),
  };
}

async function outcomeOf(
  ctx: DecideContext,
  request: DecisionRequest,
  evaluation: Evaluation,
  view: SessionView,
  facts: CallFacts,
  confirm: Confirm,
): Promise<Outcome> {
  let out: Outcome = {
    verdict: evaluation.verdict,
    reason: evaluation.reason,
    transformedContent: evaluation.transformedContent,
    transformedArgs: evaluation.transformedArgs,
    route: evaluation.route,
    resolved: undefined,
    subject: undefined,
  };
  if (out.verdict === 'ESCALATE') {
    const subject: EscalationSubject = {
      agentId: request.agentId,
      session: request.session,
      stage: request.stage,
      hash: request.actHash ?? ctx.evidence.contentHash(request.content ?? ''),
      ...(request.tool !== undefined ? { tool: request.tool } : {}),
      ...(request.toolPin !== undefined ? { toolPin: request.toolPin } : {}),
    };
    out.subject = subject;
    // taking a resolution or opening a review cannot be taken back: first hold the session, on its
    // latest state (a replica that read an older one decides again)
    if (!request.simulated) await confirm();
    // a simulated request looks; any other takes the resolution (atomic: one use, across replicas)
    const waiting = await ctx.escalations.take(subject, !request.simulated).catch(escalationStoreFailure);
    if (waiting !== undefined) {
      const applied = applyResolution(ctx, request, view, waiting, facts);
      if (applied !== undefined) out = { ...out, ...applied, resolved: waiting };
      else if (!request.simulated) await ctx.escalations.giveBack(subject, waiting).catch(escalationStoreFailure);
    }
  }
  if (out.verdict !== 'WARN') {
    out.transformedContent = undefined;
    out.transformedArgs = undefined;
    out.route = undefined;
  }
  return out;
}

/** What a decision has taken that must be given back when it cannot be completed. */
interface Taken {
  subject?: EscalationSubject;
  waiting?: WaitingResolution;
}

async function plan(
  ctx: DecideContext,
  request: DecisionRequest,
  view: SessionView,
  taken: Taken,
  confirm: Confirm,
): Promise<SessionPlan<Decision>> {
  checkIntegrity(request, view);
  const now = Date.now();
  const secret = ctx.key.sessionSecret;
  const call = readCall(ctx.policy, request, view, secret, now);
  const evaluation = evaluatePolicy(ctx.policy, {
    ...inputOf(request),
    session: view,
    facts: call.facts,
  });
  const outcome = await outcomeOf(ctx, request, evaluation, view, call.facts, confirm);
  if (!request.simulated && outcome.resolved !== undefined && outcome.subject !== undefined) {
    taken.subject = outcome.subject;
    taken.waiting = outcome.resolved;
  }
  const { verdict } = outcome;
  // a simulated request, or one in no session (AuthZEN), changes no state: it adds no label
  const added = request.simulated || request.stateless ? [] : (evaluation.labels ?? []);
  const sessionLabels = labelsAfter(view, added);
  const decisionId = randomId('dec_');
  // an ESCALATE opens its review (or joins the one open for the identical request) before anything is
  // written, so one refused (too many open) changes nothing; a simulated ESCALATE opens none
  let escalationId: string | undefined;
  if (outcome.subject !== undefined && outcome.resolved === undefined && verdict === 'ESCALATE' && !request.simulated) {
    const details = heldDetails(request, evaluation.latches, outcome.reason);
    if (!request.stateless) {
      details.labels = sessionLabels;
      details.held = heldSession(ctx.policy, request, view, call, secret, now);
    }
    escalationId = await ctx.escalations.open(outcome.subject, details).catch(escalationStoreFailure);
  }
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
      toolPin: request.toolPin,
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
  const made = { outcome, decisionId, permitId, evaluation, sessionLabels, grants, escalationId };
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
    escalationId: string | undefined;
  },
): Promise<Decision> {
  const { outcome, decisionId, permitId, evaluation, sessionLabels, grants, escalationId } = made;
  const { verdict, reason, transformedContent, transformedArgs } = outcome;
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
  if (escalationId !== undefined) entry.escalationId = escalationId;
  const record = await ctx.evidence.append(entry);
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
  if (outcome.route !== undefined && request.stage === 'action') decision.route = outcome.route;
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
