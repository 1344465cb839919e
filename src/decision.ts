/**
 * Verdicts, stages and the decision shape every stage method resolves with (docs/api.md).
 * @packageDocumentation
 */

/** The four verdicts a PDP may return, least to most restrictive but for ESCALATE (a hold). Case-sensitive on the wire. */
export const VERDICTS = Object.freeze(['ALLOW', 'WARN', 'BLOCK', 'ESCALATE'] as const);

/** One of {@link VERDICTS}. */
export type Verdict = (typeof VERDICTS)[number];

/** The text stages, in the order an agent usually crosses them. */
export const TEXT_STAGES = Object.freeze(['input', 'context_egress', 'output', 'delivery'] as const);

/** Every stage: the text stages, then `action` (a proposed tool call). The one list every schema uses. */
export const STAGES = Object.freeze([...TEXT_STAGES, 'action'] as const);

/** The text stages: `input`, `context_egress`, `output`, `delivery`. */
export type TextStage = (typeof TEXT_STAGES)[number];

/** A boundary crossing: one of the text stages, or `action` (a proposed tool call). */
export type Stage = (typeof STAGES)[number];

/** Every {@link FailClosedCode}: the one list, for validation and documentation; the type is derived from it. */
export const FAIL_CLOSED_CODES = Object.freeze([
  'pdp_unreachable',
  'pdp_timeout',
  'pdp_status',
  'invalid_response',
  'ambiguous_decision',
  'invalid_request',
  'aborted',
  'permit_invalid',
  'simulated',
  'interceptor_failed',
  'tool_changed',
  'session_state_lost',
] as const);

/**
 * Why the PEP made up a BLOCK itself instead of returning the PDP's verdict (fail-closed).
 *
 * - `pdp_unreachable`: connect refused, DNS failure, socket reset, pool closed
 * - `pdp_timeout`: the deadline (`timeoutMs`) fired
 * - `pdp_status`: any HTTP status but 200 (after retries where retryable)
 * - `invalid_response`: not JSON / not I-JSON (RFC 7493), wrong content type, too large, fails the schema
 * - `ambiguous_decision`: schema-valid but contradictory or unenforceable
 * - `invalid_request`: the call could not be turned into a request (e.g. args not JSON)
 * - `aborted`: the caller's signal fired
 * - `permit_invalid`: guard helpers: the permit failed verification before execution
 * - `simulated`: guard helpers: a simulated decision can never be enforced
 * - `interceptor_failed`: a local interceptor threw, answered nonsense, or was still pending at the deadline
 * - `tool_changed`: an MCP tool whose definition differs from its pin, or that was not pinned (docs/visibility.md)
 * - `session_state_lost`: the PDP answered 409 `session_state_lost`: it holds no state for a session this
 *   PEP has counted decided steps of (a PDP restart, a session store that lost its data, an expired session;
 *   docs/dev-pdp.md, "Session integrity"). Start a new session.
 *
 * One of {@link FAIL_CLOSED_CODES} (derived from the list, so the two cannot differ).
 */
export type FailClosedCode = (typeof FAIL_CLOSED_CODES)[number];

/** Details of a BLOCK the PEP synthesized itself. */
export interface SynthesizedInfo {
  /** Machine-readable reason; stable across versions. */
  code: FailClosedCode;
  /** Human-readable explanation. Never contains content, args, a permit or an API key. */
  message: string;
  /** HTTP attempts made (0 when no request was sent). */
  attempts: number;
  /** The last HTTP status seen, for `pdp_status`. */
  status?: number;
}

/**
 * What the five stage methods resolve with. A PDP verdict is a value, never an exception.
 *
 * @remarks `synthesized` is present exactly when the PEP made this BLOCK up itself (fail-closed);
 * a BLOCK the PDP returned has no `synthesized`.
 */
