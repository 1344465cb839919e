/**
 * guardMcpClient(pep, transport): the guarded `Transport` a `Client` connects through decides every
 * `tools/call` at the JSON-RPC level (CONTRACT sections 8, 13 and 16), for `@modelcontextprotocol/sdk` 1.x
 * and `@modelcontextprotocol/client` 2.x (protocol 2026-07-28), over the SDKs' `InMemoryTransport` and real
 * Streamable HTTP on 127.0.0.1, against bare servers; the dev PDP decides. It patches nothing: the
 * `Client` and the inner transport have the members a bare client on a bare transport has.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpV2,
  InMemoryTransport as InMemoryV2,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { createMcpHandler, McpServer as McpServerV2 } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { guardMcpClient, PERMIT_META_KEY, SESSION_META_KEY } from '../../../src/adapters/mcp.js';
import type { DecisionEvent } from '../../../src/index.js';
import { useDevPdp } from '../../support/dev-pdp-suite.js';
import { memberShape } from '../../support/members.js';

const policy = {
  agents: ['support-ai'],
  latches: [
    { id: 'no-transfers', stage: 'action', tool: 'bank_*', verdict: 'BLOCK', reason: 'no money transfers' },
    {
      id: 'phone-egress',
      stage: 'context_egress',
      content: '\\b\\d{3}[-.]\\d{3}[-.]\\d{4}\\b',
      verdict: 'WARN',
      redact: '[phone]',
      reason: 'phone numbers are redacted',
    },
    { id: 'secret-egress', stage: 'context_egress', content: 'SECRET', verdict: 'BLOCK', reason: 'secret in result' },
  ],
};
const dev = useDevPdp({ policy }, { session: 'sess_pep', timeoutMs: 1000, retries: 0 });

interface Ran {
  tool: string;
  args: unknown;
  meta: Record<string, unknown>;
}

const TEXT = (id: string) => (id === 'leak' ? 'SECRET-1' : id === 'phone' ? 'call 555-123-4567' : `order ${id}`);

/** A bare 1.x server: `lookup_order` (a default), `bank_transfer`, `customer` (with an outputSchema). */
function serverV1(ran: Ran[]): McpServer {
  const server = new McpServer({ name: 'payments', version: '1.0.0' });
  server.registerTool(
    'lookup_order',
    { inputSchema: { id: z.string(), copies: z.number().default(1) } },
    async (args, extra) => {
      ran.push({ tool: 'lookup_order', args, meta: (extra._meta ?? {}) as Record<string, unknown> });
      return { content: [{ type: 'text', text: TEXT(args.id) }] };
    },
  );
  server.registerTool('bank_transfer', { inputSchema: { to: z.string() } }, async (args, extra) => {
    ran.push({ tool: 'bank_transfer', args, meta: (extra._meta ?? {}) as Record<string, unknown> });
    return { content: [{ type: 'text', text: 'sent' }] };
  });
  server.registerTool(
    'customer',
    { inputSchema: { id: z.string() }, outputSchema: { phone: z.string() } },
    async (args, extra) => {
      ran.push({ tool: 'customer', args, meta: (extra._meta ?? {}) as Record<string, unknown> });
      const out = { phone: '555-123-4567' };
      return { content: [{ type: 'text', text: JSON.stringify(out) }], structuredContent: out };
    },
  );
  return server;
}

/** The same tools on a bare 2.x server. */
function serverV2(ran: Ran[]): McpServerV2 {
  const server = new McpServerV2({ name: 'payments', version: '2.0.0' });
  server.registerTool(
    'lookup_order',
    { inputSchema: z.object({ id: z.string(), copies: z.number().default(1) }) },
    async (args, ctx) => {
      ran.push({ tool: 'lookup_order', args, meta: (ctx.mcpReq._meta ?? {}) as Record<string, unknown> });
      return { content: [{ type: 'text', text: TEXT(args.id) }] };
    },
  );
  server.registerTool('bank_transfer', { inputSchema: z.object({ to: z.string() }) }, async (args, ctx) => {
    ran.push({ tool: 'bank_transfer', args, meta: (ctx.mcpReq._meta ?? {}) as Record<string, unknown> });
    return { content: [{ type: 'text', text: 'sent' }] };
  });
  server.registerTool(
    'customer',
    { inputSchema: z.object({ id: z.string() }), outputSchema: z.object({ phone: z.string() }) },
    async (args, ctx) => {
      ran.push({ tool: 'customer', args, meta: (ctx.mcpReq._meta ?? {}) as Record<string, unknown> });
      const out = { phone: '555-123-4567' };
      return { content: [{ type: 'text', text: JSON.stringify(out) }], structuredContent: out };
    },
  );
  return server;
}

