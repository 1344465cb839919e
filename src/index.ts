/**
 * agent-pep: a policy enforcement point (PEP) for AI agents.
 *
 * Every step an agent takes across a boundary (input, context egress, output, delivery, action) is
 * sent to a remote policy decision point (PDP); its verdict is enforced, and anything ambiguous fails
 * closed as a synthesized BLOCK. Every export, with its shape: docs/api.md in the repository.
 * @packageDocumentation
 * @module agent-pep
 */

export type { AfterResult, BeforeResult, Interceptor, Step } from './core/interceptors.js';
export type {
  FailClosedCode,
  IntentConstraint,
  IntentGrant,
  PolicyDecision,
  SandboxRoute,
  Stage,
  SynthesizedInfo,
  TextStage,
  Verdict,
} from './decision.js';
export { FAIL_CLOSED_CODES, STAGES, TEXT_STAGES, VERDICTS } from './decision.js';
export type { EnforcementCode, PermitErrorCode } from './errors.js';
export {
  PermitVerificationError,
  PolicyBlockedError,
  PolicyEnforcementError,
  PolicyEscalatedError,
  toolMessage,
} from './errors.js';
export type {
  EvidenceFailureReason,
  EvidenceRecord,
  EvidenceVerification,
  VerifyEvidenceOptions,
} from './evidence/verify.js';
export { verifyEvidence } from './evidence/verify.js';
export { normalizeToolName } from './internal/tool-name.js';
export type { ModelRequest, ModelRequestResult } from './options/interceptors.js';
export type {
  ActionCall,
  ActionCallOptions,
  CallOptions,
  DecisionEvent,
  EgressCallOptions,
  InputCallOptions,
  ObservedDecision,
  PepOptions,
  PermitKeySource,
  PermitsOptions,
  SandboxCall,
  SandboxRunner,
} from './options/pep.js';
export { DEFAULTS } from './options/pep.js';
export type {
  AwaitResolutionOptions,
  EscalationWait,
  EscalationWaitStatus,
  GuardedTool,
  Guards,
  GuardToolOptions,
  Pep,
  StandardSchemaIssue,
  StandardSchemaResult,
  StandardSchemaV1,
  ToolExecutionContext,
  VisibleToolsOptions,
} from './pep.js';
export { createPep } from './pep.js';
export type { PermitClaims } from './permit/claims.js';
export { actionHash } from './permit/hash.js';
export type { PermitVerifier, PermitVerifierOptions } from './permit/verifier.js';
export { createPermitVerifier } from './permit/verifier.js';
export type { MemoryReplayStoreOptions } from './replay/memory.js';
export { createMemoryReplayStore, ReplayStoreFullError } from './replay/memory.js';
export { type ReplayStore, ReplayUnknownError } from './replay/types.js';
export type { TelemetryMeter, TelemetryOption, TelemetryTracer } from './telemetry.js';
