/**
 * MCP with permits checked end to end: an MCP server and an agent's MCP client in one process, over
 * the SDK's in-memory transport, against a local reference PDP this example starts itself (offline):
 *
 *   npm run example:mcp
 *
 * The client's PEP asks the PDP before each `tools/call` leaves and sends the permit in
 * `params._meta['agent-pep/permit']`; the server runs a tool only after that permit verified for
 * the exact call (and claims it, so it works once). A call that skipped the client's PEP is refused.
 * @module
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer, type RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createPep, createPermitVerifier } from 'agent-pep';
import { startDevPdp } from 'agent-pep/dev-pdp';
import { guardMcpClient, guardMcpServer } from 'agent-pep/mcp';
import { z } from 'zod';

const policy = {
  agents: ['support-ai'],
  latches: [
    {
      id: 'refund-review',
      stage: 'action',
      tool: 'refund_payment',
      when: { 'args.amount': { gt: 500 } },
      verdict: 'ESCALATE',
      reason: 'refunds over 500 need review',
    },
    { id: 'no-deletes', stage: 'action', tool: 'delete_*', verdict: 'BLOCK', reason: 'the agent never deletes' },
  ],
};
const pdp = await startDevPdp({ policy, audience: 'payments-mcp', log: false });
const pep = createPep({
  pdpUrl: pdp.url,
  agentId: 'support-ai',
  session: 'sess_mcp',
  permits: { keys: pdp.jwksUrl, issuer: pdp.issuer },
});
let refunds = 0;

// #region mcp-adapter
// The server runs a tool only with a permit for this exact call, verified and used up once. Register the
// tools, then guard with their handles: the guard serves tools/call and tools/list from them.
const server = new McpServer({ name: 'payments', version: '1.0.0' });
const served = {
  refund_payment: server.registerTool(
    'refund_payment',
    { inputSchema: { orderId: z.string(), amount: z.number() } },
    async (args) => {
      refunds++;
      return { content: [{ type: 'text', text: `refunded ${args.amount}` }] };
    },
  ),
} as Record<string, RegisteredTool>;
guardMcpServer(pep, server, {
  tools: served,
  verifier: createPermitVerifier({ keys: pdp.jwksUrl, issuer: pdp.issuer, audience: 'payments-mcp' }),
});

// The agent's client connects through a guarded transport: the PDP decides each tools/call before it
// leaves, and the permit travels in params._meta. Neither the Client nor the transport is changed.
const client = new Client({ name: 'support-agent', version: '1.0.0' });
const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
const guardedSide = guardMcpClient(pep, clientSide);
// #endregion mcp-adapter
// A tool registered after guarding is served once its handle is in the record. This one the policy blocks
// outright: never offered to the model (see the end).
served.delete_account = server.registerTool(
  'delete_account',
  { inputSchema: { customerId: z.string() } },
  async () => ({
    content: [{ type: 'text', text: 'deleted' }],
  }),
);

/** The text the model would see for one tool result. */
const textOf = (result: unknown): string => {
  const first = (result as { content: { text?: string }[] }).content[0];
  return first?.text ?? '';
};

await server.connect(serverSide);
await client.connect(guardedSide);
for (const amount of [129, 900]) {
  const result = await client.callTool({ name: 'refund_payment', arguments: { orderId: 'ord_1842', amount } });
  console.log(`guarded client, refund of ${amount}: ${textOf(result)}`);
}
await client.close();

// A client without a PEP: the server refuses its call, whatever it claims, and never asks the PDP.
const bare = new Client({ name: 'bare', version: '1.0.0' });
const [bareSide, serverSide2] = InMemoryTransport.createLinkedPair();
await server.connect(serverSide2);
await bare.connect(bareSide);
const bareResult = await bare.callTool({ name: 'refund_payment', arguments: { orderId: 'ord_1842', amount: 5 } });
console.log(`client without a PEP, refund of 5: ${textOf(bareResult)}`);
await bare.close();

const actions = pdp.evidence().filter((r) => r.stage === 'action' && r.visibility === undefined).length;
console.log(`refunds run: ${refunds}; action decisions at the PDP: ${actions}`);

// #region mcp-visibility
// What the model sees: only the tools the policy shows this session, each pinned at the first list.
const agent = new Client({ name: 'support-agent', version: '1.0.0' });
const [agentSide, serverSide3] = InMemoryTransport.createLinkedPair();
const pinned = guardMcpClient(pep, agentSide, { pin: true });
await server.connect(serverSide3);
await agent.connect(pinned);
const { tools } = await agent.listTools(); // delete_account is not offered: the policy blocks it outright
console.log(`tools offered: ${tools.map((t) => t.name).join(', ')}`);
console.log(`pinned: ${Object.keys(pinned.pepPins()?.tools ?? {}).join(', ')}`);
// #endregion mcp-visibility
await agent.close();
await pep.close();
await pdp.close();
