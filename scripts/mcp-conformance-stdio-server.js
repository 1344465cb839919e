// The small conformance server (scripts/mcp-conformance-server.js) as an MCP server that speaks ONLY stdio:
// `node scripts/mcp-conformance-stdio-server.js <mode> [<pdp url> <jwks url> <issuer>]`, a 1.x `McpServer`
// declared with `capabilities: { tools }` on the SDK's `StdioServerTransport`, bare or guarded (`after`: tools
// registered before and after guarding; `before`: every tool before) by a Pep of the given dev PDP (policy
// session `conformance-stdio-<mode>`); `bare-v2` / `direct-v2`: a 2.x `McpServer` (2026-07-28) served by
// `serveStdio` of `@modelcontextprotocol/server/stdio`, bare or guarded directly with its tools' handles.
// scripts/mcp-stdio-bridge.js spawns it, one process per MCP session (2.x: per HTTP request) of the suite. `probe`: a bare server whose one tool, `relay_probe`, sends the
// caller a log message and a progress notification and asks it for an elicitation and a sampling before it
// answers (what the bridge must carry back; scripts/mcp-conformance.js checks it); `probe-v2`: its 2.x
// counterpart, whose tool sends a progress notification before it answers. Needs `npm run build` first.

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CreateMessageResultSchema, ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { McpServer as McpServerV2 } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { createPep } from 'agent-pep';
import { makeServer, makeServerV2 } from './mcp-conformance-server.js';

const [how, pdpUrl, jwksUrl, issuer] = process.argv.slice(2);
const BARE = ['bare', 'probe', 'bare-v2', 'probe-v2'];
if (![...BARE, 'after', 'before', 'direct-v2'].includes(how) || (!BARE.includes(how) && !issuer)) {
  console.error('usage: node scripts/mcp-conformance-stdio-server.js <mode> [pdp url, jwks url, issuer]');
  process.exit(2);
}
/** The probe: every kind of message a server sends its client while it serves a request. */
function makeProbe() {
  const server = new McpServer({ name: 'relay-probe', version: '1.0.0' }, { capabilities: { logging: {} } });
  server.registerTool('relay_probe', { description: 'sends what the bridge must relay back' }, async (extra) => {
    await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: 'probe-log' } });
    const token = extra._meta?.progressToken;
    if (token !== undefined) {
      await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: 1 } });
    }
    const schema = { type: 'object', properties: { answer: { type: 'string' } } };
    const elicited = await extra.sendRequest(
      { method: 'elicitation/create', params: { message: 'probe?', requestedSchema: schema } },
      ElicitResultSchema,
    );
    const sampled = await extra.sendRequest(
      { method: 'sampling/createMessage', params: { messages: [], maxTokens: 1 } },
      CreateMessageResultSchema,
    );
    return { content: [{ type: 'text', text: `${elicited.content?.answer} ${sampled.content.text}` }] };
  });
  return server;
}

/** The 2.x probe: at 2026-07-28 a server asks for input by its answer, so what it sends mid-call is notifications. */
function makeProbeV2() {
  const server = new McpServerV2({ name: 'relay-probe', version: '2.0.0' }, { capabilities: { tools: {} } });
  server.registerTool('relay_probe', { description: 'sends what the bridge must relay back' }, async (ctx) => {
    const token = ctx.mcpReq._meta?.progressToken;
    if (token !== undefined) {
      await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: 1 } });
    }
    return { content: [{ type: 'text', text: 'probed' }] };
  });
  return server;
}

const pep = BARE.includes(how)
  ? undefined
  : createPep({ pdpUrl, agentId: 'conformance', session: 'conformance', permits: { keys: jwksUrl, issuer } });
if (how.endsWith('-v2')) {
  // The 2.x stdio entry: the opening message selects the era, one server from the factory serves it.
  const handle = serveStdio(() => (how === 'probe-v2' ? makeProbeV2() : makeServerV2(pep, `conformance-stdio-${how}`)));
  process.stdin.on('end', async () => {
    await handle.close();
    await pep?.close();
    process.exit(0);
  });
} else {
  await serve1x();
}

async function serve1x() {
  const server =
    how === 'probe' ? makeProbe() : makeServer(pep, how === 'bare' ? 'after' : how, `conformance-stdio-${how}`);
  const transport = new StdioServerTransport();
  // The bridge closes stdin when the suite's session ends: the process ends with it.
  transport.onclose = async () => {
    await pep?.close();
    process.exit(0);
  };
  await server.connect(transport);
  process.stdin.on('end', () => transport.close());
}
