/**
 * Enforceability checks (docs/fail-closed.md, rules 4 and 5): a schema-valid answer becomes a
 * decision only when it is unambiguous and every field is where it may be.
 * Step of the client pipeline after the wire: transport -> wire -> enforceability -> decision.
 * @internal
 */
import type { PolicyDecision } from '../decision.js';
import { AttemptFailure } from '../internal/failure.js';
import { snapshotJsonObject } from '../internal/json.js';
import { checkPermitBinding } from '../permit/binding.js';
import type { AuthorizeResponse, SentRequest } from '../wire/agent-pep.js';
import { readRoute } from './interceptors.js';

export type { SentRequest };

function ambiguous(what: string): never {
  throw new AttemptFailure('ambiguous_decision', `PDP decision is ambiguous: ${what}`);
}

/** Which of the optional enforceability checks apply. */
export interface EnforceOptions {
  /** Rule 5: the permit must decode to the tool, args, agent and session asked about (`permits` configured). */
  checkPermitBinding: boolean;
  /** Rule 4: a response must echo the request id in the body or the `x-request-id` header. */
  requireEcho: boolean;
  /**
   * Rule 4 relaxed for an AuthZEN PDP that mints no permits (`permits: false` over AuthZEN, docs/authzen.md): an action ALLOW needs no `permitId`. A WARN still does.
   */
  allowWithoutPermit?: boolean;
}

/**
 * Applies rule 4 (and rule 5 when `checkPermitBinding`) and builds the decision.
 * @throws AttemptFailure `ambiguous_decision`
 */
export function toDecision(
  res: AuthorizeResponse,
  raw: Record<string, unknown>,
  sent: SentRequest,
  responseRequestId: string | string[] | undefined,
  enforce: EnforceOptions,
): PolicyDecision {
  const { verdict } = res;
  if (Object.hasOwn(raw, 'error')) ambiguous('the PDP reported an error');
  const errors = raw.errors;
  if (errors !== undefined && !(Array.isArray(errors) && errors.length === 0)) ambiguous('the PDP reported errors');
  if (res.obligations !== undefined && res.obligations.length > 0) ambiguous('obligations this PEP cannot fulfil');
  if (res.requestId !== undefined && res.requestId !== sent.requestId) ambiguous('requestId echo differs');
  if (res.stage !== undefined && res.stage !== sent.stage) ambiguous('stage echo differs');
  if (responseRequestId !== undefined && responseRequestId !== sent.requestId) ambiguous('x-request-id differs');
  if (enforce.requireEcho && res.requestId === undefined && responseRequestId === undefined) {
    ambiguous('no request id echo (requireEcho)');
  }
  if (res.simulated === true && !sent.simulated) ambiguous('simulated answer to a real request');

  const decision: PolicyDecision = { verdict, stage: sent.stage, requestId: sent.requestId };
  if (res.decisionId !== undefined) decision.decisionId = res.decisionId;
  if (res.reason !== undefined) decision.reason = res.reason;
  if (res.latches !== undefined) decision.latches = res.latches;
  if (res.sessionLabels !== undefined) decision.sessionLabels = res.sessionLabels;
  if (res.grants !== undefined) decision.grants = res.grants;
  if (res.escalationId !== undefined) decision.escalationId = res.escalationId;
  if (sent.simulated) decision.simulated = true;

  const permitting = verdict === 'ALLOW' || verdict === 'WARN';
  if (sent.stage === 'action') {
    if (res.transformedContent !== undefined) ambiguous('transformedContent on an action');
    if (res.transformedArgs !== undefined && verdict !== 'WARN') ambiguous('transformedArgs outside an action WARN');
    if (res.permitId !== undefined && !permitting) ambiguous('permitId on a BLOCK or ESCALATE');
    if (res.transformedArgs !== undefined) {
      try {
        decision.transformedArgs = snapshotJsonObject(res.transformedArgs);
      } catch {
        ambiguous('transformedArgs is not a JSON object');
      }
    }
    if (res.route !== undefined) {
      // A route sends the action to a named sandbox instead of the tool (docs/interceptors.md): a WARN's alone.
      if (verdict !== 'WARN') ambiguous('route outside an action WARN');
      const route = readRoute(res.route as { to?: unknown; profile?: unknown });
      if (typeof route === 'string') ambiguous(route);
      decision.route = route;
    }
    if (permitting && !sent.simulated) {
      if (res.permitId !== undefined) {
        decision.permitId = res.permitId;
        if (enforce.checkPermitBinding) {
          const bound = checkPermitBinding(res.permitId, {
            tool: sent.tool as string,
            args: decision.transformedArgs ?? sent.args ?? {},
            argsJson: decision.transformedArgs === undefined ? sent.argsJson : undefined,
            agentId: sent.agentId,
            session: sent.session,
          });
          if (typeof bound === 'string') ambiguous(bound);
          sent.bound = bound;
        }
      } else if (!(enforce.allowWithoutPermit && verdict === 'ALLOW')) {
        ambiguous('an action ALLOW or WARN without a permit');
      }
    }
    // A simulated request gets no permit; one that comes anyway is dropped.
  } else {
    if (res.permitId !== undefined) ambiguous('permitId on a text stage');
    if (res.route !== undefined) ambiguous('route on a text stage');
    if (res.transformedArgs !== undefined) ambiguous('transformedArgs on a text stage');
    if (verdict === 'WARN') {
      if (res.transformedContent === undefined) ambiguous('a text WARN without transformedContent');
      decision.transformedContent = res.transformedContent;
    } else if (res.transformedContent !== undefined) {
      ambiguous('transformedContent outside a text WARN');
    }
  }
  return decision;
}