/** What a test needs of either SDK's `Client`. */
interface AnyClient {
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<Record<string, unknown>>;
  listTools(): Promise<{ tools: { name: string }[] }>;
  request(req: { method: string; params?: Record<string, unknown> }, ...rest: never[]): Promise<unknown>;
  close(): Promise<void>;
}

/** The 1.x SDK; the 2.x SDK as it connects by default; the 2.x SDK pinned to protocol revision 2026-07-28. */
type Line = 'v1' | 'v2' | 'v2@2026-07-28';

const MODERN = { versionNegotiation: { mode: { pin: '2026-07-28' } } } as const;
const clientV2 = (line: Line) => new ClientV2({ name: 'agent', version: '1.0.0' }, line === 'v2' ? {} : MODERN);

/** A bare server of that line and a `Client` connected to it through the guarded in-memory transport. */
async function connected(line: Line, opts: { events?: DecisionEvent[]; pin?: true; session?: string } = {}) {
  const ran: Ran[] = [];
  const pep = dev.clients.client(opts.events ? { onDecision: (e: DecisionEvent) => opts.events?.push(e) } : {});
  const guardOpts = { ...(opts.pin ? { pin: opts.pin } : {}), ...(opts.session ? { session: opts.session } : {}) };
  if (line === 'v1') {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await serverV1(ran).connect(serverSide);
    const client = new Client({ name: 'agent', version: '1.0.0' });
    const guarded = guardMcpClient(pep, clientSide, guardOpts);
    await client.connect(guarded);
    return { ran, client: client as unknown as AnyClient, guarded };
  }
  const [clientSide, serverSide] = InMemoryV2.createLinkedPair();
  await serverV2(ran).connect(serverSide);
  const client = clientV2(line);
  const guarded = guardMcpClient(pep, clientSide, guardOpts);
  await client.connect(guarded);
  return { ran, client: client as unknown as AnyClient, guarded };
}

