/**
 * The outcomes of the enforcement layer (docs/adapters.md): results, not exceptions. An action is
 * {@link Verified} (run these args with this verified permit), {@link Substituted} (an interceptor's
 * result stands in for the tool's) or {@link Refused}; a text is {@link Passed} or {@link Refused}.
 * @internal
 */
import type { PolicyDecision, SandboxRoute, Stage } from '../decision.js';
import { type EnforcementCode, toolMessage } from '../errors.js';
import type { ModelRequest } from '../options/interceptors.js';
import type { SandboxRunner } from '../options/pep.js';

/** An action the tool may run: exactly `args` (`transformedArgs ?? snapshot`), with `permitId` verified. */
export interface Verified {
  kind: 'verified';
  /** The args that run: the decision's `transformedArgs`, else the args sent (after interceptors). */
  args: Record<string, unknown>;
  /** The verified permit (undefined only with `permits: false`). */
  permitId: string | undefined;
  /** The PDP's ALLOW or WARN. */
  decision: PolicyDecision;
  /** The session the decision was made in. */
  session: string;
  /** The caller's signal, if any. */
  signal: AbortSignal | undefined;
  /** Set when the action is routed to a sandbox: its route and runner run in place of the tool (docs/interceptors.md). */
  sandbox?: { route: SandboxRoute; runner: SandboxRunner };
}

/** An interceptor's `substitute`: its result stands in for the tool's; the tool never runs. */
export interface Substituted {
  kind: 'substituted';
  result: unknown;
  decision: PolicyDecision;
}

/** A step that must not go on: the decision, its code and the text a model sees (docs/api.md). */
export interface Refused {
  kind: 'refused';
  /** The BLOCK or ESCALATE (PDP, interceptor or synthesized) that stopped the step. */
  decision: PolicyDecision;
  /** `'blocked'`, `'escalated'` or the fail-closed code. */
  code: EnforcementCode;
  /** The section-5 text (`ERROR: Tool '<name>' denied by policy: ...`). */
  toolMessage: string;
  /** The tool name as the framework knows it, for actions. */
  tool: string | undefined;
  /** The underlying error, when there is one (a permit that failed verification). */
  cause?: unknown;
}

/** A text that may go on: exactly `text` (`transformedContent ?? original`). */
export interface Passed {
  kind: 'passed';
  text: string;
  decision: PolicyDecision;
}

/** A tool's result that may reach the model, after `after` interceptors and the optional result check. */
export interface Released {
  kind: 'released';
  result: unknown;
}

/** A model request that may be sent: exactly these settings (capped or replaced by interceptors and the PDP). */
export interface ModelPassed {
  kind: 'passed';
  request: ModelRequest;
  decision: PolicyDecision;
}

/** What deciding a model request gives. */
export type ModelResult = ModelPassed | Refused;

/** What deciding an action gives. */
export type ActionResult = Verified | Substituted | Refused;
/** What deciding a text gives. */
export type TextResult = Passed | Refused;
/** What finishing a run gives. */
export type FinishResult = Released | Refused;

/** The code of a decision that stopped a step. */
export function codeOf(decision: PolicyDecision): EnforcementCode {
  return decision.synthesized?.code ?? (decision.verdict === 'ESCALATE' ? 'escalated' : 'blocked');
}

/** Where a refusal of the adapter itself is about (for its decision's stage and text). */
export interface RefusalSite {
  stage: Stage;
  /** The tool name as the framework knows it (actions, and a tool result at context_egress). */
  tool?: string | undefined;
}

/** A refusal of `decision` as it is (a PDP or interceptor BLOCK, an ESCALATE, or a synthesized BLOCK already observed). */
export function refusedBy(decision: PolicyDecision, tool: string | undefined, cause?: unknown): Refused {
  const r: Refused = {
    kind: 'refused',
    decision,
    code: codeOf(decision),
    toolMessage: toolMessage(decision, tool),
    tool,
  };
  if (cause !== undefined) r.cause = cause;
  return r;
}
