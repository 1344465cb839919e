/**
 * The Cloudflare Agents SDK adapter (`agent-pep/cloudflare-agents`), offline, with the parts of the SDK
 * that run in Node: an agent's MCP client manager (`agent.mcp`, `MCPClientManager` of
 * `agents/mcp/client`) guarded by `guardAgentMcp`, calling a payments MCP server (what an `McpAgent`
 * serves) guarded by `agent-pep/mcp` with a permit verifier; the AI SDK's mock model calls the tools of
 * `agent.mcp.getAITools()`, as an `AIChatAgent`'s `onChatMessage` does. The `Agent` class itself runs
 * only in workerd: here `{ name, mcp }` stands in for `this`.
 *
 *   npm run example:cloudflare-agents
 *
 * Shows an ALLOW (the server runs the refund once, on the permit alone, in the agent's session), a BLOCK
 * and a held ESCALATE the model reads, a result withheld at context_egress, and the PDP going down with
 * nothing sent. Exits with status 1 on any other outcome.
 * @module
 */
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createPep, createPermitVerifier, type Pep } from 'agent-pep';
import { guardAgentMcp } from 'agent-pep/cloudflare-agents';
import { startDevPdp } from 'agent-pep/dev-pdp';
import { guardMcpServer } from 'agent-pep/mcp';
import { MCPClientManager } from 'agents/mcp/client';
import { generateText, stepCountIs, type ToolSet } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import policy from './policy.json' with { type: 'json' };

const pdp = await startDevPdp({ policy, port: 0, log: false });
const runs: number[] = [];
let failed = false;
function check(ok: boolean, what: string): void {
  if (!ok) {
    failed = true;
    console.log(`UNEXPECTED ${what}`);
  }
}
function client(pdpUrl: string): Pep {
  const permits = { keys: pdp.jwksUrl, issuer: pdp.issuer };
  return createPep({ pdpUrl, agentId: 'support-cf', session: 'unused', timeoutMs: 1000, retries: 0, permits });
}

// The payments server, as an McpAgent's `init()` guards it: each call runs only on a permit that verifies.
// The tools are registered first; the guard serves them from the handles registerTool returned.
const server = new McpServer({ name: 'payments', version: '1.0.0' });
const refund = server.registerTool(
  'refund_payment',
  { inputSchema: { orderId: z.string(), amount: z.number() } },
  async (a) => {
    runs.push(a.amount);
    const text = a.orderId === 'ord_debug' ? 'refunded; debug key AKIAABCDEFGHIJKLMNOP' : `refunded ${a.amount}`;
    return { content: [{ type: 'text' as const, text }] };
  },
);
const verifier = createPermitVerifier({ keys: pdp.jwksUrl, issuer: pdp.issuer, audience: 'agent-pep' });
const serverPep = client(pdp.url);
guardMcpServer(serverPep, server, { tools: { refund_payment: refund }, verifier });

/** An agent's MCP client manager connected to the payments server (in memory; workerd uses HTTP and SQLite). */
async function agentWithMcp(name: string) {
  const mcp = new MCPClientManager(name, '1.0.0');
  const mcpClient = new Client({ name, version: '1.0.0' });
  const [c, s] = InMemoryTransport.createLinkedPair();
  await server.connect(s);
  await mcpClient.connect(c as never);
  const { tools } = await mcpClient.listTools();
  const connection = {
    client: mcpClient,
    tools,
    prompts: [],
    resources: [],
    resourceTemplates: [],
    connectionState: 'ready',
  };
  (mcp.mcpConnections as Record<string, unknown>).payments = connection;
  return { name, mcp, close: () => Promise.all([mcpClient.close(), server.close()]) };
}

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};
/** A mock model that calls the refund tool once, then says what it read. */
function scripted(input: object): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      const results = prompt.flatMap((m) => (m.role === 'tool' ? m.content : []));
      const last = results.at(-1) as { output?: { value?: unknown } } | undefined;
      if (last === undefined) {
        const call = {
          type: 'tool-call' as const,
          toolCallId: 'c1',
          toolName: 'tool_payments_refund_payment',
          input: JSON.stringify(input),
        };
        return {
          content: [call],
          finishReason: { unified: 'tool-calls' as const, raw: undefined },
          usage,
          warnings: [],
        };
      }
      // A JSON output is the MCP result (`{ content: [{ type: 'text', text }] }`); an error is its text.
      const value = last.output?.value as { content?: { text?: string }[] } | string | undefined;
      const text = `I read: ${typeof value === 'string' ? value : value?.content?.map((p) => p.text).join('\n')}`;
      return {
        content: [{ type: 'text' as const, text }],
        finishReason: { unified: 'stop' as const, raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
}

async function turn(pep: Pep, input: object): Promise<string> {
  const agent = await agentWithMcp('support-7');
  // #region cloudflare-agents-adapter
  // In an Agent: `guardAgentMcp(pep, this)` in onStart; every callTool of this.mcp is decided first.
  guardAgentMcp(pep, agent);
  const { text } = await generateText({
    model: scripted(input),
    tools: agent.mcp.getAITools() as ToolSet,
    prompt: 'refund',
    stopWhen: stepCountIs(3),
  });
  // #endregion cloudflare-agents-adapter
  await agent.close();
  return text;
}

const pep = client(pdp.url);

// 1. ALLOW: sent with its permit; the server verifies it (single use) and runs the refund once.
{
  const text = await turn(pep, { orderId: 'ord_1842', amount: 129 });
  const inSession = pdp.evidence().some((e) => e.stage === 'action' && e.session === 'support-7');
  check(runs.length === 1 && inSession, 'the refund did not run once in the session of the agent');
  console.log(
    `ALLOW    the server ran refund_payment ${runs.length} time(s) on its permit, session support-7; ${text}`,
  );
}
// 2. BLOCK and 3. ESCALATE (the MCP client has no approval step: a hold the model is told about): never sent.
for (const [label, input] of [
  ['BLOCK   ', { orderId: 'ord_locked', amount: 5 }],
  ['ESCALATE', { orderId: 'ord_1900', amount: 900 }],
] as const) {
  const text = await turn(pep, input);
  check(runs.length === 1, `${label.trim()} reached the server`);
  console.log(`${label} ${text}`);
}
// 4. context_egress: the refund ran, but its result holds a credential; the model reads the denial.
{
  const text = await turn(pep, { orderId: 'ord_debug', amount: 3 });
  check(runs.length === 2 && !text.includes('AKIA'), 'the credential reached the model');
  console.log(`EGRESS   the server ran it; ${text}`);
}
// 5. The PDP is down: nothing is sent.
{
  const down = client('http://127.0.0.1:9');
  const text = await turn(down, { orderId: 'ord_2000', amount: 5 });
  check(runs.length === 2, 'a call was sent while the PDP was down');
  console.log(`PDP DOWN ${text}`);
  console.log(`PDP DOWN calls sent while the PDP was down: ${runs.length - 2}`);
  await down.close();
}

await Promise.all([pep.close(), serverPep.close()]);
await pdp.close();
if (failed) process.exitCode = 1;
