/**
 * `guardAgentMcp` for the Cloudflare Agents SDK: every `callTool` of the agent's MCP client manager
 * (`agent.mcp`, which the tools of `agent.mcp.getAITools()` call too) is authorized before the request
 * leaves, carries its permit in `_meta`, and its result is checked at `context_egress` (docs/adapters.md).
 * Structural types only.
 * @internal
 */
import type { Pep } from '../../pep.js';
import {
  argsBySchema,
  callOptions,
  type Enforcement,
  enforcementOf,
  PERMIT_META_KEY,
  RULES,
  readOptions,
  requirePermits,
  SESSION_META_KEY,
} from '../kit.js';
import { type AgentLike, agentSession } from './session.js';

/** Options of {@link guardAgentMcp}. */
export interface GuardAgentMcpOptions {
  /**
   * Check each tool result at `context_egress` (with the tool's name) before the caller (the model,
   * through `getAITools()`) sees it: WARN replaces its text with the PDP's, BLOCK or ESCALATE withhold
   * it. @defaultValue true
   */
  checkResult?: boolean;
}

/** The MCP client manager of an agent (`MCPClientManager` of `agents/mcp/client`), as far as this guard reads it. */
export interface McpClientManagerLike {
  callTool(params: McpCallParams, ...rest: unknown[]): Promise<unknown>;
  /** The connections by server id, each with the tools its server listed. */
  mcpConnections?: Record<string, { tools?: readonly { name: string; inputSchema?: unknown }[] } | undefined>;
}

/** The params of `MCPClientManager.callTool`. */
export interface McpCallParams {
  serverId: string;
  name: string;
  arguments?: Record<string, unknown> | undefined;
  _meta?: Record<string, unknown> | undefined;
  [key: string]: unknown;
}

/** An MCP tool-error result: what MCP clients, and `getAITools()`' tools, show the model. */
function toolError(text: string) {
  return { isError: true, content: [{ type: 'text', text }] };
}

/** The result as MCP gives it: a substitute that is not MCP-shaped becomes one text part. */
function asMcpResult(result: unknown): unknown {
  if (typeof result === 'object' && result !== null && Array.isArray((result as { content?: unknown }).content)) {
    return result;
  }
  return { content: [{ type: 'text', text: typeof result === 'string' ? result : JSON.stringify(result) }] };
}

const GUARDED = new WeakSet<object>();

/**
 * The args as the server's tool will run them (docs/adapters.md "Schemas"): by the `inputSchema` the
 * server listed for it (defaults filled in; a value of another JSON type refused), or as sent when the
 * connection lists no such tool.
 */
function argsByListedSchema(manager: McpClientManagerLike, serverId: string, name: string, given: unknown) {
  if (typeof given !== 'object' || given === null || Array.isArray(given))
    return { kind: 'args' as const, args: given };
  const listed = manager.mcpConnections?.[serverId]?.tools?.find((t) => t.name === name);
  return argsBySchema(listed?.inputSchema, given as Record<string, unknown>);
}

/** One guarded call: decide, send with the permit, finish (after interceptors, result check). */
async function guardedCall(
  enforcement: Enforcement,
  manager: McpClientManagerLike,
  send: McpClientManagerLike['callTool'],
  session: string | undefined,
  check: boolean,
  params: McpCallParams,
  rest: unknown[],
): Promise<unknown> {
  let sent = false;
  try {
    if (typeof params !== 'object' || params === null || typeof params.name !== 'string') {
      throw new TypeError('not a tools/call');
    }
    // The name as the server knows it (the manager strips a `<serverId>.` prefix the same way).
    const name = params.name.replace(`${params.serverId}.`, '');
    const withSignal = rest.find((r) => typeof r === 'object' && r !== null && 'signal' in r) as { signal?: unknown };
    const opts = callOptions({ session, signal: withSignal?.signal });
    const planned = argsByListedSchema(manager, params.serverId, name, params.arguments ?? {});
    if (planned.kind === 'refused') {
      return toolError(enforcement.refuse({ stage: 'action', tool: name }, 'invalid_request', planned.why).toolMessage);
    }
    const decided = await enforcement.decideAction(name, planned.args, opts);
    if (decided.kind === 'refused') return toolError(decided.toolMessage);
    if (decided.kind === 'substituted') return asMcpResult(decided.result);
    const meta = { ...(params._meta ?? {}) };
    if (decided.permitId !== undefined) meta[PERMIT_META_KEY] = decided.permitId;
    // The session the call was decided in, for a server guard that decides itself (CONTRACT.md section 16).
    meta[SESSION_META_KEY] = decided.session;
    sent = true;
    const result = await send({ ...params, name, arguments: decided.args, _meta: meta }, ...rest);
    const done = await enforcement.finishAction(name, decided, result, check);
    if (done.kind === 'refused') return toolError(done.toolMessage);
    return typeof done.result === 'string' ? asMcpResult(done.result) : done.result;
  } catch (cause) {
    if (sent) throw cause; // the server's or the transport's own error, as the manager would give it
    const tool = typeof params?.name === 'string' ? params.name : undefined;
    const r = enforcement.refuse({ stage: 'action', tool }, 'invalid_request', 'adapter error', cause);
    return toolError(r.toolMessage);
  }
}

