/**
 * The enforceability checks moved to `core/enforceable.ts` (a step of the client pipeline), and
 * `SentRequest` to `wire/agent-pep.ts`; this module keeps the old import path working.
 * @internal
 */
export { type EnforceOptions, toDecision } from './core/enforceable.js';
export type { SentRequest } from './wire/agent-pep.js';
