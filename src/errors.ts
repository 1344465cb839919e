/**
 * Typed errors. Only the guard helpers and the permit verifier throw; stage methods never reject.
 * Messages never contain a permit, an API key, args or content (CONTRACT.md section 5).
 * @packageDocumentation
 */
import type { PolicyDecision, Stage } from './decision.js';

function reasonOf(decision: PolicyDecision): string {
  return decision.reason ?? decision.synthesized?.message ?? `verdict ${decision.verdict}`;
}

function toolMessageFor(decision: PolicyDecision, tool: string | undefined): string {
  const reason = reasonOf(decision);
  return tool !== undefined
    ? `ERROR: Tool '${tool}' denied by policy: ${reason}`
    : `ERROR: ${decision.stage} blocked by policy: ${reason}`;
}

/** Common shape of the two policy errors. */
abstract class PolicyError extends Error {
  /** The decision that stopped the step (never includes content or args in its message). */
  readonly decision: PolicyDecision;
  /** The text a model should see as the tool's result or the stage's outcome. */
  readonly toolMessage: string;
  /** The tool name for an action, else undefined. */
  readonly tool: string | undefined;
  /** The stage that was stopped. */
  readonly stage: Stage;
  /** The request id of the decision, for support and the PDP's evidence feed. */
  readonly requestId: string;

  protected constructor(kind: string, decision: PolicyDecision, tool?: string, options?: { cause?: unknown }) {
    const what = tool !== undefined ? `tool '${tool}'` : `stage ${decision.stage}`;
    super(`${what} ${kind} by policy: ${reasonOf(decision)} (request ${decision.requestId})`, options);
    this.decision = decision;
    this.tool = tool;
    this.stage = decision.stage;
    this.requestId = decision.requestId;
    this.toolMessage = toolMessageFor(decision, tool);
  }
}

/**
 * Thrown by `guardTool`/`guardText` when the step must not run: a PDP BLOCK, a synthesized
 * (fail-closed) BLOCK, a simulated decision, or a permit that failed verification.
 */
export class PolicyBlockedError extends PolicyError {
  override readonly name = 'PolicyBlockedError';
  /** `'blocked'` for a PDP BLOCK, else the synthesized `FailClosedCode`. */
  readonly code: string;
  /**
   * @param decision - the decision that blocked the step
   * @param tool - the tool name, for actions
   * @param options - `cause`: the underlying error, if any
   */
  constructor(decision: PolicyDecision, tool?: string, options?: { cause?: unknown }) {
    super('denied', decision, tool, options);
    this.code = decision.synthesized?.code ?? 'blocked';
  }
}

/** Thrown by `guardTool`/`guardText` on ESCALATE: the step is held for a human review. */
export class PolicyEscalatedError extends PolicyError {
  override readonly name = 'PolicyEscalatedError';
  /** Always `'escalated'`. */
  readonly code = 'escalated';
  /** The review the step is held for, when the PDP gave one. */
  readonly escalationId: string | undefined;
  /**
   * @param decision - the ESCALATE decision
   * @param tool - the tool name, for actions
   */
  constructor(decision: PolicyDecision, tool?: string) {
    super('held for review', decision, tool);
    this.escalationId = decision.escalationId;
  }
}

/** Every reason a permit can be refused (CONTRACT.md section 4). */
export type PermitErrorCode =
  | 'permit_missing'
  | 'permit_malformed'
  | 'permit_alg_not_allowed'
  | 'permit_signature_invalid'
  | 'permit_expired'
  | 'permit_not_yet_valid'
  | 'permit_claim_invalid'
  | 'permit_tool_mismatch'
  | 'permit_args_mismatch'
  | 'permit_replayed'
  | 'permit_keys_unavailable'
  | 'permit_store_unavailable';

/**
 * Thrown (as a rejection) by `PermitVerifier.verify` when a permit must not be honoured.
 * The message names the failed check, never the permit itself.
 */
export class PermitVerificationError extends Error {
  override readonly name = 'PermitVerificationError';
  /** Which check failed. */
  readonly code: PermitErrorCode;
  /**
   * @param code - which check failed
   * @param message - a description without the permit, args or keys
   * @param options - `cause`: the underlying error (e.g. from jose)
   */
  constructor(code: PermitErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
