/**
 * `agent-pep/ai`: the Vercel AI SDK adapter (`ai` 6.x and 7.x, docs/adapters.md).
 *
 * - {@link guardTools}: each tool body runs only after an ALLOW or WARN whose permit verifies; ESCALATE
 *   goes through the SDK's tool approval, and an approved call is asked of the PDP again.
 * - {@link pepToolApproval}: for 7.x `toolApproval`, a BLOCK becomes the SDK's `execution-denied` result.
 * - {@link pepMiddleware}: `input` and `context_egress` checks of the prompt, `output` checks of the
 *   generated text (streams released only after the check).
 *
 * Only types are imported from `ai`, so the one adapter works with whichever major is installed.
 * @packageDocumentation
 * @module adapters/ai
 */
import { nodeBuiltin } from '../internal/runtime.js';

// Where modules resolve at run time (Node, Deno, Bun), a missing `ai` is named at once. On Vercel Edge
// and workerd there is no node:module: the bundler that built the app resolved `ai` already.
const nodeModule = nodeBuiltin<typeof import('node:module')>('node:module');
if (nodeModule !== undefined) {
  try {
    nodeModule.createRequire(import.meta.url).resolve('ai');
  } catch {
    throw new Error("agent-pep/ai needs the Vercel AI SDK: install the 'ai' package (6.x or 7.x), e.g. npm install ai");
  }
}

export type { PepMiddlewareOptions } from './ai/middleware.js';
export { pepMiddleware } from './ai/middleware.js';
export type {
  GuardToolsOptions,
  PepToolApprovalOptions,
  PepToolApprovalRequest,
  PepToolApprovalStatus,
  PermitContext,
} from './ai/tools.js';
export { guardTools, pepToolApproval } from './ai/tools.js';
export type { PepPrepareStepResult } from './ai/visible.js';
export { pepPrepareStep } from './ai/visible.js';
