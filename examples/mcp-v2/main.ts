/**
 * MCP on the v2 SDK (protocol 2026-07-28, stateless) with permits checked end to end, offline: a stateless
 * Streamable HTTP server (`createMcpHandler`, served by Node's `http` on 127.0.0.1) and an agent's v2
 * `Client` connected through the transport `guardMcpClient` guards, against a local reference PDP this example starts itself:
 *
 *   npm run build:examples && node build/examples/mcp-v2/main.js
 *
 * The client decides each `tools/call` in the agent's own session and sends the permit and the session in
 * `params._meta`; the server runs the refund only with a permit for that exact call. A client without a
 * PEP is refused by the server.
 * @module
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createPep, createPermitVerifier } from 'agent-pep';
import { startDevPdp } from 'agent-pep/dev-pdp';
import { guardMcpClient } from 'agent-pep/mcp';
import { paymentsHandler, serveNode } from './server.js';

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
  ],
};
const pdp = await startDevPdp({ policy, audience: 'payments-mcp', log: false });
const refunds = { count: 0 };
const verifier = createPermitVerifier({ keys: pdp.jwksUrl, issuer: pdp.issuer, audience: 'payments-mcp' });
const http = await serveNode(paymentsHandler(verifier, refunds));

/** The text the model would see for one tool result. */
const textOf = (result: unknown): string => (result as { content: { text?: string }[] }).content[0]?.text ?? '';

// #region mcp-v2-client
const pep = createPep({
  pdpUrl: pdp.url,
  agentId: 'support-ai',
  session: 'sess_mcp_v2', // the session every call is decided in; a server can never change it
  permits: { keys: pdp.jwksUrl, issuer: pdp.issuer },
});
const client = new Client({ name: 'support-agent', version: '1.0.0' });
// The same guard as for a 1.x client: on the transport, which it returns guarded (nothing is patched).
await client.connect(guardMcpClient(pep, new StreamableHTTPClientTransport(http.url)));
for (const amount of [129, 900]) {
  const result = await client.callTool({ name: 'refund_payment', arguments: { orderId: 'ord_1842', amount } });
  console.log(`guarded v2 client, refund of ${amount}: ${textOf(result)}`);
}
// #endregion mcp-v2-client
await client.close();

const bare = new Client({ name: 'bare', version: '1.0.0' });
await bare.connect(new StreamableHTTPClientTransport(http.url));
const bareResult = await bare.callTool({ name: 'refund_payment', arguments: { orderId: 'ord_1842', amount: 5 } });
console.log(`client without a PEP, refund of 5: ${textOf(bareResult)}`);
await bare.close();

console.log(`refunds run: ${refunds.count}`);
await pep.close();
await http.close();
await pdp.close();
