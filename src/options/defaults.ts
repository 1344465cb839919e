/**
 * THE defaults of the client: one frozen object, read by every step.
 * @packageDocumentation
 */
import { MAX_TOOL_NAME_LENGTH } from '../internal/tool-name.js';
import { PERMIT_DEFAULTS } from '../permit/verifier.js';

/** The one set of defaults. */
export const DEFAULTS = Object.freeze({
  timeoutMs: 2000,
  retries: 2,
  maxResponseBytes: 65536,
  simulated: false,
  permitAlgorithms: PERMIT_DEFAULTS.algorithms,
  clockToleranceSec: PERMIT_DEFAULTS.clockToleranceSec,
  /** Backoff base: retry n waits at most `backoffBaseMs * 2^(n-1)` ms (jittered). */
  backoffBaseMs: 100,
  /** Longest permit lifetime (`exp - iat`) accepted, in seconds. */
  maxPermitLifetimeSec: PERMIT_DEFAULTS.maxPermitLifetimeSec,
  /** Longest tool name accepted, in characters (docs/dev-pdp.md); longer is `invalid_request`. */
  maxToolNameLength: MAX_TOOL_NAME_LENGTH,
  requireEcho: false,
  protocol: 'agent-pep' as 'agent-pep' | 'authzen',
  /** Most calls in one AuthZEN `evaluations` request; a larger batch goes as several (the dev PDP takes 64). */
  maxEvaluations: 64,
  discover: false,
});
