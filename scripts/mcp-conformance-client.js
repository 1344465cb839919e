// The client the MCP conformance suite drives (`conformance client --command "node scripts/mcp-conformance-client.js
// bare|guarded|bare-v2|guarded-v2"`, the server URL appended): connects with the 1.x SDK's Client (`-v2`: the
// 2.x `@modelcontextprotocol/client` one, protocol 2026-07-28) over Streamable HTTP, lists the tools and calls
// each with arguments made from its input schema. `guarded` connects the client through the transport
// `guardMcpClient(pep, transport)` returns (its own dev PDP in this process, a policy that allows
// everything; every tools/call must reach the PDP, or the run fails); `bare` connects to the transport itself. The scenario's name is in
// MCP_CONFORMANCE_SCENARIO. Needs `npm run build` first.
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createPep } from 'agent-pep';
import { startDevPdp } from 'agent-pep/dev-pdp';
import { guardMcpClient } from 'agent-pep/mcp';

const [given, url] = process.argv.slice(2);
const v2 = given?.endsWith('-v2') ?? false;
const mode = v2 ? given.slice(0, -3) : given;
if ((mode !== 'bare' && mode !== 'guarded') || !url) {
  console.error('usage: node scripts/mcp-conformance-client.js bare|guarded|bare-v2|guarded-v2 <server url>');
  process.exit(2);
}
const Client = v2 ? ClientV2 : ClientV1;
const Transport = v2 ? TransportV2 : TransportV1;

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
// A 2.x client speaks 2026-07-28 (`server/discover` first, the SDK's `mode: 'auto'`), else it would `initialize`.
const client = v2
  ? new Client({ name: `agent-pep-conformance-${mode}`, version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } })
  : new Client({ name: `agent-pep-conformance-${mode}`, version: '1.0.0' });
let called = 0;
try {
  const transport = new Transport(new URL(url));
  await client.connect(pep ? guardMcpClient(pep, transport) : transport);
  // At 2026-07-28 a 2.x client may know no capabilities before its first request (no initialize): it lists.
  const caps = client.getServerCapabilities();
  if (v2 || caps?.tools) {
    const { tools } = await client.listTools();
    for (const tool of tools) {
      called += 1;
      await client.callTool({ name: tool.name, arguments: argsFor(tool.inputSchema) });
    }
  }
  await client.close();
  // The guard decided: each tools/call the client made asked the PDP (fewer would mean it was bypassed).
  const decided = pdp?.evidence().filter((r) => r.stage === 'action' && r.visibility === undefined).length;
  if (decided !== undefined && decided < called) throw new Error(`${called} tools/call, ${decided} decided`);
} catch (err) {
  console.error(`${process.env.MCP_CONFORMANCE_SCENARIO ?? ''}: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
} finally {
  await pep?.close();
  await pdp?.close();
}
