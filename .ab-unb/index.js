/**
 * agent-pep: a policy enforcement point (PEP) for AI agents.
 *
 * Every step an agent takes across a boundary (input, context egress, output, delivery, action) is
 * sent to a remote policy decision point (PDP); its verdict is enforced, and anything ambiguous fails
 * closed as a synthesized BLOCK. Every export, with its shape: docs/api.md in the repository.
 * @packageDocumentation
 */
export { FAIL_CLOSED_CODES, STAGES, TEXT_STAGES, VERDICTS } from './decision.js';
export { PermitVerificationError, PolicyBlockedError, PolicyEnforcementError, PolicyEscalatedError, toolMessage, } from './errors.js';
export { verifyEvidence } from './evidence/verify.js';
export { DEFAULTS } from './options/pep.js';
export { createPep } from './pep.js';
export { actionHash } from './permit/hash.js';
export { normalizeToolName } from './permit/normalize.js';
export { createPermitVerifier } from './permit/verifier.js';
export { createMemoryReplayStore, ReplayStoreFullError } from './replay/memory.js';
export { ReplayUnknownError } from './replay/types.js';
