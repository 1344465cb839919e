/**
 * guardMcpServer given a 2.x `McpServer` or low-level `Server` of `@modelcontextprotocol/server` directly
 * (CONTRACT section 16): decided through the Pep on the args the tool runs with, in the request's session,
 * with the SDK's public API only (no member of an SDK object replaced), every refusal observed by onDecision.
 * Driven by a 2.x `Client` over the SDK's `InMemoryTransport`; the dev PDP decides.
 */
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport, McpServer, Server } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { guardMcpClient, guardMcpServer, SESSION_META_KEY } from '../../../src/adapters/mcp.js';
import { createPermitVerifier, type DecisionEvent } from '../../../src/index.js';
import { useDevPdp } from '../../support/dev-pdp-suite.js';
import { memberShape } from '../../support/members.js';

const policy = {
  agents: ['support-ai'],
  latches: [
    { id: 'no-transfers', stage: 'action', tool: 'bank_*', verdict: 'BLOCK', reason: 'no money transfers' },
    {
      id: 'small-orders',
      stage: 'action',
      tool: 'lookup_order',
      when: { 'args.copies': { gt: 3 } },
      verdict: 'BLOCK',
      reason: 'too many',
    },
  ],
};
const dev = useDevPdp({ policy }, { session: 'sess_v2s', timeoutMs: 1000, retries: 0 });

function build(ran: unknown[]) {
  const server = new McpServer({ name: 'payments', version: '2.0.0' });
  const lookup = server.registerTool(
    'lookup_order',
    { inputSchema: z.object({ id: z.string(), copies: z.number().default(5) }) },
    async (args) => {
      ran.push(['lookup_order', args]);
      return { content: [{ type: 'text', text: `order ${args.id}` }] };
    },
  );
  const bank = server.registerTool('bank_transfer', { inputSchema: z.object({ to: z.string() }) }, async (args) => {
    ran.push(['bank_transfer', args]);
    return { content: [{ type: 'text', text: 'sent' }] };
  });
  const ping = server.registerTool('ping', { description: 'no schema' }, async () => {
    ran.push(['ping']);
    return { content: [{ type: 'text', text: 'pong' }] };
  });
  return { server, handles: { lookup_order: lookup, bank_transfer: bank, ping } };
}

async function connect(server: { connect(t: never): Promise<void> }, guardClient = true): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide as never);
  const client = new Client({ name: 'agent', version: '1.0.0' });
  const pep = dev.clients.client({ permits: false });
  await client.connect(guardClient ? guardMcpClient(pep, clientSide, { session: 'sess_app' }) : clientSide);
  return client;
}

