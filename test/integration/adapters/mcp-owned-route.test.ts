/**
 * guardMcpServer on a 1.x `McpServer` with the handles of its tools (`{ tools }`, required): the one route,
 * with no patched SDK member (CONTRACT section 16). The guard serves `tools/call` and `tools/list` through the low-level
 * server's public `removeRequestHandler` / `setRequestHandler`, reaches each tool through its handle, and
 * decides on the args the tool runs with; every refusal reaches onDecision. The real 1.x SDK over its
 * `InMemoryTransport`, the dev PDP deciding.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { guardMcpClient, guardMcpServer, PERMIT_META_KEY, SESSION_META_KEY } from '../../../src/adapters/mcp.js';
import { createPermitVerifier, type DecisionEvent } from '../../../src/index.js';
import { useDevPdp } from '../../support/dev-pdp-suite.js';
import { memberShape } from '../../support/members.js';

const policy = {
  agents: ['support-ai'],
  latches: [
    { id: 'no-transfers', stage: 'action', tool: 'bank_*', verdict: 'BLOCK', reason: 'no money transfers' },
    {
      id: 'few-copies',
      stage: 'action',
      tool: 'lookup_order',
      when: { 'args.copies': { gt: 3 } },
      verdict: 'BLOCK',
      reason: 'too many',
    },
  ],
};
const dev = useDevPdp({ policy }, { session: 'sess_owned' });
const _meta = { [SESSION_META_KEY]: 'sess_app' };

function build(ran: unknown[]) {
  const server = new McpServer({ name: 'orders', version: '1.0.0' }, { capabilities: { tools: {} } });
  const lookup = server.registerTool(
    'lookup_order',
    { title: 'Lookup', inputSchema: { id: z.string(), copies: z.coerce.number().default(5) } },
    async (args) => {
      ran.push(['lookup_order', args]);
      return { content: [{ type: 'text' as const, text: `order ${args.id}` }] };
    },
  );
  const bank = server.registerTool('bank_transfer', { inputSchema: { to: z.string() } }, async (args) => {
    ran.push(['bank_transfer', args]);
    return { content: [{ type: 'text' as const, text: 'sent' }] };
  });
  const ping = server.registerTool('ping', {}, async () => {
    ran.push(['ping']);
    return { content: [{ type: 'text' as const, text: 'pong' }] };
  });
  return { server, handles: { lookup_order: lookup, bank_transfer: bank, ping } };
}

async function connect(server: McpServer) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'agent', version: '1.0.0' });
  await client.connect(clientSide);
  return { client, serverSide };
}

describe('guardMcpServer on a 1.x McpServer with { tools } (no patched SDK member)', () => {
  it('decides each call on the args the tool runs with (defaults and coercions applied); a refused call never runs', async () => {
    const ran: unknown[] = [];
    const events: DecisionEvent[] = [];
    const { server, handles } = build(ran);
    guardMcpServer(dev.clients.client({ onDecision: (e: DecisionEvent) => events.push(e) }), server, {
      tools: handles,
    });
    const { client } = await connect(server);
    // copies defaults to 5 (> 3): blocked on what would run
    expect((await client.callTool({ name: 'lookup_order', arguments: { id: 'a' }, _meta })).isError).toBe(true);
    // '2' is coerced to 2: decided (and run) as 2
    const ok = await client.callTool({ name: 'lookup_order', arguments: { id: 'b', copies: '2' }, _meta });
    expect(ok.isError).toBeFalsy();
    expect((await client.callTool({ name: 'bank_transfer', arguments: { to: 'm' }, _meta })).isError).toBe(true);
    expect((await client.callTool({ name: 'ping', arguments: {}, _meta })).content).toEqual([
      { type: 'text', text: 'pong' },
    ]);
    expect(ran).toEqual([['lookup_order', { id: 'b', copies: 2 }], ['ping']]);
    const decided = events.filter((e) => e.decision.simulated !== true);
    expect(decided.map((e) => [e.tool, e.decision.verdict])).toEqual([
      ['lookup_order', 'BLOCK'],
      ['lookup_order', 'ALLOW'],
      ['bank_transfer', 'BLOCK'],
      ['ping', 'ALLOW'],
    ]);
  });

  it('tools/list offers the given tools the session may see, as the SDK lists them', async () => {
    const { server, handles } = build([]);
    guardMcpServer(dev.clients.client(), server, { tools: handles });
    const { client } = await connect(server);
    const listed = await client.listTools({ _meta });
    expect(listed.tools.map((t) => t.name)).toEqual(['lookup_order', 'ping']);
    expect(listed.tools[0]).toMatchObject({ title: 'Lookup', inputSchema: { type: 'object' } });
  });

  it('tools/list shows each input and output schema exactly as the unguarded SDK lists it (descriptions too)', async () => {
    // The guard loads the 1.x SDK's schema helpers on demand (its CommonJS copy): what it lists must not differ.
    const make = () => {
      const server = new McpServer({ name: 'orders', version: '1.0.0' }, { capabilities: { tools: {} } });
      const lookup = server.registerTool(
        'lookup_order',
        {
          description: 'Look an order up',
          inputSchema: { id: z.string().describe('the order id'), copies: z.number().min(1).default(5) },
          outputSchema: { status: z.enum(['open', 'shipped']).describe('where it is') },
        },
        async () => ({ content: [], structuredContent: { status: 'open' as const } }),
      );
      return { server, handles: { lookup_order: lookup } };
    };
    const plain = make();
    const guarded = make();
    guardMcpServer(dev.clients.client(), guarded.server, { tools: guarded.handles });
    const expected = await (await connect(plain.server)).client.listTools();
    const listed = await (await connect(guarded.server)).client.listTools({ _meta });
    expect(listed.tools).toEqual(expected.tools);
    expect(JSON.stringify(listed.tools)).toContain('the order id');
  });

  it('a callback swapped in with update({ callback }) after guarding is decided too', async () => {
    const ran: unknown[] = [];
    const { server, handles } = build(ran);
    guardMcpServer(dev.clients.client(), server, { tools: handles });
    handles.bank_transfer.update({
      callback: async () => {
        ran.push('swapped');
        return { content: [{ type: 'text' as const, text: 'sent' }] };
      },
    });
    const { client } = await connect(server);
    expect((await client.callTool({ name: 'bank_transfer', arguments: { to: 'm' }, _meta })).isError).toBe(true);
    expect(ran).toEqual([]);
  });

  it('every refusal of the guard reaches onDecision: no session, a tool whose handle was not given', async () => {
    const ran: unknown[] = [];
    const events: DecisionEvent[] = [];
    const { server, handles } = build(ran);
    const { ping: _ping, ...some } = handles;
    guardMcpServer(dev.clients.client({ onDecision: (e: DecisionEvent) => events.push(e) }), server, { tools: some });
    const { client } = await connect(server);
    expect((await client.callTool({ name: 'lookup_order', arguments: { id: 'x', copies: 1 } })).isError).toBe(true);
    expect((await client.callTool({ name: 'ping', arguments: {}, _meta })).isError).toBe(true);
    expect(ran).toEqual([]);
    expect(events.map((e) => [e.tool, e.decision.verdict, e.decision.synthesized?.code])).toEqual([
      ['lookup_order', 'BLOCK', 'invalid_request'],
      ['ping', 'BLOCK', 'invalid_request'],
    ]);
  });

  it('replaces no member of an SDK object: McpServer, its server, the transport and the handles look the same', async () => {
    const { server, handles } = build([]);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const objects = () => [server, server.server, serverSide, ...Object.values(handles)];
    const before = objects().map(memberShape);
    guardMcpServer(dev.clients.client(), server, { tools: handles });
    const client = new Client({ name: 'agent', version: '1.0.0' });
    await client.connect(clientSide);
    expect((await client.callTool({ name: 'ping', arguments: {}, _meta })).isError).toBeFalsy();
    expect(objects().map(memberShape)).toEqual(before);
  });

  it('with a verifier: a permit naming the pin of the definition served runs; one decided against another definition is refused', async () => {
    const ran: unknown[] = [];
    const events: DecisionEvent[] = [];
    const { server, handles } = build(ran);
    const verifier = createPermitVerifier({
      keys: dev.pdp.jwksUrl,
      issuer: dev.pdp.issuer,
      audience: dev.pdp.audience,
    });
    guardMcpServer(dev.clients.client({ onDecision: (e: DecisionEvent) => events.push(e) }), server, {
      tools: handles,
      verifier,
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    // a pinned guarded client: its permit names the pin it took from the server's own listing
    const pinned = new Client({ name: 'agent', version: '1' });
    await pinned.connect(guardMcpClient(dev.clients.client(), clientSide, { pin: true }));
    await pinned.listTools();
    const ok = await pinned.callTool({ name: 'lookup_order', arguments: { id: 'p', copies: 1 } });
    expect(ok.isError).toBeFalsy();
    expect(ran).toEqual([['lookup_order', { id: 'p', copies: 1 }]]);
    // a permit the PDP signed for another definition of the tool (another pin), sent by a raw client
    const other = await dev.clients
      .client()
      .authorizeAction('lookup_order', { id: 'q', copies: 1 }, { toolPin: 'Z'.repeat(43) });
    const [c2, s2] = InMemoryTransport.createLinkedPair();
    const second = build(ran);
    guardMcpServer(dev.clients.client({ onDecision: (e: DecisionEvent) => events.push(e) }), second.server, {
      tools: second.handles,
      verifier,
    });
    await second.server.connect(s2);
    const raw = new Client({ name: 'raw', version: '1' });
    await raw.connect(c2);
    const refused = await raw.callTool({
      name: 'lookup_order',
      arguments: { id: 'q', copies: 1 },
      _meta: { [PERMIT_META_KEY]: other.permitId },
    });
    expect(refused.isError).toBe(true);
    expect(ran).toHaveLength(1);
    // the control: the same kind of permit naming no pin is accepted (the refusal above is the pin's)
    const plain = await dev.clients.client().authorizeAction('lookup_order', { id: 'r', copies: 1 });
    const accepted = await raw.callTool({
      name: 'lookup_order',
      arguments: { id: 'r', copies: 1 },
      _meta: { [PERMIT_META_KEY]: plain.permitId },
    });
    expect(accepted.isError).toBeFalsy();
    expect(ran).toHaveLength(2);
    const decided = events.filter((e) => e.decision.simulated !== true);
    expect(decided.map((e) => [e.tool, e.decision.synthesized?.code])).toEqual([['lookup_order', 'permit_invalid']]);
  });

  it('without { tools } a 1.x McpServer is a TypeError naming tools, and nothing of it changes', () => {
    const { server } = build([]);
    const before = [memberShape(server), memberShape(server.server)];
    let err: unknown;
    try {
      guardMcpServer(dev.clients.client(), server, {});
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TypeError);
    expect((err as { option?: string }).option).toBe('tools');
    expect([memberShape(server), memberShape(server.server)]).toEqual(before);
  });
});
