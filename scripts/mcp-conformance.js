// The official MCP conformance suite (@modelcontextprotocol/conformance): its server scenarios against a small
// server, and its client scenarios against scripts/mcp-conformance-client.js, each bare and
// guarded by agent-pep (a policy that allows everything), over Streamable HTTP: every check must come out
// the same (CONTRACT section 16; docs/mcp.md lists the results). The guarded 1.x servers declare
// `capabilities: { tools }` and are guarded with their tools' handles: one has tools registered before
// guarding as well as after (their handles added to the record), the other every tool registered before.
// The 1.x server scenarios run over stdio too: the same server as a child process that speaks only stdio
// (scripts/mcp-conformance-stdio-server.js), one per MCP session, behind scripts/mcp-stdio-bridge.js, the
// suite's adapter to stdio (it relays every message unchanged); a probe first checks that the bridge carries
// back what a server sends while it serves (logging, progress, elicitation, sampling).
//
// Usage: node scripts/mcp-conformance.js <conformance CLI (dist/index.js)> <node 22 binary> [spec version]
// Exit code 0 when bare and guarded agree on every check, 1 otherwise (the checks that differ are printed).
// Needs `npm run build` first (it imports agent-pep from dist/ as a user does).
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  isInitializeRequest,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { createPep } from 'agent-pep';
import { startDevPdp } from 'agent-pep/dev-pdp';
import { guardMcpServer } from 'agent-pep/mcp';
import { makeServer, makeServerV2 } from './mcp-conformance-server.js';
import { serveOverStdio, serveOverStdioModern } from './mcp-stdio-bridge.js';

const [cli, node22, specVersion = '2025-11-25'] = process.argv.slice(2);
if (!cli || !node22) {
  console.error('usage: node scripts/mcp-conformance.js <conformance dist/index.js> <node 22 binary> [spec version]');
  process.exit(2);
}

/**
 * A stateless 2.x server (revision 2026-07-28): `createMcpHandler`, one `McpServer` per request, served by
 * Node's http; guarded (`how: 'handler'`), the handler `guardMcpServer` returns is served; guarded directly
 * (`how: 'direct'`), each `McpServer` is guarded with the handles of its tools before it serves.
 */
async function serveV2(pep, how = 'handler') {
  const handler = createMcpHandler(() => makeServerV2(how === 'direct' ? pep : undefined));
  const served = pep && how === 'handler' ? guardMcpServer(pep, handler, { session: () => 'conformance' }) : handler;
  const http = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
    const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
    const request = new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers, body });
    const response = await served.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${http.address().port}/mcp`,
    close: async () => {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

/** A stateful Streamable HTTP endpoint (one server and transport per MCP session), on 127.0.0.1. */
async function serve(pep, how) {
  const transports = new Map();
  const http = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? transports.get(id) : undefined;
    if (!transport && req.method === 'POST' && isInitializeRequest(body)) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        onsessioninitialized: (sid) => transports.set(sid, transport),
      });
      await makeServer(pep, how).connect(transport);
    }
    if (!transport) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'No valid session' }, id: null }));
      return;
    }
    await transport.handleRequest(req, res, body);
  });
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${http.address().port}/mcp`,
    close: async () => {
      for (const t of transports.values()) await t.close();
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

/** The stdio server of the runs over stdio, in mode `how` (bare, after, before, probe), behind the bridge. */
const serveStdio = (how, ...pdpArgs) =>
  (how.endsWith('-v2') ? serveOverStdioModern : serveOverStdio)(
    process.execPath,
    [join(import.meta.dirname, 'mcp-conformance-stdio-server.js'), how, ...pdpArgs],
    { stderr: process.env.MCP_CONFORMANCE_VERBOSE ? 'inherit' : 'ignore' },
  );

/**
 * Is the bridge sound? A 1.x Client calls the probe server's `relay_probe` through it: the log message, the
 * progress notification, the elicitation and the sampling request the server sends before it answers must
 * all reach the client, and the answers to them the server. Resolves with what was missing (empty: sound).
 */
async function probeRelay(url) {
  const client = new Client(
    { name: 'relay-probe', version: '1.0.0' },
    { capabilities: { elicitation: {}, sampling: {} } },
  );
  const seen = new Set();
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    if (n.params.data === 'probe-log') seen.add('logging');
  });
  client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: { answer: 'elicited' } }));
  client.setRequestHandler(CreateMessageRequestSchema, () => ({
    role: 'assistant',
    content: { type: 'text', text: 'sampled' },
    model: 'probe',
  }));
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    const result = await client.callTool({ name: 'relay_probe', arguments: {} }, undefined, {
      onprogress: () => seen.add('progress'),
    });
    if (result.content?.[0]?.text === 'elicited sampled') seen.add('elicitation and sampling');
  } finally {
    await client.close();
  }
  return ['logging', 'progress', 'elicitation and sampling'].filter((k) => !seen.has(k));
}