describe('guardMcpServer on a 2.x McpServer given directly', () => {
  it('decides each call on the args the tool runs with (schema defaults applied): a blocked call never runs', async () => {
    const ran: unknown[] = [];
    const events: DecisionEvent[] = [];
    const { server, handles } = build(ran);
    guardMcpServer(dev.clients.client({ onDecision: (e: DecisionEvent) => events.push(e) }), server, {
      tools: handles,
    });
    const client = await connect(server, false);
    const _meta = { [SESSION_META_KEY]: 'sess_app' };
    // copies defaults to 5 (> 3): the PDP sees the default the tool would run with, and blocks
    const r1 = await client.callTool({ name: 'lookup_order', arguments: { id: 'o1' }, _meta });
    expect(r1.isError).toBe(true);
    const r2 = await client.callTool({ name: 'lookup_order', arguments: { id: 'o2', copies: 2 }, _meta });
    expect(r2.isError).toBeFalsy();
    const r3 = await client.callTool({ name: 'ping', arguments: {}, _meta });
    expect(r3.content).toEqual([{ type: 'text', text: 'pong' }]);
    expect(ran).toEqual([['lookup_order', { id: 'o2', copies: 2 }], ['ping']]);
    const server_ = events.filter((e) => e.stage === 'action').map((e) => [e.tool, e.decision.verdict]);
    expect(server_).toEqual([
      ['lookup_order', 'BLOCK'],
      ['lookup_order', 'ALLOW'],
      ['ping', 'ALLOW'],
    ]);
    const evidence = dev.pdp.evidence().filter((e) => e.visibility === undefined && e.tool === 'lookup_order');
    expect(evidence.some((e) => e.session === 'sess_app')).toBe(true);
  });

  it('tools/list answers only the tools the session may see', async () => {
    const { server, handles } = build([]);
    guardMcpServer(dev.clients.client(), server, { tools: handles });
    const client = await connect(server, false);
    const listed = await client.listTools({ _meta: { [SESSION_META_KEY]: 'sess_x' } });
    expect(listed.tools.map((t) => t.name)).toEqual(['lookup_order', 'ping']);
    expect(listed.tools[0]?.inputSchema).toMatchObject({ type: 'object', properties: { id: { type: 'string' } } });
    // what this caller may see: no cache shared between callers may keep it
    expect((listed as { cacheScope?: unknown }).cacheScope).toBe('private');
  });

  it('with a verifier: a call runs only on the permit the guarded client sent; none is refused, the PDP not asked', async () => {
    const ran: unknown[] = [];
    const events: DecisionEvent[] = [];
    const { server, handles } = build(ran);
    const verifier = createPermitVerifier({
      keys: dev.pdp.jwksUrl,
      issuer: dev.pdp.issuer,
      audience: dev.pdp.audience,
    });
    const serverPep = dev.clients.client({ onDecision: (e: DecisionEvent) => events.push(e) });
    guardMcpServer(serverPep, server, { tools: handles, verifier });
    const client = await connect(server);
    const ok = await client.callTool({ name: 'lookup_order', arguments: { id: 'o3', copies: 1 } });
    expect(ok.isError).toBeFalsy();
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const other = build(ran);
    guardMcpServer(serverPep, other.server, { tools: other.handles, verifier });
    await other.server.connect(serverSide);
    const raw = new Client({ name: 'raw', version: '1' });
    await raw.connect(clientSide);
    const noPermit = await raw.callTool({ name: 'lookup_order', arguments: { id: 'o4', copies: 1 } });
    expect(noPermit.isError).toBe(true);
    expect(ran).toEqual([['lookup_order', { id: 'o3', copies: 1 }]]);
    const calls = events.filter((e) => e.decision.simulated !== true);
    expect(calls.map((e) => [e.tool, e.decision.synthesized?.code])).toEqual([['lookup_order', 'permit_invalid']]);
  });

  it('a callback swapped in later with update({ callback }) is still decided', async () => {
    const ran: unknown[] = [];
    const { server, handles } = build(ran);
    guardMcpServer(dev.clients.client(), server, { tools: handles });
    handles.bank_transfer.update({
      callback: async () => {
        ran.push('swapped');
        return { content: [{ type: 'text' as const, text: 'sent' }] };
      },
    });
    const client = await connect(server);
    expect((await client.callTool({ name: 'bank_transfer', arguments: { to: 'm' } })).isError).toBe(true);
    expect(ran).toEqual([]);
  });

  it('every refusal of the guard reaches onDecision: no session (saying how to send one), a tool whose handle was not given', async () => {
    const ran: unknown[] = [];
    const events: DecisionEvent[] = [];
    const { server, handles } = build(ran);
    const { ping: _ping, ...some } = handles;
    guardMcpServer(dev.clients.client({ onDecision: (e: DecisionEvent) => events.push(e) }), server, { tools: some });
    const client = await connect(server, false);
    const noSession = await client.callTool({ name: 'lookup_order', arguments: { id: 'o', copies: 1 } });
    expect(noSession.isError).toBe(true);
    expect(JSON.stringify(noSession.content)).toContain(`params._meta['${SESSION_META_KEY}']`);
    const notGiven = await client.callTool({
      name: 'ping',
      arguments: {},
      _meta: { [SESSION_META_KEY]: 'sess_app' },
    });
    expect(notGiven.isError).toBe(true);
    expect(ran).toEqual([]);
    expect(events.map((e) => [e.tool, e.decision.verdict, e.decision.synthesized?.code])).toEqual([
      ['lookup_order', 'BLOCK', 'invalid_request'],
      ['ping', 'BLOCK', 'invalid_request'],
    ]);
    expect(events[0]?.decision.synthesized?.message).toContain('{ session: (request, extra) => string }');
  });

  it('without the tool handles it is a TypeError naming tools (the SDK keeps its tools private)', () => {
    const { server } = build([]);
    let err: unknown;
    try {
      guardMcpServer(dev.clients.client(), server, {});
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TypeError);
    expect((err as { option?: string }).option).toBe('tools');
  });

  it('replaces no member of an SDK object: McpServer, its server and the transport look the same before and after', async () => {
    const { server, handles } = build([]);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const before = [
      memberShape(server),
      memberShape(server.server),
      memberShape(serverSide),
      ...Object.values(handles).map(memberShape),
    ];
    guardMcpServer(dev.clients.client(), server, { tools: handles });
    const client = new Client({ name: 'agent', version: '1.0.0' });
    await client.connect(clientSide);
    await client.callTool({ name: 'ping', arguments: {}, _meta: { [SESSION_META_KEY]: 's' } });
    const after = [
      memberShape(server),
      memberShape(server.server),
      memberShape(serverSide),
      ...Object.values(handles).map(memberShape),
    ];
    expect(after).toEqual(before);
  });
});

