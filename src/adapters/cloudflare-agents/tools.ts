/**
 * `guardTools` for the Cloudflare Agents SDK: its agents call AI SDK tools, so this is `agent-pep/ai`'s
 * `guardTools` in the session of the agent (docs/adapters.md).
 * @internal
 */
import { optionError } from '../../options/kit.js';
import type { Pep } from '../../pep.js';
import { type GuardToolsOptions as AiGuardToolsOptions, guardTools as guardAiTools } from '../ai/tools.js';
import { type AgentLike, agentSession } from './session.js';

/** Options of {@link guardTools}: those of `agent-pep/ai`'s `guardTools`, the session being the agent's. */
export type GuardToolsOptions = Omit<AiGuardToolsOptions, 'session'>;

/**
 * Wraps the AI SDK tools a Cloudflare agent gives `streamText`/`generateText` (its own tools, and those
 * of `this.mcp.getAITools()`) so that each body runs only after an ALLOW or WARN whose permit verifies,
 * every decision in the session of the agent (its instance name, else its Durable Object id).
 *
 * Everything else is `agent-pep/ai`'s `guardTools`: ESCALATE goes through the AI SDK's tool approval
 * (`needsApproval`; the chat client answers the `tool-approval-request`), and an approved call is asked of
 * the PDP again; `checkResult: true` checks each result at `context_egress`.
 *
 * @param pep - the client that decides (made with `permits` configured, or `permits: false` explicitly)
 * @param agent - the agent (`this` inside an `Agent` or `AIChatAgent`)
 * @param tools - the AI SDK tool set (`{ name: tool({...}) }`)
 * @param opts - `{ checkResult?, approval?, hideBlocked? }` (`agent-pep/ai`'s options, without `session`)
 * @returns a new tool set with the same keys
 * @throws TypeError as `agent-pep/ai`'s `guardTools` does (`session` is not an option here)
 * @remarks Fails closed as `agent-pep/ai` does: the model reads the `toolMessage` as the tool's error.
 * Do not also guard the manager with {@link guardAgentMcp} for the same MCP tools (each would ask the PDP).
 * @example
 * ```ts
 * const tools = guardTools(pep, this, { ...this.mcp.getAITools(), refund_payment });
 * return streamText({ model, tools, messages }).toUIMessageStreamResponse();
 * ```
 */
export function guardTools<TOOLS extends Record<string, object>>(
  pep: Pep,
  agent: AgentLike,
  tools: TOOLS,
  opts: GuardToolsOptions = {},
): TOOLS {
  if (typeof opts === 'object' && opts !== null && Object.hasOwn(opts, 'session')) {
    optionError('guardTools', 'session', "the session is the agent's name, not an option");
  }
  const session = agentSession(agent);
  return guardAiTools(pep, tools, session === undefined ? opts : { ...opts, session });
}
