/**
 * Typed errors. Only the guard helpers and the permit verifier throw; stage methods never reject.
 * Messages never contain a permit, an API key, args or content (docs/api.md).
 * @packageDocumentation
 */
import type { FailClosedCode, PolicyDecision, Stage } from './decision.js';

/** What a {@link PolicyEnforcementError} carries as `code`: a PDP BLOCK, a hold, or why the PEP failed closed. */
export type EnforcementCode = 'blocked' | 'escalated' | FailClosedCode;

function reasonOf(decision: PolicyDecision): string {
  return decision.reason ?? decision.synthesized?.message ?? `verdict ${decision.verdict}`;
}

/**
 * The text a model (and a person) should see for a step that did not run (docs/api.md).
 * The three cases read differently, so a policy denial, an outage and a hold can be told apart:
 * - PDP or interceptor BLOCK: `ERROR: Tool '<name>' denied by policy: <reason>` / `ERROR: <stage> blocked by policy: <reason>`
 * - synthesized BLOCK: `ERROR: Tool '<name>' was not run: the policy check failed (<code>)` /
 *   `ERROR: <stage> was not checked: the policy check failed (<code>)`
 * - ESCALATE: `ERROR: Tool '<name>' is held for human review: <reason>` / `ERROR: <stage> is held for human review: <reason>`
 *
 * @param decision - a BLOCK or ESCALATE decision (an ALLOW or WARN reads as a denial with its reason)
 * @param tool - the tool name as the framework knows it, for actions; omit for text stages
 * @returns one line, never containing content, args, a permit or an API key (only the PDP's reason and a code)
 */
export function toolMessage(decision: PolicyDecision, tool?: string): string {
  const code = decision.synthesized?.code;
  if (code !== undefined) {
    return tool !== undefined
      ? `ERROR: Tool '${tool}' was not run: the policy check failed (${code})`
      : `ERROR: ${decision.stage} was not checked: the policy check failed (${code})`;
  }
  const reason = reasonOf(decision);
  if (decision.verdict === 'ESCALATE') {
    return tool !== undefined
      ? `ERROR: Tool '${tool}' is held for human review: ${reason}`
      : `ERROR: ${decision.stage} is held for human review: ${reason}`;
  }
  return tool !== undefined
    ? `ERROR: Tool '${tool}' denied by policy: ${reason}`
    : `ERROR: ${decision.stage} blocked by policy: ${reason}`;
}

/**
 * The base of the errors the guard helpers throw when a step must not run. Catch this to handle
 * a denial, an outage and a hold alike; read `code` to tell them apart.
 *
 * `message` is for the person reading a log: the {@link toolMessage} without `ERROR: `, then, for a
 * synthesized BLOCK, its detail (`synthesized.message`: `PDP answered HTTP 401 (unauthorized) at
 * http://127.0.0.1:8787/api/policy/authorize`, `permit refused (permit_claim_invalid):
 * claim 'iss' is not the expected issuer (expected "...")`), then the request id. `toolMessage`, which
 * the model reads, never carries that detail.
 */
export abstract class PolicyEnforcementError extends Error {
  /** `'blocked'` (PDP or interceptor BLOCK), `'escalated'`, or the {@link FailClosedCode} of a synthesized BLOCK. */
  abstract readonly code: EnforcementCode;
  /** The decision that stopped the step. */
  readonly decision: PolicyDecision;
  /** The text a model should see as the tool's result or the stage's outcome (see {@link toolMessage}). */
  readonly toolMessage: string;
  /** The tool name for an action, else undefined. */
  readonly tool: string | undefined;
  /** The stage that was stopped. */
  readonly stage: Stage;
  /** The request id of the decision, for support and the PDP's evidence feed. */
  readonly requestId: string;
  /** The interceptor that decided, when a local interceptor did (docs/interceptors.md). */
  readonly interceptor: string | undefined;

  protected constructor(decision: PolicyDecision, tool?: string, options?: { cause?: unknown }) {
    const message = toolMessage(decision, tool);
    // The cause is where a reader looks (err.message): a synthesized BLOCK's detail (`HTTP 401
    // (unauthorized) at <url>`, which permit check failed and what was expected). Never in
    // `toolMessage`, which the model reads.
    const detail = decision.synthesized !== undefined ? `: ${decision.synthesized.message}` : '';
    super(`${message.slice('ERROR: '.length)}${detail} (request ${decision.requestId})`, options);
    this.decision = decision;
    this.tool = tool;
    this.stage = decision.stage;
    this.requestId = decision.requestId;
    this.toolMessage = message;
    this.interceptor = decision.interceptor;
  }
}

/**
 * Thrown by `guardTool`/`guardText` when the step must not run: a PDP BLOCK, an interceptor's deny,
 * a synthesized (fail-closed) BLOCK, a simulated decision, or a permit that failed verification.
 */
export class PolicyBlockedError extends PolicyEnforcementError {
  override readonly name = 'PolicyBlockedError';
  /** `'blocked'` for a PDP or interceptor BLOCK, else the synthesized {@link FailClosedCode}. */
  readonly code: 'blocked' | FailClosedCode;
  /**
   * @param decision - the decision that blocked the step
   * @param tool - the tool name, for actions
   * @param options - `cause`: the underlying error, if any
   */
  constructor(decision: PolicyDecision, tool?: string, options?: { cause?: unknown }) {
    super(decision, tool, options);
    this.code = decision.synthesized?.code ?? 'blocked';
  }
}

/** Thrown by `guardTool`/`guardText` on ESCALATE: the step is held for a human review. */
export class PolicyEscalatedError extends PolicyEnforcementError {
  override readonly name = 'PolicyEscalatedError';
  /** Always `'escalated'`. */
  readonly code = 'escalated' as const;
  /** The review the step is held for, when the PDP gave one. */
  readonly escalationId: string | undefined;
  /**
   * @param decision - the ESCALATE decision
   * @param tool - the tool name, for actions
   */
  constructor(decision: PolicyDecision, tool?: string) {
    super(decision, tool);
    this.escalationId = decision.escalationId;
  }
}

/** Every reason a permit can be refused (docs/permits.md). */
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
  | 'permit_store_unavailable'
  | 'permit_label_refused'
  | 'permit_replay_unknown';

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
