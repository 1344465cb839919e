/**
 * One decision of the dev PDP, whichever protocol asked: evaluate the latches, apply an escalation's
 * resolution or open a new one, mint the permit (bound to the args that run), and append the evidence
 * record (docs/dev-pdp.md).
 * @packageDocumentation
 */
import type { Stage, Verdict } from '../decision.js';
import type { EvidenceRecord } from '../evidence/record.js';
import { referenceActionHash } from '../permit/hash.js';
import type { EscalationBook, EscalationDetails, EscalationSubject } from './escalations.js';
import { evaluatePolicy } from './evaluate.js';
import type { EvidenceEntry, EvidenceLog } from './evidence.js';
import type { CompiledPolicy } from './policy.js';
import type { DecisionRequest } from './request.js';
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
  audience: string;
  permitTtlSec: number;
  issuer(): string;
  onDecision?: ((record: EvidenceRecord) => void) | undefined;
}

/**
 * Decides one checked request.
 * @remarks An approved escalation gives a one-time ALLOW (a WARN with `transformedArgs` when a `setArgs`
 * latch engaged too); a denied one a one-time BLOCK; a simulated request reports what would happen
 * without using the resolution up and gets no permit.
 * @internal
 */
export async function decide(ctx: DecideContext, request: DecisionRequest): Promise<Decision> {
  if (request.purpose === 'visibility') return decideVisibility(ctx, request);
  const evaluation = evaluatePolicy(ctx.policy, {
    stage: request.stage,
    ...(request.tool !== undefined ? { tool: request.tool } : {}),
    ...(request.args !== undefined ? { args: request.args } : {}),
    ...(request.content !== undefined ? { content: request.content } : {}),
  });
  let verdict: Verdict = evaluation.verdict;
  let reason = evaluation.reason;
  let transformedContent = evaluation.transformedContent;
  let transformedArgs = evaluation.transformedArgs;
  let escalationId: string | undefined;
  if (verdict === 'ESCALATE') {
    const subject: EscalationSubject = {
      agentId: request.agentId,
      session: request.session,
      stage: request.stage,
      hash: request.actHash ?? ctx.evidence.contentHash(request.content ?? ''),
      ...(request.tool !== undefined ? { tool: request.tool } : {}),
    };
    const resolution = ctx.escalations.take(subject, !request.simulated);
    if (resolution === 'approve') {
      // the setArgs of latches that engaged beside the escalation still apply
      transformedArgs = request.stage === 'action' ? transformedArgsOf(ctx.policy, request) : undefined;
      verdict = transformedArgs !== undefined ? 'WARN' : 'ALLOW';
      reason = 'approved by a reviewer';
      transformedContent = undefined;
    } else if (resolution === 'deny') {
      verdict = 'BLOCK';
      reason = 'denied by a reviewer';
      transformedContent = undefined;
      transformedArgs = undefined;
    } else {
      const details = heldDetails(request, evaluation.latches, reason);
      escalationId = ctx.escalations.open(subject, details);
    }
  }
  if (verdict !== 'WARN') {
    transformedContent = undefined;
    transformedArgs = undefined;
  }
  const decisionId = randomId('dec_');
  const runArgs = transformedArgs ?? request.args;
  let permitId: string | undefined;
  if (request.stage === 'action' && (verdict === 'ALLOW' || verdict === 'WARN') && !request.simulated) {
    permitId = await signPermit(ctx.key, {
      issuer: ctx.issuer(),
      audience: ctx.audience,
      agentId: request.agentId,
      session: request.session,
      tool: request.tool as string,
      args: runArgs as Record<string, unknown>,
      decisionId,
      ttlSec: ctx.permitTtlSec,
    });
  }
  const entry: EvidenceEntry = {
    decisionId,
    requestId: request.requestId,
    agentId: request.agentId,
    session: request.session,
    stage: request.stage,
    verdict,
    latches: evaluation.latches,
    simulated: request.simulated,
  };
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
    simulated: request.simulated,
  };
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
function transformedArgsOf(policy: CompiledPolicy, request: DecisionRequest): Record<string, unknown> | undefined {
  const withoutEscalations: CompiledPolicy = {
    agents: policy.agents,
    latches: policy.latches.filter((latch) => latch.verdict !== 'ESCALATE'),
  };
  const again = evaluatePolicy(withoutEscalations, {
    stage: 'action',
    ...(request.tool !== undefined ? { tool: request.tool } : {}),
    ...(request.args !== undefined ? { args: request.args } : {}),
  });
  return again.verdict === 'WARN' ? again.transformedArgs : undefined;
}
