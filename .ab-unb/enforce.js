/**
 * The enforceability checks moved to `core/enforceable.ts` (a step of the client pipeline), and
 * `SentRequest` to `wire/agent-pep.ts`; this module keeps the old import path working.
 * @internal
 */
export { toDecision } from './core/enforceable.js';
