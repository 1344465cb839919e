/**
 * The native protocol of the dev PDP (docs/fail-closed.md): the authorize body to a checked request,
 * and a decision to the answer.
 * @packageDocumentation
 */
import type { Decision } from './decide.js';
import type { CompiledPolicy } from './policy.js';
import { checkRequest, type DecisionRequest } from './request.js';

/** Checks a `POST /api/policy/authorize` body. @throws HttpError 400 `bad_request`, 404 `unknown_agent` @internal */
export function fromAuthorizeBody(
  body: Record<string, unknown>,
  policy: CompiledPolicy,
  headerId: string | undefined,
): DecisionRequest {
  return checkRequest(
    {
      agentId: body.agentId,
      session: body.session,
      stage: body.stage,
      requestId: body.requestId,
      simulated: body.simulated,
      content: body.content,
      tool: body.tool,
      args: body.args,
      purpose: body.purpose,
      visibilityBatch: body.visibilityBatch,
      intent: body.intent,
      sessionStep: body.sessionStep,
      toolPin: body.toolPin,
    },
    policy,
    headerId,
  );
}

/** The decision answer (docs/fail-closed.md): every field in its place, echoes of `requestId` and `stage`. @internal */
export function toAuthorizeAnswer(decision: Decision): Record<string, unknown> {
  const out: Record<string, unknown> = {
    verdict: decision.verdict,
    decisionId: decision.decisionId,
    requestId: decision.requestId,
    stage: decision.stage,
    latches: decision.latches,
    sessionLabels: decision.sessionLabels,
  };
  if (decision.grants.length > 0) out.grants = decision.grants;
  if (decision.reason !== undefined) out.reason = decision.reason;
  if (decision.permitId !== undefined) out.permitId = decision.permitId;
  if (decision.transformedContent !== undefined) out.transformedContent = decision.transformedContent;
  if (decision.transformedArgs !== undefined) out.transformedArgs = decision.transformedArgs;
  if (decision.escalationId !== undefined) out.escalationId = decision.escalationId;
  if (decision.route !== undefined) out.route = decision.route;
  if (decision.simulated) out.simulated = true;
  return out;
}