// Protocol 2026-07-28 is served per HTTP request only (createMcpHandler): see the Streamable HTTP cases.
describe.each(['v1', 'v2'] as const)('guardMcpClient(pep, transport) on the %s SDK', (line) => {
  it('an allowed call is sent with the args that run, its permit and the application session in _meta', async () => {
    const { ran, client } = await connected(line, { session: 'sess_app' });
    const r = await client.callTool({ name: 'lookup_order', arguments: { id: 'o1' } });
    expect(r.isError ?? false).toBe(false);
    expect(ran.map((x) => [x.tool, x.args])).toEqual([['lookup_order', { id: 'o1', copies: 1 }]]);
    expect(ran[0]?.meta[SESSION_META_KEY]).toBe('sess_app');
    expect(ran[0]?.meta[PERMIT_META_KEY]).toEqual(expect.any(String));
    const steps = dev.pdp
      .evidence()
      .filter((e) => e.visibility === undefined)
      .slice(-2);
    expect(steps.map((e) => [e.stage, e.session, e.verdict])).toEqual([
      ['action', 'sess_app', 'ALLOW'],
      ['context_egress', 'sess_app', 'ALLOW'],
    ]);
    await client.close();
  });

  it("without a session option, the call is decided and sent in the Pep's own session", async () => {
    const { ran, client } = await connected(line);
    await client.callTool({ name: 'lookup_order', arguments: { id: 'o2' } });
    expect(ran[0]?.meta[SESSION_META_KEY]).toBe('sess_pep');
    await client.close();
  });

  it('a blocked call is never sent: the client receives the tool-error result, observed by onDecision', async () => {
    const events: DecisionEvent[] = [];
    const { ran, client } = await connected(line, { events });
    const r = await client.callTool({ name: 'bank_transfer', arguments: { to: 'mallory' } });
    expect(r.isError).toBe(true);
    expect(r.content).toEqual([
      { type: 'text', text: "ERROR: Tool 'bank_transfer' denied by policy: no money transfers" },
    ]);
    expect(ran).toEqual([]);
    expect(events.map((e) => [e.stage, e.tool, e.decision.verdict])).toEqual([['action', 'bank_transfer', 'BLOCK']]);
    await client.close();
  });

  it('a tools/call sent through request() is decided too; a result blocked at context_egress is withheld', async () => {
    const { ran, client } = await connected(line);
    const req = { method: 'tools/call', params: { name: 'bank_transfer', arguments: { to: 'x' } } };
    const viaRequest = (
      line === 'v1'
        ? await (client as unknown as Client).request(req as never, CallToolResultSchema)
        : await client.request(req)
    ) as Record<string, unknown>;
    expect(viaRequest.isError).toBe(true);
    const leak = await client.callTool({ name: 'lookup_order', arguments: { id: 'leak' } });
    expect(leak.isError).toBe(true);
    expect(JSON.stringify(leak)).not.toContain('SECRET');
    expect(ran.map((x) => x.tool)).toEqual(['lookup_order']);
    await client.close();
  });

  it('WARN at context_egress replaces the text; for a tool with an outputSchema the SDK gets an isError result, not an exception', async () => {
    const { client } = await connected(line);
    await client.listTools();
    const plain = await client.callTool({ name: 'lookup_order', arguments: { id: 'phone' } });
    expect(plain.isError ?? false).toBe(false);
    expect(plain.content).toEqual([{ type: 'text', text: 'call [phone]' }]);
    const structured = await client.callTool({ name: 'customer', arguments: { id: 'c1' } });
    expect(structured.isError).toBe(true);
    expect(structured.structuredContent).toBeUndefined();
    expect(JSON.stringify(structured)).not.toContain('555-123-4567');
    await client.close();
  });

  it('listTools offers only the tools the policy shows', async () => {
    const { client } = await connected(line);
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['customer', 'lookup_order']);
    await client.close();
  });

  it('pins: pepPins() names the server and every tool; a pin set without a tool hides it and refuses its call (tool_changed)', async () => {
    const first = await connected(line, { pin: true });
    await first.client.listTools();
    const pins = first.guarded.pepPins();
    expect(pins?.server.name).toBe('payments');
    expect(Object.keys(pins?.tools ?? {}).sort()).toEqual(['bank_transfer', 'customer', 'lookup_order']);
    await first.client.close();
    const { lookup_order: _dropped, ...rest } = pins?.tools ?? {};
    const ran: Ran[] = [];
    const events: DecisionEvent[] = [];
    const pep = dev.clients.client({ onDecision: (e: DecisionEvent) => events.push(e) });
    const pinSet = { version: 1 as const, server: pins?.server ?? { name: '', version: '' }, tools: rest };
    let client: AnyClient;
    if (line === 'v1') {
      const [c, s] = InMemoryTransport.createLinkedPair();
      await serverV1(ran).connect(s);
      client = new Client({ name: 'agent', version: '1.0.0' }) as unknown as AnyClient;
      await (client as unknown as Client).connect(guardMcpClient(pep, c, { pin: pinSet }));
    } else {
      const [c, s] = InMemoryV2.createLinkedPair();
      await serverV2(ran).connect(s);
      client = clientV2(line) as unknown as AnyClient;
      await (client as unknown as ClientV2).connect(guardMcpClient(pep, c, { pin: pinSet }));
    }
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['customer']);
    const r = await client.callTool({ name: 'lookup_order', arguments: { id: 'o1' } });
    expect(r.isError).toBe(true);
    expect(ran).toEqual([]);
    expect(events.map((e) => e.decision.synthesized?.code)).toContain('tool_changed');
    await client.close();
  });

  it('patches nothing: the Client and the inner transport have the members of a bare client on a bare transport', async () => {
    const bare = line === 'v1' ? InMemoryTransport.createLinkedPair() : InMemoryV2.createLinkedPair();
    const inner = line === 'v1' ? InMemoryTransport.createLinkedPair() : InMemoryV2.createLinkedPair();
    const ran: Ran[] = [];
    if (line === 'v1') {
      await serverV1(ran).connect(bare[1] as InMemoryTransport);
      await serverV1(ran).connect(inner[1] as InMemoryTransport);
    } else {
      await serverV2(ran).connect(bare[1] as InMemoryV2);
      await serverV2(ran).connect(inner[1] as InMemoryV2);
    }
    const make = () => (line === 'v1' ? new Client({ name: 'a', version: '1' }) : clientV2(line));
    const bareClient = make();
    const guardedClient = make();
    const transportBefore = shapeOf(inner[0]);
    const clientBefore = shapeOf(guardedClient);
    await (bareClient as Client).connect(bare[0] as InMemoryTransport);
    await (guardedClient as Client).connect(guardMcpClient(dev.clients.client(), inner[0] as InMemoryTransport));
    await (guardedClient as unknown as AnyClient).callTool({ name: 'lookup_order', arguments: { id: 'o1' } });
    await (bareClient as unknown as AnyClient).callTool({ name: 'lookup_order', arguments: { id: 'o1' } });
    expect(shapeOf(inner[0])).toEqual(shapeOf(bare[0]));
    expect(shapeOf(guardedClient)).toEqual(shapeOf(bareClient));
    // Guarding changed no member the inner transport or the client had (only the callbacks a Client sets appear).
    for (const [key, d] of transportBefore) expect(memberShape(inner[0]).get(key)).toEqual(d);
    for (const [key, d] of clientBefore) expect(memberShape(guardedClient).get(key)).toEqual(d);
    await bareClient.close();
    await guardedClient.close();
  });
});

