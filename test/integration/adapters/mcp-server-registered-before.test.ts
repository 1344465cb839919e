/**
 * guardMcpServer on a 1.x server whose tools were registered (and which may be connected) before it was
 * called (docs/mcp.md): the guard serves tools/call and tools/list from the handles given, so each call to
 * them is decided once, before the tool runs, whenever the transport delivered it, and tools/list is
 * filtered. No transport member is touched (CONTRACT section 16). The real MCP SDK over InMemoryTransport,
 * against the dev PDP.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer, type RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { guardMcpServer } from '../../../src/adapters/mcp.js';
import { createPermitVerifier, type Pep, type PepOptions } from '../../../src/index.js';
import { useDevPdp } from '../../support/dev-pdp-suite.js';

const policy = {
  agents: ['support-ai'],
  latches: [{ id: 'no-transfers', stage: 'action', tool: 'bank_*', verdict: 'BLOCK', reason: 'no money transfers' }],
};

const dev = useDevPdp({ policy }, { session: 'sess_transport', timeoutMs: 1000, retries: 0 });
/** The session a guarded server decides a raw client's calls in (CONTRACT section 16: the request names it, or the server's `session` function does). */
const inSession = { session: () => 'sess_transport' };
function makePep(extra: Partial<PepOptions> = {}): Pep {
  return dev.clients.client(extra);
}

const decisions = (): number => dev.pdp.evidence().filter((r) => r.stage === 'action').length;
const text = (r: unknown): string | undefined => (r as { content: { text?: string }[] }).content[0]?.text;
const DENIED = "ERROR: Tool 'bank_transfer' denied by policy: no money transfers";

const handles = new WeakMap<McpServer, Record<string, RegisteredTool>>();
/** The handles of the tools `preRegistered` registered on `server` (the record the guard serves). */
const toolsOf = (server: McpServer): Record<string, RegisteredTool> => handles.get(server) ?? {};

/** A server with two tools registered before any guard; `ran` counts the bodies run. */
function preRegistered(ran: string[]): McpServer {
  const server = new McpServer({ name: 's', version: '1' });
  const tools: Record<string, RegisteredTool> = {};
  handles.set(server, tools);
  for (const name of ['bank_transfer', 'lookup_order']) {
    tools[name] = server.registerTool(name, { inputSchema: { id: z.string() } }, async ({ id }) => {
      ran.push(`${name}:${id}`);
      return { content: [{ type: 'text', text: `${name} ${id}` }] };
    });
  }
  return server;
}

async function clientOf(server: McpServer): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'agent', version: '1' });
  await client.connect(clientSide);
  return client;
}

describe('guardMcpServer: tools registered before it, on a server connected before or after', () => {
  it('a server already connected is guarded: decided once per call, tools/list filtered', async () => {
    const ran: string[] = [];
    const server = preRegistered(ran);
    const client = await clientOf(server);
    guardMcpServer(makePep(), server, { ...inSession, tools: toolsOf(server) });
    const before = decisions();
    expect(text(await client.callTool({ name: 'bank_transfer', arguments: { id: 'x' } }))).toBe(DENIED);
    expect(text(await client.callTool({ name: 'lookup_order', arguments: { id: 'o1' } }))).toBe('lookup_order o1');
    expect(ran).toEqual(['lookup_order:o1']);
    expect(decisions()).toBe(before + 2);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['lookup_order']);
  });

  it('a tool registered after guarding on such a server is decided once, its handle added to the record', async () => {
    const ran: string[] = [];
    const server = preRegistered(ran);
    const tools = toolsOf(server);
    guardMcpServer(makePep(), server, { ...inSession, tools });
    tools.bank_wire = server.registerTool('bank_wire', {}, async () => {
      ran.push('bank_wire');
      return { content: [] };
    });
    tools.lookup_customer = server.registerTool('lookup_customer', {}, async () => {
      ran.push('lookup_customer');
      return { content: [{ type: 'text', text: 'customer' }] };
    });
    const client = await clientOf(server);
    const before = decisions();
    expect((await client.callTool({ name: 'bank_wire', arguments: {} })).isError).toBe(true);
    expect(text(await client.callTool({ name: 'lookup_customer', arguments: {} }))).toBe('customer');
    expect(ran).toEqual(['lookup_customer']);
    expect(decisions()).toBe(before + 2);
  });

  it('a call the transport had queued before the server started is decided too', async () => {
    const ran: string[] = [];
    const server = preRegistered(ran);
    guardMcpServer(makePep(), server, { ...inSession, tools: toolsOf(server) });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const answers: unknown[] = [];
    clientSide.onmessage = (m) => {
      answers.push(m);
    };
    await clientSide.start();
    // Queued on the server side: InMemoryTransport delivers it inside start(), during connect.
    await clientSide.send({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'bank_transfer', arguments: { id: 'x' } },
    });
    await server.connect(serverSide);
    await expect.poll(() => answers.length).toBe(1);
    expect(answers[0]).toEqual({
      jsonrpc: '2.0',
      id: 7,
      result: { isError: true, content: [{ type: 'text', text: DENIED }] },
    });
    expect(ran).toEqual([]);
  });

  it('with a verifier, a call without a valid permit is refused before the tool runs; the PDP is not asked', async () => {
    const ran: string[] = [];
    const server = preRegistered(ran);
    const client = await clientOf(server);
    const verifier = createPermitVerifier({
      keys: dev.pdp.jwksUrl,
      issuer: dev.pdp.issuer,
      audience: dev.pdp.audience,
    });
    guardMcpServer(makePep(), server, { verifier, hideBlocked: false, tools: toolsOf(server) });
    const before = dev.pdp.evidence().length;
    const r = await client.callTool({
      name: 'lookup_order',
      arguments: { id: 'o1' },
      _meta: { 'agent-pep/permit': 'x.y.z' },
    });
    expect(text(r)).toBe("ERROR: Tool 'lookup_order' was not run: the policy check failed (permit_invalid)");
    expect(ran).toEqual([]);
    expect(dev.pdp.evidence().length).toBe(before);
    const permit = (await makePep().authorizeAction('lookup_order', { id: 'o1' })).permitId;
    const ok = await client.callTool({
      name: 'lookup_order',
      arguments: { id: 'o1' },
      _meta: { 'agent-pep/permit': permit },
    });
    expect(text(ok)).toBe('lookup_order o1');
    expect(ran).toEqual(['lookup_order:o1']);
  });

  it('a call the client cancels while it is being decided never runs its tool', async () => {
    const ran: string[] = [];
    const server = preRegistered(ran);
    let release = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let entered = () => {};
    const inDecision = new Promise<void>((r) => {
      entered = r;
    });
    const interceptors = [
      {
        name: 'gate',
        stages: ['action' as const],
        before: async () => {
          entered();
          await gate;
          return { action: 'proceed' as const };
        },
      },
    ];
    guardMcpServer(makePep({ interceptors }), server, { ...inSession, hideBlocked: false, tools: toolsOf(server) });
    const client = await clientOf(server);
    const abort = new AbortController();
    const call = client
      .callTool({ name: 'lookup_order', arguments: { id: 'o1' } }, undefined, { signal: abort.signal })
      .catch((err: unknown) => err);
    await inDecision;
    abort.abort();
    expect(await call).toBeInstanceOf(Error);
    release();
    // The cancelled call never runs its tool (its decision is aborted with the request). A later call still runs.
    expect(text(await client.callTool({ name: 'lookup_order', arguments: { id: 'o2' } }))).toBe('lookup_order o2');
    expect(ran).toEqual(['lookup_order:o2']);
  });
});
