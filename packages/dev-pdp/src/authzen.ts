/**
 * The dev PDP's AuthZEN 1.0 face (OpenID AuthZEN Authorization API 1.0; docs/authzen.md): an
 * evaluation request to a checked decision request, a decision to an evaluation answer, the batch
 * semantics of `evaluations`, and the discovery document.
 * @packageDocumentation
 */
import { isRecord, isTextStage } from 'agent-pep/internal';
import type { Decision } from './decide.js';
import { badRequest, type HttpError } from './http.js';
import type { CompiledPolicy } from './policy.js';
import { checkRequest, type DecisionRequest } from './request.js';

/** Paths of the AuthZEN endpoints. @internal */
export const AUTHZEN_PATHS = Object.freeze({
  evaluation: '/access/v1/evaluation',
  evaluations: '/access/v1/evaluations',
  configuration: '/.well-known/authzen-configuration',
});

/** `options.evaluations_semantic` of an `evaluations` request (AuthZEN 1.0 section 7.1). */
export type EvaluationsSemantic = 'execute_all' | 'deny_on_first_deny' | 'permit_on_first_permit';

const SEMANTICS: readonly string[] = ['execute_all', 'deny_on_first_deny', 'permit_on_first_permit'];

/** The four parts of an evaluation, as sent. @internal */
export interface EvaluationParts {
  subject: unknown;
  action: unknown;
  resource: unknown;
  context: unknown;
}

function record(value: unknown, name: string): Record<string, unknown> {
  if (!isRecord(value)) throw badRequest(`${name} must be an object`);
  return value;
}

/**
 * Maps one evaluation to a checked request: `subject: { type: 'agent', id: agentId }`; action stage
 * `action: { name: 'call' }`, `resource: { type: 'tool', id: tool, properties: { args } }`; text stages
 * `action: { name: stage }`, `resource: { type: 'content', id, properties: { content, tool? } }`;
 * `context: { session, requestId, simulated?, sessionStep?, intent? }` (`intent`: input stage only).
 * @throws HttpError 400 `bad_request`, 404 `unknown_agent`
 * @internal
 */
export function fromEvaluation(
  parts: EvaluationParts,
  policy: CompiledPolicy,
  headerId: string | undefined,
): DecisionRequest {
  const subject = record(parts.subject, 'subject');
  const action = record(parts.action, 'action');
  const resource = record(parts.resource, 'resource');
  const context = record(parts.context, 'context');
  if (subject.type !== 'agent') throw badRequest("subject.type must be 'agent'");
  const name = action.name;
  const stage = name === 'call' ? 'action' : name;
  if (typeof stage !== 'string' || (stage !== 'action' && !isTextStage(stage)) || name === 'action') {
    throw badRequest("action.name must be 'call' or a text stage (input, context_egress, output, delivery)");
  }
  const properties = resource.properties === undefined ? {} : record(resource.properties, 'resource.properties');
  if (stage === 'action') {
    if (resource.type !== 'tool') throw badRequest("resource.type must be 'tool' for action.name 'call'");
  } else {
    if (resource.type !== 'content') throw badRequest("resource.type must be 'content' on a text stage");
    if (typeof resource.id !== 'string' || resource.id.length === 0)
      throw badRequest('resource.id must be a non-empty string');
  }
  return checkRequest(
    {
      agentId: subject.id,
      session: context.session,
      stage,
      requestId: context.requestId,
      simulated: context.simulated,
      content: stage === 'action' ? undefined : properties.content,
      tool: stage === 'action' ? resource.id : properties.tool,
      args: stage === 'action' ? properties.args : undefined,
      purpose: context.purpose,
      visibilityBatch: context.visibilityBatch,
      intent: context.intent,
      sessionStep: context.sessionStep,
      toolPin: context.toolPin,
    },
    policy,
    headerId,
    '',
    true,
  );
}

/**
 * An evaluation answer: `decision` true for ALLOW and WARN, false for BLOCK and ESCALATE, and the
 * agent-pep profile in `context` (`verdict` and `sessionLabels` always).
 * @internal
 */
