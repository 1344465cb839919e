// The client the MCP conformance suite drives (`conformance client --command "node scripts/mcp-conformance-client.js
// bare|guarded"`, the server URL appended): connects with the 1.x SDK's Client over Streamable HTTP, lists the
// tools and calls each with arguments made from its input schema. `guarded` guards the client with agent-pep
// (its own dev PDP in this process, a policy that allows everything); `bare` does not. The scenario's name is
// in MCP_CONFORMANCE_SCENARIO. Needs `npm run build` first.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createPep } from 'agent-pep';
import { startDevPdp } from 'agent-pep/dev-pdp';
import { guardMcpClient } from 'agent-pep/mcp';

const [mode, url] = process.argv.slice(2);
if ((mode !== 'bare' && mode !== 'guarded') || !url) {
  console.error('usage: node scripts/mcp-conformance-client.js bare|guarded <server url>');
  process.exit(2);
}

/** Arguments that fit a listed input schema: a value of each declared property's JSON type. */
function argsFor(schema) {
  const sample = { number: 1, integer: 1, string: 'x', boolean: true, array: [], object: {} };
  const out = {};
  for (const [name, prop] of Object.entries(schema?.properties ?? {})) {
    const type = Array.isArray(prop?.type) ? prop.type[0] : prop?.type;
    out[name] = prop?.default ?? sample[type] ?? 'x';
  }
  return out;
}

const pdp =
  mode === 'guarded' ? await startDevPdp({ policy: { agents: ['conformance'], latches: [] }, log: false }) : undefined;
const pep = pdp
  ? createPep({
      pdpUrl: pdp.url,
      agentId: 'conformance',
      session: 'conformance',
      permits: { keys: pdp.jwksUrl, issuer: pdp.issuer },
    })
  : undefined;
const client = new Client({ name: `agent-pep-conformance-${mode}`, version: '1.0.0' });
if (pep) guardMcpClient(pep, client);
try {
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const caps = client.getServerCapabilities();
  if (caps?.tools) {
    const { tools } = await client.listTools();
    for (const tool of tools) await client.callTool({ name: tool.name, arguments: argsFor(tool.inputSchema) });
  }
  await client.close();
} catch (err) {
  console.error(`${process.env.MCP_CONFORMANCE_SCENARIO ?? ''}: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
} finally {
  await pep?.close();
  await pdp?.close();
}
