/**
 * agent-pep: a policy enforcement point (PEP) for AI agents.
 *
 * Every step an agent takes across a boundary (input, context egress, output, delivery, action) is
 * sent to a remote policy decision point (PDP); its verdict is enforced, and anything ambiguous fails
 * closed as a synthesized BLOCK. See CONTRACT.md for the fixed public surface.
 * @packageDocumentation
 */
export { createPep } from './client.js';
export { createPermitVerifier } from './permit/verify.js';
export { createMemoryReplayStore } from './replay/memory.js';
export { normalizeToolName } from './permit/normalize.js';
export { actionHash } from './permit/hash.js';
export { verifyEvidence } from './evidence/verify.js';
export { PolicyBlockedError, PolicyEscalatedError, PermitVerificationError } from './errors.js';
export { DEFAULTS } from './options.js';

export type { Pep, GuardedTool, ToolExecutionContext } from './client.js';
export type { Verdict, Stage, TextStage, FailClosedCode, PolicyDecision, SynthesizedInfo } from './decision.js';
export type { PepOptions, CallOptions, PermitsOptions, PermitKeySource, DecisionEvent } from './options.js';
export type { PermitErrorCode } from './errors.js';
export type { PermitClaims, PermitVerifier, PermitVerifierOptions } from './permit/verify.js';
export type { ReplayStore } from './replay/types.js';
export type { MemoryReplayStoreOptions } from './replay/memory.js';
export type { EvidenceRecord, EvidenceVerification } from './evidence/verify.js';