/**
 * The members of an object as comparable across two instances: the name and kind of each own one (its
 * value differs from instance to instance: a callback a Client sets), and the descriptor of each inherited
 * one (the class's own, shared).
 */
function shapeOf(o: object): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [key, d] of memberShape(o)) {
    const [value, get, set, writable, configurable] = d;
    out.set(
      key,
      key.startsWith('0:')
        ? [typeof value, typeof get, typeof set, writable, configurable]
        : [value, get, set, writable, configurable],
    );
  }
  return out;
}

describe('guardMcpClient(pep, transport) over Streamable HTTP', () => {
  let http: Server | undefined;
  afterEach(async () => {
    http?.closeAllConnections();
    await new Promise<void>((resolve) => (http ? http.close(() => resolve()) : resolve()));
    http = undefined;
  });

  async function listen(
    handler: (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void,
  ) {
    http = createServer(handler);
    await new Promise<void>((resolve) => http?.listen(0, '127.0.0.1', resolve));
    return new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
  }

  it('1.x client, stateful 1.x server: decided, sent with the session, blocked calls never sent', async () => {
    const ran: Ran[] = [];
    const server = serverV1(ran);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => crypto.randomUUID() });
    await server.connect(transport);
    const url = await listen((req, res) => void transport.handleRequest(req, res));
    const client = new Client({ name: 'agent', version: '1.0.0' });
    const pep = dev.clients.client().withSession('sess_http1');
    await client.connect(guardMcpClient(pep, new StreamableHTTPClientTransport(url)), { timeout: 5000 });
    const ok = await client.callTool({ name: 'lookup_order', arguments: { id: 'o9' } });
    const no = await client.callTool({ name: 'bank_transfer', arguments: { to: 'x' } });
    expect([ok.isError ?? false, no.isError]).toEqual([false, true]);
    expect(ran.map((x) => [x.tool, x.meta[SESSION_META_KEY]])).toEqual([['lookup_order', 'sess_http1']]);
    await client.close();
    await transport.close();
  });

  it.each(['v2', 'v2@2026-07-28'] as const)(
    '%s client, stateless createMcpHandler: decided, sent with the session, blocked calls never sent',
    async (line) => {
      const ran: Ran[] = [];
      const wire: Record<string, unknown>[] = [];
      const handler = createMcpHandler(() => serverV2(ran));
      const url = await listen((req, res) => {
        void (async () => {
          const chunks: Buffer[] = [];
          for await (const c of req) chunks.push(c as Buffer);
          if (chunks.length > 0) wire.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          const headers = new Headers();
          for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
          const request = new Request(`http://127.0.0.1${req.url}`, {
            method: req.method ?? 'GET',
            headers,
            ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
          });
          const response = await handler.fetch(request);
          res.writeHead(response.status, Object.fromEntries(response.headers));
          res.end(Buffer.from(await response.arrayBuffer()));
        })();
      });
      const client = clientV2(line);
      const guarded = guardMcpClient(dev.clients.client().withSession('sess_http2'), new HttpV2(url), { pin: true });
      await client.connect(guarded);
      expect(client.getNegotiatedProtocolVersion() === '2026-07-28').toBe(line !== 'v2');
      const ok = await client.callTool({ name: 'lookup_order', arguments: { id: 'o9' } });
      const no = await client.callTool({ name: 'bank_transfer', arguments: { to: 'x' } });
      expect([ok.isError ?? false, no.isError]).toEqual([false, true]);
      expect(ran.map((x) => [x.tool, x.meta[SESSION_META_KEY]])).toEqual([['lookup_order', 'sess_http2']]);
      // 2026-07-28: the SDK's own protocol envelope travels beside the guard's keys.
      const sent = wire
        .filter((m) => m.method === 'tools/call')
        .map((m) => (m.params as { _meta: Record<string, unknown> })._meta);
      expect(sent.map((m) => [m['io.modelcontextprotocol/protocolVersion'], m[SESSION_META_KEY]])).toEqual([
        [line === 'v2' ? undefined : '2026-07-28', 'sess_http2'],
      ]);
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['customer', 'lookup_order']);
      expect(guarded.pepPins()?.server.name).toBe('payments');
      await client.close();
    },
  );
});
