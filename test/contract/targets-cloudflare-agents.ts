/**
 * The Cloudflare Agents SDK targets of the cross-adapter contract suite (adapter-targets.ts). An
 * `Agent` itself runs only in workerd (`agents` imports `cloudflare:workers`), so each target stands in
 * for it with `{ name }` and drives the pieces that run in Node: the AI SDK 6 tools an agent gives
 * `generateText` (MockLanguageModelV3), and the SDK's own MCP client manager (`MCPClientManager` of
 * `agents/mcp/client`, with the v2 MCP `Client` it uses) talking to an MCP server in memory, called the
 * way the model calls it: through `getAITools()`.
 */
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { MCPClientManager } from 'agents/mcp/client';
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { guardAgentMcp, guardTools } from '../../src/adapters/cloudflare-agents.js';
import type { Pep } from '../../src/index.js';
import { type CallSetup, CONTRACT_SESSION, type SchemaKind, type Target } from './adapter-targets.js';

const TOOL = 'refund_payment';
const asText = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
const defaultResult = (args: Record<string, unknown>) => `refunded ${String(args.amount)}`;

function zodShape(kind: SchemaKind = 'plain') {
  const amount = kind === 'default' ? z.number().default(900) : kind === 'coerce' ? z.coerce.number() : z.number();
  return { orderId: z.string(), amount };
}

let instances = 0;
/** An agent as this adapter reads it: its instance name (the session of its decisions). */
export const agentNamed = () => ({ name: `support-${++instances}` });

// ---------------------------------------------------------------- the agent's AI SDK tools

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};
const finish = (unified: string) => ({ finishReason: { unified, raw: undefined }, usage, warnings: [] });
const call = (input: Record<string, unknown>) => ({
  content: [{ type: 'tool-call', toolCallId: 'c1', toolName: TOOL, input: JSON.stringify(input) }],
  ...finish('tool-calls'),
});
const answer = (text: string) => ({ content: [{ type: 'text', text }], ...finish('stop') });

interface Prompt {
  role: string;
  content: string | { type: string; output?: { type: string; value?: unknown; reason?: string } }[];
}
function toolOutput(prompt: Prompt[] | undefined): string {
  for (const m of prompt ?? []) {
    if (m.role !== 'tool' || !Array.isArray(m.content)) continue;
    for (const p of m.content) {
      if (p.type === 'tool-result') return p.output?.type === 'execution-denied' ? 'denied' : asText(p.output?.value);
    }
  }
  return '(no tool result)';
}

export const cloudflareToolsTarget: Target = {
  name: 'cloudflare-agents tools',
  async action(pep, args, setup: CallSetup = {}) {
    const ran: Record<string, unknown>[] = [];
    const refund = tool({
      inputSchema: z.object(zodShape(setup.schema)),
      execute: async (a: Record<string, unknown>) => {
        ran.push(a);
        return (setup.result ?? defaultResult)(a);
      },
    });
    // the agent is named as the suite's session: an escalation the suite opens at the PDP is the agent's
    const tools = guardTools(pep, { name: CONTRACT_SESSION }, { [TOOL]: refund });
    const model = new MockLanguageModelV3({ doGenerate: [call(args), answer('done'), answer('done')] as never });
    const messages: unknown[] = [{ role: 'user', content: 'refund' }];
    const first = await generateText({ model, tools, messages: messages as never, stopWhen: stepCountIs(3) });
    const request = first.content.find((p) => p.type === 'tool-approval-request');
    if (request === undefined) return { ran, seen: toolOutput(model.doGenerateCalls[1]?.prompt as never) };
    if (setup.review === undefined) return { ran, seen: 'HELD' };
    const approved = setup.review(setup.lastEscalation?.());
    const response = { type: 'tool-approval-response', approvalId: request.approvalId, approved };
    const resumed = [...messages, ...first.response.messages, { role: 'tool', content: [response] }];
    await generateText({ model, tools, messages: resumed as never, stopWhen: stepCountIs(3) });
    return { ran, seen: toolOutput(model.doGenerateCalls.at(-1)?.prompt as never) };
  },
  async text() {
    throw new Error('the Agents SDK has no text stage of its own (see DIFFERS)');
  },
  async ownRefusal(pep) {
    // The PDP's WARN (setArgs amount: 'five') gives args the tool's schema refuses: the adapter refuses them.
    await this.action(pep, { orderId: 'o-unfit', amount: 3 });
  },
};

// ---------------------------------------------------------------- the agent's MCP client (agent.mcp)

/** The SDK's MCP client manager, its one connection a v2 `Client` in memory with an MCP server. */
export async function managerWith(server: McpServer, serverId = 'payments') {
  const mcp = new MCPClientManager('support', '1.0.0');
  const client = new Client({ name: 'support', version: '1.0.0' });
  const [c, s] = InMemoryTransport.createLinkedPair();
  await server.connect(s);
  await client.connect(c as never);
  const { tools } = await client.listTools();
  // What `connectToServer` and discovery leave (their storage is the Durable Object's SQLite, workerd only).
  (mcp.mcpConnections as Record<string, unknown>)[serverId] = {
    client,
    tools,
    prompts: [],
    resources: [],
    resourceTemplates: [],
    connectionState: 'ready',
  };
  return { mcp, close: () => client.close() };
}

/** What the model reads for a call through `getAITools()`: the result's text, or the error it threw. */
export async function callAsModel(mcp: MCPClientManager, args: Record<string, unknown>) {
  const tools = mcp.getAITools();
  const execute = Object.values(tools)[0]?.execute;
  try {
    const r = (await execute?.(args)) as { content: { text?: string }[] };
    return { isError: false, text: r.content.map((p) => p.text ?? '').join('\n') };
  } catch (e) {
    return { isError: true, text: (e as Error).message };
  }
}

function paymentsServer(setup: CallSetup, ran: Record<string, unknown>[]) {
  const server = new McpServer({ name: 'payments', version: '1.0.0' });
  server.registerTool(TOOL, { inputSchema: zodShape(setup.schema) }, async (a: Record<string, unknown>) => {
    ran.push(a);
    return { content: [{ type: 'text' as const, text: asText((setup.result ?? defaultResult)(a)) }] };
  });
  return server;
}

export const cloudflareMcpTarget: Target = {
  name: 'cloudflare-agents mcp',
  async action(pep, args, setup: CallSetup = {}) {
    const ran: Record<string, unknown>[] = [];
    const { mcp, close } = await managerWith(paymentsServer(setup, ran));
    guardAgentMcp(pep, { ...agentNamed(), mcp });
    try {
      return { ran, seen: (await callAsModel(mcp, args)).text };
    } finally {
      await close();
    }
  },
  async text(pep, text) {
    // The text stage of an MCP client is a tool's result (context_egress).
    const { mcp, close } = await managerWith(paymentsServer({ result: () => text }, []));
    guardAgentMcp(pep, { ...agentNamed(), mcp });
    try {
      const r = await callAsModel(mcp, { orderId: 'o-text', amount: 1 });
      return { modelGot: r.isError ? undefined : r.text };
    } finally {
      await close();
    }
  },
  async ownRefusal(pep: Pep) {
    const { mcp, close } = await managerWith(paymentsServer({}, []));
    guardAgentMcp(pep, { ...agentNamed(), mcp });
    try {
      // Not a tools/call the adapter can read: refused before any decision.
      await mcp.callTool({ serverId: 'payments', name: 42 } as never);
    } finally {
      await close();
    }
  },
};
