/**
 * `agent-pep/mastra`: the Mastra adapter (`@mastra/core` 1.x, docs/adapters.md).
 *
 * - {@link guardTools}: each tool body runs only after an ALLOW or WARN whose permit verifies, in the
 *   session of the agent's memory thread; ESCALATE suspends the run for Mastra's tool-call approval
 *   (`agent.approveToolCall` / `declineToolCall`), and an approved call is asked of the PDP again; each
 *   result is checked at `context_egress` before the agent (model, memory, messages) gets it.
 * - {@link pepInputProcessor}: the user's text checked at the `input` stage, as a Mastra input processor.
 * - {@link pepOutputProcessor}: the generated text checked at the `output` stage before `generate`
 *   returns it, as a Mastra output processor.
 *
 * Only types are imported from `@mastra/core`; this module checks at load that it is installed.
 * @packageDocumentation
 * @module adapters/mastra
 */
import { createRequire } from 'node:module';

const PACKAGE = '@mastra/core';
try {
  createRequire(import.meta.url).resolve(PACKAGE);
} catch {
  throw new Error(`agent-pep/mastra needs the package ${PACKAGE}: npm install ${PACKAGE}`);
}

export type { PepInputProcessor, PepInputProcessorOptions, PepProcessInputArgs } from './mastra/input.js';
export { pepInputProcessor } from './mastra/input.js';
export type { PepOutputProcessor, PepOutputProcessorOptions, PepProcessOutputArgs } from './mastra/output.js';
export { pepOutputProcessor } from './mastra/output.js';
export type { GuardToolsOptions, PermitContext } from './mastra/tools.js';
export { guardTools } from './mastra/tools.js';