export function toEvaluationAnswer(decision: Decision): { decision: boolean; context: Record<string, unknown> } {
  const context: Record<string, unknown> = { verdict: decision.verdict, decisionId: decision.decisionId };
  if (decision.reason !== undefined) context.reason_admin = decision.reason;
  if (decision.latches.length > 0) context.latches = decision.latches;
  context.sessionLabels = decision.sessionLabels;
  if (decision.grants.length > 0) context.grants = decision.grants;
  if (decision.permitId !== undefined) context.permitId = decision.permitId;
  if (decision.transformedContent !== undefined) context.transformedContent = decision.transformedContent;
  if (decision.transformedArgs !== undefined) context.transformedArgs = decision.transformedArgs;
  if (decision.escalationId !== undefined) context.escalationId = decision.escalationId;
  if (decision.route !== undefined) context.route = decision.route;
  return { decision: decision.verdict === 'ALLOW' || decision.verdict === 'WARN', context };
}

/** The answer of one batch item that could not be decided (AuthZEN 1.0: `decision: false` with an error). @internal */
export function toEvaluationError(error: HttpError): { decision: false; context: Record<string, unknown> } {
  return {
    decision: false,
    context: { verdict: 'BLOCK', error: { status: error.status, code: error.code, message: error.message } },
  };
}

/** A parsed `evaluations` request. @internal */
export interface EvaluationsRequest {
  /** Each item with the top-level defaults filled in (an item's member replaces a default whole). */
  items: EvaluationParts[];
  semantic: EvaluationsSemantic;
  /** True when `evaluations` was absent or empty: the request is one evaluation, answered as one. */
  single: boolean;
}

/**
 * Reads an `evaluations` body (AuthZEN 1.0 section 7): top-level `subject`, `action`, `resource` and
 * `context` are defaults for each item; `options.evaluations_semantic` is `execute_all` (default),
 * `deny_on_first_deny` or `permit_on_first_permit`.
 * @throws HttpError 400 `bad_request`
 * @internal
 */
export function parseEvaluations(body: Record<string, unknown>, maxItems: number): EvaluationsRequest {
  const defaults: EvaluationParts = {
    subject: body.subject,
    action: body.action,
    resource: body.resource,
    context: body.context,
  };
  let semantic: EvaluationsSemantic = 'execute_all';
  if (body.options !== undefined) {
    const options = record(body.options, 'options');
    const given = options.evaluations_semantic;
    if (given !== undefined) {
      if (typeof given !== 'string' || !SEMANTICS.includes(given)) {
        throw badRequest(
          'options.evaluations_semantic must be execute_all, deny_on_first_deny or permit_on_first_permit',
        );
      }
      semantic = given as EvaluationsSemantic;
    }
  }
  const list = body.evaluations;
  if (list === undefined || (Array.isArray(list) && list.length === 0)) {
    return { items: [defaults], semantic, single: true };
  }
  if (!Array.isArray(list)) throw badRequest('evaluations must be an array');
  if (list.length > maxItems) throw badRequest(`at most ${maxItems} evaluations in one request`);
  const items = list.map((item: unknown, i) => {
    const own = record(item, `evaluations[${i}]`);
    return {
      subject: own.subject !== undefined ? own.subject : defaults.subject,
      action: own.action !== undefined ? own.action : defaults.action,
      resource: own.resource !== undefined ? own.resource : defaults.resource,
      context: own.context !== undefined ? own.context : defaults.context,
    };
  });
  return { items, semantic, single: false };
}

/** True when a batch with this semantic stops after an item answered `decision`. @internal */
export function stopsAfter(semantic: EvaluationsSemantic, decision: boolean): boolean {
  return (semantic === 'deny_on_first_deny' && !decision) || (semantic === 'permit_on_first_permit' && decision);
}

/** The discovery document (AuthZEN 1.0 section 9) of a PDP served at `url`. @internal */
export function configurationDocument(url: string): Record<string, string> {
  return {
    policy_decision_point: url,
    access_evaluation_endpoint: `${url}${AUTHZEN_PATHS.evaluation}`,
    access_evaluations_endpoint: `${url}${AUTHZEN_PATHS.evaluations}`,
  };
}