/** The same for the 2026-07-28 front: a 2.x Client's progress notification must come back before the answer. */
async function probeRelayV2(url) {
  const client = new ClientV2({ name: 'relay-probe', version: '2.0.0' }, { versionNegotiation: { mode: 'auto' } });
  let progress = false;
  await client.connect(new TransportV2(new URL(url)));
  try {
    const result = await client.callTool(
      { name: 'relay_probe', arguments: {} },
      {
        onprogress: () => {
          progress = true;
        },
      },
    );
    return progress && result.content?.[0]?.text === 'probed' ? [] : ['progress (2026-07-28)'];
  } finally {
    await client.close();
  }
}

/** Runs the conformance CLI with `args` and an output directory; resolves with the checks it wrote. */
async function runCli(args) {
  const out = await mkdtemp(join(tmpdir(), 'mcp-conformance-'));
  try {
    await new Promise((resolve, reject) => {
      const stdio = ['ignore', 'ignore', process.env.MCP_CONFORMANCE_VERBOSE ? 'inherit' : 'ignore'];
      const child = spawn(node22, [cli, ...args, '--output-dir', out], { stdio });
      child.on('error', reject);
      child.on('exit', () => resolve());
    });
    return await collect(out);
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

/** The suite's server scenarios against `url`: `{ "<scenario>/<check>": status }`. */
const runServerSuite = (url, version = specVersion) =>
  runCli(['server', '--url', url, '--spec-version', version, '--timeout', '10000']);

/** The client scenarios (those without OAuth) the suite has for `specVersion`, for a 1.x client. */
const CLIENT_SCENARIOS = ['initialize', 'tools_call', 'sse-retry', 'elicitation-sep1034-client-defaults'];
/** The client scenarios (without OAuth) of revision 2026-07-28, for a 2.x client. */
const CLIENT_SCENARIOS_V2 = [
  'tools_call',
  'request-metadata',
  'sep-2322-client-request-state',
  'http-standard-headers',
  'http-custom-headers',
  'http-invalid-tool-headers',
  'json-schema-ref-no-deref',
  'json-schema-2020-12-preservation',
];

/**
 * The suite's client scenarios against scripts/mcp-conformance-client.js in `mode` (bare, guarded, bare-v2,
 * guarded-v2), one after another: some time the client (sse-retry), and a loaded machine skews them.
 */
async function runClientSuite(mode, scenarios = CLIENT_SCENARIOS, version = specVersion) {
  const results = {};
  const command = `node ${join(import.meta.dirname, 'mcp-conformance-client.js')} ${mode}`;
  for (const scenario of scenarios) {
    const args = ['client', '--command', command, '--scenario', scenario, '--spec-version', version];
    Object.assign(results, await runCli([...args, '--timeout', '20000']));
  }
  return results;
}

/** Every check in the suite's output directory (its `checks.json` files), by scenario and check id. */
async function collect(dir) {
  const results = {};
  for (const entry of await readdir(dir, { recursive: true })) {
    if (!entry.endsWith('checks.json')) continue;
    const checks = JSON.parse(await readFile(join(dir, entry), 'utf8'));
    // `server-<scenario>-<ISO time>/checks.json` (server scenarios), `<scenario>-<ISO time>/...` (client)
    const scenario = (entry.split(/[\\/]/)[0] ?? '').replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, '');
    for (const c of checks) results[`${scenario}/${c.id}`] = c.status;
  }
  return results;
}

const pdp = await startDevPdp({ policy: { agents: ['conformance'], latches: [] }, log: false });
const pep = createPep({
  pdpUrl: pdp.url,
  agentId: 'conformance',
  session: 'conformance',
  permits: { keys: pdp.jwksUrl, issuer: pdp.issuer },
});
const bare = await serve(undefined);
const guarded = await serve(pep);
const before = await serve(pep, 'before');
const bareV2 = await serveV2(undefined);
const guardedV2 = await serveV2(pep);
const directV2 = await serveV2(pep, 'direct');
// Over stdio: the same server in a child process per MCP session, behind the bridge (the suite's adapter).
const pdpArgs = [pdp.url, pdp.jwksUrl, pdp.issuer];
const bareStdio = await serveStdio('bare');
const guardedStdio = await serveStdio('after', ...pdpArgs);
const beforeStdio = await serveStdio('before', ...pdpArgs);
const probeStdio = await serveStdio('probe');
const bareStdioV2 = await serveStdio('bare-v2');
const directStdioV2 = await serveStdio('direct-v2', ...pdpArgs);
const probeStdioV2 = await serveStdio('probe-v2');
/** Prints one comparison; true when bare and guarded agree on every check (and some ran). */
function compare(title, a, b, version = specVersion) {
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  const differ = keys.filter((k) => a[k] !== b[k]);
  const count = (r, st) => Object.values(r).filter((v) => v === st).length;
  console.log(`MCP conformance ${version}, ${title}: ${keys.length} checks`);
  for (const [name, r] of [
    ['bare', a],
    ['guarded', b],
  ]) {
    const counts = ['SUCCESS', 'FAILURE', 'WARNING', 'SKIPPED'].map((st) => `${count(r, st)} ${st.toLowerCase()}`);
    console.log(`  ${name}: ${counts.join(', ')}`);
  }
  if (process.env.MCP_CONFORMANCE_LIST) for (const k of keys) console.log(`  ${k}: ${a[k]} / ${b[k]}`);
  for (const k of differ) console.log(`  DIFFERS ${k}: bare ${a[k]}, guarded ${b[k]}`);
  return differ.length === 0 && keys.length > 0;
}

try {
  const [bareRun, guardedRun, beforeRun] = await Promise.all([
    runServerSuite(bare.url),
    runServerSuite(guarded.url),
    runServerSuite(before.url),
  ]);
  const serverSame = compare(
    'server scenarios, 1.x McpServer, tools registered before and after guarding',
    bareRun,
    guardedRun,
  );
  const beforeSame = compare(
    'server scenarios, 1.x McpServer, every tool registered before guarding',
    bareRun,
    beforeRun,
  );
  // The guard decided: each tools/call to a guarded server asked the PDP (none would mean it was bypassed).
  const calls = (session) =>
    pdp.evidence().filter((r) => r.stage === 'action' && r.visibility === undefined && r.session === session).length;
  const decided = calls('conformance-after');
  const decidedBefore = calls('conformance-before');
  console.log(`  tools/call decisions at the PDP: tools before and after ${decided}, tools before ${decidedBefore}`);
  // Over stdio: first the bridge must carry back what a server sends while it serves (the control of the runs).
  const missing = [...(await probeRelay(probeStdio.url)), ...(await probeRelayV2(probeStdioV2.url))];
  console.log(
    `MCP stdio bridge: ${missing.length === 0 ? 'relays' : 'LOST'} logging, progress, elicitation, sampling (2025-11-25), progress (2026-07-28)`,
  );
  for (const m of missing) console.log(`  NOT RELAYED: ${m}`);
  const [bareStdioRun, guardedStdioRun, beforeStdioRun] = await Promise.all([
    runServerSuite(bareStdio.url),
    runServerSuite(guardedStdio.url),
    runServerSuite(beforeStdio.url),
  ]);
  const stdioSame = compare(
    'server scenarios over stdio, 1.x McpServer, tools registered before and after guarding',
    bareStdioRun,
    guardedStdioRun,
  );
  const stdioBeforeSame = compare(
    'server scenarios over stdio, 1.x McpServer, every tool registered before guarding',
    bareStdioRun,
    beforeStdioRun,
  );
  const decidedStdio = calls('conformance-stdio-after');
  const decidedStdioBefore = calls('conformance-stdio-before');
  console.log(
    `  tools/call decisions at the PDP: tools before and after ${decidedStdio}, tools before ${decidedStdioBefore}`,
  );
  const stdioOk = missing.length === 0 && stdioSame && decidedStdio > 0 && stdioBeforeSame && decidedStdioBefore > 0;
  const actions = () => pdp.evidence().filter((r) => r.stage === 'action' && r.visibility === undefined).length;
  const beforeV2 = actions();
  const [bareV2Run, guardedV2Run] = await Promise.all([
    runServerSuite(bareV2.url, '2026-07-28'),
    runServerSuite(guardedV2.url, '2026-07-28'),
  ]);
  const v2Same = compare('server scenarios, 2.x createMcpHandler (stateless)', bareV2Run, guardedV2Run, '2026-07-28');
  const decidedV2 = actions() - beforeV2;
  console.log(`  tools/call decisions at the PDP (guarded handler): ${decidedV2}`);
  const beforeDirect = actions();
  const directRun = await runServerSuite(directV2.url, '2026-07-28');
  const directSame = compare('server scenarios, 2.x McpServer guarded directly', bareV2Run, directRun, '2026-07-28');
  const decidedDirect = actions() - beforeDirect;
  console.log(`  tools/call decisions at the PDP (McpServer guarded directly): ${decidedDirect}`);
  // 2026-07-28 over stdio: each request to a server process of its own (2.x `serveStdio`), bare and guarded.
  const [bareStdioV2Run, directStdioV2Run] = await Promise.all([
    runServerSuite(bareStdioV2.url, '2026-07-28'),
    runServerSuite(directStdioV2.url, '2026-07-28'),
  ]);
  const stdioV2Same = compare(
    'server scenarios over stdio, 2.x McpServer guarded directly',
    bareStdioV2Run,
    directStdioV2Run,
    '2026-07-28',
  );
  const decidedStdioV2 = calls('conformance-stdio-direct-v2');
  console.log(`  tools/call decisions at the PDP: ${decidedStdioV2}`);
  // The 1.x client scenarios alone (sse-retry times the client); the 2.x ones bare and guarded side by side.
  const bareClient = await runClientSuite('bare');
  const guardedClient = await runClientSuite('guarded');
  const [bareClientV2, guardedClientV2] = await Promise.all([
    runClientSuite('bare-v2', CLIENT_SCENARIOS_V2, '2026-07-28'),
    runClientSuite('guarded-v2', CLIENT_SCENARIOS_V2, '2026-07-28'),
  ]);
  const clientSame = compare('client scenarios over Streamable HTTP', bareClient, guardedClient);
  const clientV2Same = compare('client scenarios, 2.x Client', bareClientV2, guardedClientV2, '2026-07-28');
  const v2Ok =
    v2Same && decidedV2 > 0 && directSame && decidedDirect > 0 && stdioV2Same && decidedStdioV2 > 0 && clientV2Same;
  const v1Ok = serverSame && decided > 0 && beforeSame && decidedBefore > 0;
  process.exitCode = v1Ok && stdioOk && v2Ok && clientSame ? 0 : 1;
} finally {
  await bare.close();
  await guarded.close();
  await before.close();
  await bareV2.close();
  await guardedV2.close();
  await directV2.close();
  await Promise.all(
    [bareStdio, guardedStdio, beforeStdio, probeStdio, bareStdioV2, directStdioV2, probeStdioV2].map((s) => s.close()),
  );
  await pep.close();
  await pdp.close();
}