describe('guardMcpServer on a 2.x low-level Server given directly', () => {
  function low(ran: unknown[]) {
    const server = new Server({ name: 'low', version: '2.0.0' }, { capabilities: { tools: {} } });
    const toolHandlers = {
      call: async (request: { params: Record<string, unknown> }) => {
        ran.push([request.params.name, request.params.arguments]);
        return { content: [{ type: 'text' as const, text: 'done' }] };
      },
      list: async () => ({
        tools: [
          { name: 'bank_transfer', inputSchema: { type: 'object' as const } },
          { name: 'lookup_order', inputSchema: { type: 'object' as const } },
        ],
      }),
    };
    return { server, toolHandlers };
  }

  it('decides each call before its handler runs; tools/list is filtered; refusals reach onDecision', async () => {
    const ran: unknown[] = [];
    const events: DecisionEvent[] = [];
    const { server, toolHandlers } = low(ran);
    const before = memberShape(server);
    guardMcpServer(dev.clients.client({ onDecision: (e: DecisionEvent) => events.push(e) }), server, { toolHandlers });
    expect(memberShape(server)).toEqual(before);
    const client = await connect(server, false);
    const _meta = { [SESSION_META_KEY]: 'sess_app' };
    expect((await client.callTool({ name: 'bank_transfer', arguments: { to: 'm' }, _meta })).isError).toBe(true);
    expect(
      (await client.callTool({ name: 'lookup_order', arguments: { id: 'o', copies: 1 }, _meta })).isError,
    ).toBeFalsy();
    expect(ran).toEqual([['lookup_order', { id: 'o', copies: 1 }]]);
    expect((await client.listTools({ _meta })).tools.map((t) => t.name)).toEqual(['lookup_order']);
    const decided = events.filter((e) => e.stage === 'action' && e.decision.simulated !== true);
    expect(decided.map((e) => [e.tool, e.decision.verdict])).toEqual([
      ['bank_transfer', 'BLOCK'],
      ['lookup_order', 'ALLOW'],
    ]);
  });

  it('a tools/call handler already set, which the guard cannot reach, is a TypeError at guard time', () => {
    const { server, toolHandlers } = low([]);
    server.setRequestHandler('tools/call', async () => ({ content: [] }));
    expect(() => guardMcpServer(dev.clients.client(), server, { toolHandlers })).toThrow(TypeError);
  });

  it('without toolHandlers it is a TypeError naming toolHandlers', () => {
    const { server } = low([]);
    let err: unknown;
    try {
      guardMcpServer(dev.clients.client(), server, {});
    } catch (e) {
      err = e;
    }
    expect((err as { option?: string }).option).toBe('toolHandlers');
  });
});
