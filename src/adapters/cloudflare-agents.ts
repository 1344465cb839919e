/**
 * `agent-pep/cloudflare-agents`: the Cloudflare Agents SDK adapter (`agents` 0.x, docs/adapters.md).
 * Every decision is made in the session of the agent (its instance name).
 *
 * - {@link guardTools}: the AI SDK tools an agent runs (its own, and `this.mcp.getAITools()`): each
 *   body runs only after an ALLOW or WARN whose permit verifies; ESCALATE goes through the AI SDK's tool
 *   approval, and an approved call is asked of the PDP again (`agent-pep/ai`'s `guardTools`).
 * - {@link guardAgentMcp}: the agent's MCP client (`this.mcp`): every `callTool` is authorized before
 *   the request leaves, carries its permit in `_meta['agent-pep/permit']`, and its result is checked at
 *   `context_egress`.
 * - MCP servers (`McpAgent`): guard `this.server` with `agent-pep/mcp`'s `guardMcpServer` in `init()`,
 *   after the tools are registered, with their handles (`{ tools }`; with `{ verifier }` to verify the
 *   permits the agents' guarded clients send).
 *
 * Only types are read from `agents` (its `Agent` runs in workerd only); this module checks at load that
 * it is installed.
 * @packageDocumentation
 * @module adapters/cloudflare-agents
 */
import { createRequire } from 'node:module';

const PACKAGE = 'agents';
try {
  createRequire(import.meta.url).resolve(PACKAGE);
} catch {
  throw new Error(`agent-pep/cloudflare-agents needs the Cloudflare Agents SDK: npm install ${PACKAGE}`);
}

export type { GuardAgentMcpOptions, McpCallParams, McpClientManagerLike } from './cloudflare-agents/mcp-client.js';
export { guardAgentMcp } from './cloudflare-agents/mcp-client.js';
export type { AgentLike } from './cloudflare-agents/session.js';
export { agentSession } from './cloudflare-agents/session.js';
export type { GuardToolsOptions } from './cloudflare-agents/tools.js';
export { guardTools } from './cloudflare-agents/tools.js';
