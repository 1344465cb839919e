/**
 * The human-review side of the LangChain adapter, without LangChain: the interrupt payload an
 * ESCALATE raises (the `humanInTheLoopMiddleware` shape) and how a resume value is read
 * (docs/adapters.md). Anything but a well-formed approval is not an approval.
 * @internal
 */
import type { PolicyDecision } from '../../decision.js';

/** One reviewer decision, as `humanInTheLoopMiddleware` resumes take it. */
export type LangChainReviewDecision = { type: 'approve' } | { type: 'reject'; message?: string };

/** What a resume value means to the adapter. */
export type ReviewAnswer = { kind: 'approve' } | { kind: 'reject'; message: string | undefined } | { kind: 'invalid' };

/**
 * The value a held tool call interrupts the graph with: the `humanInTheLoopMiddleware` request shape
 * (`actionRequests`, `reviewConfigs`), plus the PDP's escalation and the tool call it holds.
 */
export interface PepInterruptValue {
  /** One entry: the held call (`description` is the held `toolMessage` text). */
  actionRequests: { name: string; args: Record<string, unknown>; description: string }[];
  /** One entry: the decisions a resume may carry. */
  reviewConfigs: { actionName: string; allowedDecisions: ('approve' | 'reject')[] }[];
  /** The PDP's review this call is held for (resolve it at the PDP before resuming approved). */
  escalationId?: string;
  /** The PDP's decision id, for its evidence feed. */
  decisionId?: string;
  /** The request id of the ESCALATE decision. */
  requestId: string;
  /** The held tool call's id. */
  toolCallId: string | undefined;
  /** Marks the value as agent-pep's. */
  agentPep: true;
}

/** Builds the interrupt value for a held call. */
export function interruptValue(
  name: string,
  args: Record<string, unknown>,
  toolCallId: string | undefined,
  decision: PolicyDecision,
  description: string,
): PepInterruptValue {
  const value: PepInterruptValue = {
    actionRequests: [{ name, args, description }],
    reviewConfigs: [{ actionName: name, allowedDecisions: ['approve', 'reject'] }],
    requestId: decision.requestId,
    toolCallId,
    agentPep: true,
  };
  if (decision.escalationId !== undefined) value.escalationId = decision.escalationId;
  if (decision.decisionId !== undefined) value.decisionId = decision.decisionId;
  return value;
}

/** Own data property `key` of `obj`, without running getters or proxies' traps beyond one read. */
function own(obj: object, key: string): unknown {
  const d = Object.getOwnPropertyDescriptor(obj, key);
  return d && 'value' in d ? d.value : undefined;
}

/** True for a value shaped like a `humanInTheLoopMiddleware` resume (`{ decisions: [...] }`). */
export function isReviewResume(value: unknown): boolean {
  try {
    return typeof value === 'object' && value !== null && Array.isArray(own(value, 'decisions'));
  } catch {
    return false;
  }
}

/**
 * Reads a resume value: exactly one decision, `{ type: 'approve' }` or `{ type: 'reject', message? }`
 * with a string message. Anything else (an `edit`, several decisions, a getter that throws) is `invalid`,
 * which the adapter treats as "not approved".
 */
export function readReviewAnswer(value: unknown): ReviewAnswer {
  try {
    if (typeof value !== 'object' || value === null) return { kind: 'invalid' };
    const decisions = own(value, 'decisions');
    if (!Array.isArray(decisions) || decisions.length !== 1) return { kind: 'invalid' };
    const first: unknown = decisions[0];
    if (typeof first !== 'object' || first === null) return { kind: 'invalid' };
    const type = own(first, 'type');
    if (type === 'approve') return { kind: 'approve' };
    if (type === 'reject') {
      const message = own(first, 'message');
      if (message !== undefined && typeof message !== 'string') return { kind: 'invalid' };
      return { kind: 'reject', message };
    }
    return { kind: 'invalid' };
  } catch {
    return { kind: 'invalid' };
  }
}

/** Longest reviewer message passed on to the model, in characters. */
const MAX_REVIEW_MESSAGE = 2000;

/** The tool result the model sees for a call a reviewer rejected (or answered with anything but an approval). */
export function reviewRefusalText(tool: string, answer: ReviewAnswer): string {
  if (answer.kind === 'reject') {
    const message = answer.message?.slice(0, MAX_REVIEW_MESSAGE);
    return message
      ? `ERROR: Tool '${tool}' was not run: rejected by a reviewer: ${message}`
      : `ERROR: Tool '${tool}' was not run: rejected by a reviewer`;
  }
  return `ERROR: Tool '${tool}' was not run: the review answer was not an approval`;
}