export interface PolicyDecision {
  /** The verdict to enforce. Always `BLOCK` when `synthesized` is set. */
  verdict: Verdict;
  /** The stage this decision is for. */
  stage: Stage;
  /** The id this PEP generated and sent as `x-request-id` and in the body. */
  requestId: string;
  /** The PDP's id for this decision, as it appears in its evidence feed. */
  decisionId?: string;
  /** The PDP's (or the PEP's) reason, for people. */
  reason?: string;
  /** Ids of the latches that engaged, in policy order. */
  latches?: string[];
  /**
   * The session's labels after this step, as the PDP sent them (docs/dev-pdp.md); absent when the PDP
   * sends none. A PDP that sends anything but an array of strings is `invalid_response`.
   */
  sessionLabels?: string[];
  /**
   * Intent grants (docs/dev-pdp.md, "Intent grants"), as the PDP sent them: on an action, the ids of the
   * grants the call was inside; on an input step, the ids of the grants it made. Absent when the PDP
   * sends none. A PDP that sends anything but an array of strings is `invalid_response`.
   */
  grants?: string[];
  /** Action ALLOW or WARN: the one-time permit, a compact JWS (docs/permits.md). */
  permitId?: string;
  /** Text stage WARN: use this in place of the original content. */
  transformedContent?: string;
  /** Action WARN: the tool runs with these args instead of the proposed ones. */
  transformedArgs?: Record<string, unknown>;
  /** ESCALATE: the review the step is held for. */
  escalationId?: string;
  /** True when this was a simulated (dry-run) request. */
  simulated?: boolean;
  /** Present exactly when the PEP synthesized this BLOCK (fail-closed). */
  synthesized?: SynthesizedInfo;
  /** A BLOCK decided by a local interceptor (`deny` or `substitute`, docs/interceptors.md): its name. */
  interceptor?: string;
  /** An action BLOCK from an interceptor's `substitute`: the result to return in place of running the tool. */
  substitute?: { result: unknown };
  /**
   * Action WARN: run the action in this named sandbox, never as the tool itself (docs/interceptors.md,
   * "Routes to a sandbox"). Set by the PDP (`route` on an action WARN) or a `before` interceptor's
   * `route` answer; `guardTool` and the adapters run the runner registered under `to` in
   * `createPep({ sandboxes })`, and a route to a name not registered there is a synthesized BLOCK.
   */
  route?: SandboxRoute;
}

/** Where a routed action runs: the name of a sandbox registered in `createPep({ sandboxes })`, and an optional profile. */
export interface SandboxRoute {
  /** The sandbox's name (a key of `createPep({ sandboxes })`). Non-empty, at most 128 characters. */
  to: string;
  /** A profile the runner reads (e.g. `'no-network'`); its meaning is the runner's. At most 128 characters. */
  profile?: string;
}

/**
 * One constraint of an {@link IntentGrant} on the value at a path of the call's args: exactly one operator.
 * - `eq`: equal (strings after NFKC and case folding; a number and its decimal string alike)
 * - `in`: equal to one of the list
 * - `lte`, `gte`, `lt`, `gt`: a number (or a decimal string) compared with the bound
 * - `matches`: a string an RE2 regex finds
 * - `fromUser: true`: the value occurs in the user's own words in this session (after NFKC and case folding)
 */
export type IntentConstraint =
  | { eq: string | number | boolean | null }
  | { in: (string | number | boolean | null)[] }
  | { lte: number }
  | { gte: number }
  | { lt: number }
  | { gt: number }
  | { matches: string }
  | { fromUser: true };

/**
 * One thing the user asked for, as the application's own extractor read it from the user's turn, sent
 * with `checkInput(text, { intent: [grant] })` (docs/dev-pdp.md, "Intent grants"; contract section 15).
 * The PDP keeps it in the session only when the input step's final verdict is ALLOW or WARN, and only
 * when its policy takes an application's grants; a latch reads it through `{ "granted": true }`.
 * Grants only narrow what policy allows: none turns a BLOCK into an ALLOW.
 * @example
 * ```ts
 * const grant: IntentGrant = { id: 'pay-rent', tools: 'send_money', args: { amount: { lte: 950 }, to: { fromUser: true } }, uses: 1 };
 * ```
 */
export interface IntentGrant {
  /** The id reported in `decision.grants`: 1 to 64 characters from `A-Z a-z 0-9 _ . : -`. */
  id: string;
  /** A normalized tool pattern (`*` wildcards), `@group` of the PDP's policy, or a list of them. */
  tools: string | string[];
  /** Dotted paths inside the call's args (`amount`, `to.iban`) mapped to one constraint each; all must hold. */
  args?: Record<string, IntentConstraint>;
  /** How many decided (non-simulated ALLOW or WARN) calls inside the grant it lasts; absent: unlimited. */
  uses?: number;
  /** Seconds the grant lives after the input step that made it; absent: as long as the session. */
  expiresInSec?: number;
}

/**
 * Builds a fail-closed BLOCK. Internal helper shared by the client and the guard helpers.
 * @internal
 */
export function synthesizeBlock(
  stage: Stage,
  requestId: string,
  code: FailClosedCode,
  message: string,
  attempts: number,
  status?: number,
): PolicyDecision {
  const synthesized: SynthesizedInfo = { code, message, attempts };
  if (status !== undefined) synthesized.status = status;
  return { verdict: 'BLOCK', stage, requestId, reason: message, synthesized };
}

/** True for a text stage. */
export function isTextStage(stage: unknown): stage is TextStage {
  return stage === 'input' || stage === 'context_egress' || stage === 'output' || stage === 'delivery';
}

/** True for one of the five {@link STAGES}. */
export function isStage(stage: unknown): stage is Stage {
  return stage === 'action' || isTextStage(stage);
}