/**
 * Guards the MCP client of a Cloudflare agent (`agent.mcp`, an `MCPClientManager`): every `callTool`,
 * including those of the tools `agent.mcp.getAITools()` returns, is decided by the PDP before the request
 * leaves, in the session of the agent (its instance name).
 *
 * The call is decided under the MCP tool name (as the server knows it) with its arguments; on ALLOW or
 * WARN it is sent with the decision's args (`transformedArgs` on WARN) and the verified permit in
 * `params._meta['agent-pep/permit']` (and the session in `_meta['agent-pep/session']`), so an MCP server guarded by `agent-pep/mcp`'s `guardMcpServer` with
 * `{ verifier }` verifies it (single use) instead of asking the PDP again. The result then goes through
 * the `after` interceptors and, unless `checkResult: false`, the `context_egress` check: WARN replaces
 * its text with the PDP's, BLOCK or ESCALATE withhold it.
 *
 * @param pep - the client that decides (made with `permits` configured, or `permits: false` explicitly)
 * @param agent - the agent (`this` inside an `Agent`), whose `mcp` is guarded in place and whose
 *   `name` is the session
 * @param opts - `{ checkResult? }` ({@link GuardAgentMcpOptions})
 * @returns `agent.mcp`, guarded
 * @throws TypeError when `agent.mcp` has no `callTool`, it is already guarded, an option is unknown or
 *   bad (`err.option` names it), or `pep` has no `permits` configured (unless `permits: false`)
 * @remarks Fails closed: a blocked, held or failed call is never sent; it answers the MCP tool-error
 * result `{ isError: true, content: [{ type: 'text', text: toolMessage }] }`, which `getAITools()`'
 * tools throw as an error whose message the model reads. The MCP client has no approval step, so an
 * ESCALATE is a hold the model is told about; for the AI SDK's approval, guard the tools with
 * {@link guardTools} instead (not both: each would ask the PDP).
 * @example
 * ```ts
 * class Support extends AIChatAgent<Env> {
 *   async onStart() { guardAgentMcp(pep, this); }
 *   async onChatMessage() { return streamText({ model, tools: this.mcp.getAITools(), messages }).toUIMessageStreamResponse(); }
 * }
 * ```
 */
export function guardAgentMcp<M extends McpClientManagerLike>(
  pep: Pep,
  agent: AgentLike & { mcp: M },
  opts?: GuardAgentMcpOptions,
): M {
  const scope = 'guardAgentMcp';
  const enforcement = enforcementOf(pep, scope);
  const o = readOptions<GuardAgentMcpOptions>(scope, opts, { checkResult: RULES.boolean });
  const manager = agent?.mcp;
  if (typeof manager !== 'object' || manager === null || typeof manager.callTool !== 'function') {
    throw new TypeError(`${scope}: agent.mcp must be the agent's MCPClientManager`);
  }
  if (GUARDED.has(manager)) throw new TypeError(`${scope}: this MCP client manager is already guarded`);
  requirePermits(pep, scope);
  const session = agentSession(agent);
  const send = manager.callTool.bind(manager);
  const check = o.checkResult ?? true;
  Object.defineProperty(manager, 'callTool', {
    value: (params: McpCallParams, ...rest: unknown[]) =>
      guardedCall(enforcement, manager, send, session, check, params, rest),
    configurable: true,
    writable: true,
  });
  GUARDED.add(manager);
  return manager;
}
