/**
 * guardMcpClient on the transport of a `Client` of `@modelcontextprotocol/client` 2.x (protocol 2026-07-28) against a
 * bare v2 `McpServer` (`@modelcontextprotocol/server`) over the SDK's `InMemoryTransport`, and over
 * Streamable HTTP against `createMcpHandler` (stateless) on 127.0.0.1; the dev PDP decides. CONTRACT
 * section 16: the same guard chosen by the object given; the session is the application's and travels
 * in `params._meta['agent-pep/session']`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createMcpHandler, InMemoryTransport, McpServer } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { guardMcpClient, PERMIT_META_KEY, SESSION_META_KEY } from '../../../src/adapters/mcp.js';
import type { DecisionEvent } from '../../../src/index.js';
import { useDevPdp } from '../../support/dev-pdp-suite.js';

const policy = {
  agents: ['support-ai'],
  latches: [
    { id: 'no-transfers', stage: 'action', tool: 'bank_*', verdict: 'BLOCK', reason: 'no money transfers' },
    { id: 'secret-egress', stage: 'context_egress', content: 'SECRET', verdict: 'BLOCK', reason: 'secret in result' },
  ],
};
const dev = useDevPdp({ policy }, { session: 'sess_v2', timeoutMs: 1000, retries: 0 });

interface Ran {
  tool: string;
  args: unknown;
  meta: unknown;
}

function v2Server(ran: Ran[]): McpServer {
  const server = new McpServer({ name: 'payments', version: '2.0.0' });
  server.registerTool(
    'lookup_order',
    { inputSchema: z.object({ id: z.string(), copies: z.number().default(1) }) },
    async (args, ctx) => {
      ran.push({ tool: 'lookup_order', args, meta: ctx.mcpReq._meta });
      return { content: [{ type: 'text', text: args.id === 'leak' ? 'SECRET-1' : `order ${args.id}` }] };
    },
  );
  server.registerTool('bank_transfer', { inputSchema: z.object({ to: z.string() }) }, async (args, ctx) => {
    ran.push({ tool: 'bank_transfer', args, meta: ctx.mcpReq._meta });
    return { content: [{ type: 'text', text: 'sent' }] };
  });
  return server;
}

describe('guardMcpClient on @modelcontextprotocol/client 2.x', () => {
  let http: Server | undefined;
  afterEach(async () => {
    http?.closeAllConnections();
    await new Promise<void>((resolve) => (http ? http.close(() => resolve()) : resolve()));
    http = undefined;
  });

  async function inMemory(ran: Ran[], events?: DecisionEvent[]) {
    const server = v2Server(ran);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'agent', version: '1.0.0' });
    const pep = dev.clients.client(events ? { onDecision: (e: DecisionEvent) => events.push(e) } : {});
    await client.connect(guardMcpClient(pep, clientSide, { session: 'sess_app' }));
    return client;
  }

  it('an allowed call is sent with the args that run, its permit and the application session in _meta', async () => {
    const ran: Ran[] = [];
    const client = await inMemory(ran);
    const r = await client.callTool({ name: 'lookup_order', arguments: { id: 'o1' } });
    expect(r.isError).toBeFalsy();
    expect(ran.map((x) => [x.tool, x.args])).toEqual([['lookup_order', { id: 'o1', copies: 1 }]]);
    const meta = ran[0]?.meta as Record<string, unknown>;
    expect(meta[SESSION_META_KEY]).toBe('sess_app');
    expect(meta[PERMIT_META_KEY]).toEqual(expect.any(String));
    const steps = dev.pdp
      .evidence()
      .filter((e) => e.visibility === undefined)
      .slice(-2);
    expect(steps.map((e) => [e.stage, e.session, e.verdict])).toEqual([
      ['action', 'sess_app', 'ALLOW'],
      ['context_egress', 'sess_app', 'ALLOW'],
    ]);
  });

  it('a blocked call is never sent: the tool-error result with the denial text, observed by onDecision', async () => {
    const ran: Ran[] = [];
    const events: DecisionEvent[] = [];
    const client = await inMemory(ran, events);
    const r = await client.callTool({ name: 'bank_transfer', arguments: { to: 'mallory' } });
    expect(r).toEqual({
      isError: true,
      content: [{ type: 'text', text: "ERROR: Tool 'bank_transfer' denied by policy: no money transfers" }],
    });
    expect(ran).toEqual([]);
    expect(events.map((e) => [e.stage, e.tool, e.decision.verdict])).toEqual([['action', 'bank_transfer', 'BLOCK']]);
  });

  it('a tools/call sent through request() is decided too; a result the PDP blocks at context_egress is withheld', async () => {
    const ran: Ran[] = [];
    const client = await inMemory(ran);
    const viaRequest = await client.request({
      method: 'tools/call',
      params: { name: 'bank_transfer', arguments: { to: 'x' } },
    });
    expect(viaRequest.isError).toBe(true);
    const leak = await client.callTool({ name: 'lookup_order', arguments: { id: 'leak' } });
    expect(leak.isError).toBe(true);
    expect(JSON.stringify(leak)).not.toContain('SECRET');
    expect(ran.map((x) => x.tool)).toEqual(['lookup_order']);
  });

  it('listTools offers only the tools the policy shows', async () => {
    const client = await inMemory([]);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['lookup_order']);
  });

  it('a Client given instead of its transport is a TypeError without an option (guard the transport)', () => {
    let err: unknown;
    try {
      guardMcpClient(dev.clients.client(), new Client({ name: 'a', version: '1' }) as never, { pin: true });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TypeError);
    expect((err as { option?: string }).option).toBeUndefined();
  });

  it('over Streamable HTTP against a stateless createMcpHandler server: decided, sent with the session, blocked calls never sent', async () => {
    const ran: Ran[] = [];
    const handler = createMcpHandler(() => v2Server(ran));
    http = createServer((req, res) => {
      void (async () => {
        const chunks: Buffer[] = [];
        for await (const c of req) chunks.push(c as Buffer);
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
    await new Promise<void>((resolve) => http?.listen(0, '127.0.0.1', resolve));
    const { port } = http.address() as AddressInfo;
    const client = new Client({ name: 'agent', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`));
    await client.connect(guardMcpClient(dev.clients.client().withSession('sess_http2'), transport));
    const ok = await client.callTool({ name: 'lookup_order', arguments: { id: 'o9' } });
    const no = await client.callTool({ name: 'bank_transfer', arguments: { to: 'x' } });
    expect([ok.isError ?? false, no.isError]).toEqual([false, true]);
    expect(ran.map((x) => [x.tool, (x.meta as Record<string, unknown>)[SESSION_META_KEY]])).toEqual([
      ['lookup_order', 'sess_http2'],
    ]);
    await client.close();
  });
});
