/**
 * What a guarded `createMcpHandler` handler decides is what its server runs (CONTRACT sections 8 and 16:
 * a tool runs only after an ALLOW): a JSON-RPC batch (which the SDK's stateless 2025-era fallback serves)
 * never carries a `tools/call` or `tools/list` past the guard, and a body the host parsed already
 * (`fetch(request, { parsedBody })`, as `express.json()` leaves it) is the one decided, never run as the
 * guard's own requests. Raw HTTP requests to the SDK's own handler (in process), the dev PDP deciding.
 */
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  guardMcpServer,
  type McpHttpHandlerLike,
  PERMIT_META_KEY,
  SESSION_META_KEY,
} from '../../../src/adapters/mcp.js';
import { createPermitVerifier, type DecisionEvent } from '../../../src/index.js';
import { useDevPdp } from '../../support/dev-pdp-suite.js';

const policy = {
  agents: ['support-ai'],
  latches: [
    { id: 'no-transfers', stage: 'action', tool: 'bank_*', verdict: 'BLOCK', reason: 'no money transfers' },
    {
      id: 'bulk',
      stage: 'action',
      tool: 'print_labels',
      when: { 'args.copies': { gt: 5 } },
      verdict: 'BLOCK',
      reason: 'at most 5',
    },
  ],
};
const dev = useDevPdp({ policy }, { session: 'sess_handler', timeoutMs: 1000, retries: 0 });

/** A stateless 2.x server; `ran` records each tool body that ran. */
function handlerOf(ran: string[]): McpHttpHandlerLike {
  return createMcpHandler(() => {
    const server = new McpServer({ name: 'payments', version: '2.0.0' });
    server.registerTool('lookup_order', { inputSchema: z.object({ id: z.string() }) }, async () => {
      ran.push('lookup_order');
      return { content: [{ type: 'text', text: 'order' }] };
    });
    server.registerTool('bank_transfer', { inputSchema: z.object({ to: z.string() }) }, async () => {
      ran.push('bank_transfer');
      return { content: [{ type: 'text', text: 'sent' }] };
    });
    // A default the client need not send: 10 copies, which the policy blocks.
    server.registerTool(
      'print_labels',
      { inputSchema: z.object({ order: z.string(), copies: z.number().default(10) }) },
      async (args) => {
        ran.push(`print_labels:${args.copies}`);
        return { content: [{ type: 'text', text: 'printed' }] };
      },
    );
    return server;
  });
}

/** The headers a 2025-era client sends (the SDK's stateless fallback serves it). */
const HEADERS = {
  accept: 'application/json, text/event-stream',
  'content-type': 'application/json',
  'mcp-protocol-version': '2025-11-25',
};
const callOf = (id: number, name: string, args: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args, _meta: { [SESSION_META_KEY]: 'sess_req' } },
});
const post = (body?: unknown) =>
  new Request('http://127.0.0.1/mcp', {
    method: 'POST',
    headers: HEADERS,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

describe('guardMcpServer(pep, createMcpHandler(...)): the body decided is the body run', () => {
  it('a JSON-RPC batch holding a tools/call is refused, observed; none of its tools runs', async () => {
    const ran: string[] = [];
    const events: DecisionEvent[] = [];
    const pep = dev.clients.client({ onDecision: (e: DecisionEvent) => events.push(e) });
    const handler = guardMcpServer(pep, handlerOf(ran));
    const batch = [callOf(1, 'bank_transfer', { to: 'x' }), callOf(2, 'lookup_order', { id: 'o1' })];
    const res = await handler.fetch(post(batch));
    const body = (await res.json()) as { error?: { code?: number } };
    expect(body.error?.code).toBe(-32600);
    expect(ran).toEqual([]);
    expect(events.map((e) => [e.tool, e.decision.verdict, e.decision.synthesized?.code])).toEqual([
      ['bank_transfer', 'BLOCK', 'invalid_request'],
      ['lookup_order', 'BLOCK', 'invalid_request'],
    ]);
  });

  it('a JSON-RPC batch without a tools request passes to the server as it is', async () => {
    const handler = guardMcpServer(dev.clients.client(), handlerOf([]));
    const batch = [{ jsonrpc: '2.0', id: 1, method: 'ping' }];
    const res = await handler.fetch(post(batch));
    expect(res.status).toBe(200);
  });

  it.each([
    ['with no body', undefined],
    ['beside a body that says otherwise', callOf(1, 'lookup_order', { id: 'o1' })],
  ])('a parsedBody %s is the request decided: a blocked call given as parsedBody never runs', async (_, body) => {
    const ran: string[] = [];
    const handler = guardMcpServer(dev.clients.client(), handlerOf(ran));
    const res = await handler.fetch(post(body), { parsedBody: callOf(1, 'bank_transfer', { to: 'x' }) } as never);
    expect(ran).toEqual([]);
    const text = await res.text();
    expect(text).toContain('"isError":true');
  });

  it('an allowed call given as parsedBody runs once, as decided', async () => {
    const ran: string[] = [];
    const handler = guardMcpServer(dev.clients.client(), handlerOf(ran));
    const res = await handler.fetch(post(), { parsedBody: callOf(1, 'lookup_order', { id: 'o1' }) } as never);
    expect(await res.text()).toContain('order');
    expect(ran).toEqual(['lookup_order']);
  });

  it('a tools/call without an id (a notification) never runs a tool', async () => {
    const ran: string[] = [];
    const handler = guardMcpServer(dev.clients.client(), handlerOf(ran));
    const { id: _id, ...notification } = callOf(1, 'bank_transfer', { to: 'x' });
    await handler.fetch(post(notification));
    expect(ran).toEqual([]);
  });

  it('with a verifier: a permit for args the server would fill a default into is refused (it binds the args sent), none claimed', async () => {
    const ran: string[] = [];
    const events: DecisionEvent[] = [];
    const verifier = createPermitVerifier({
      keys: dev.pdp.jwksUrl,
      issuer: dev.pdp.issuer,
      audience: dev.pdp.audience,
    });
    const pep = dev.clients.client({ onDecision: (e: DecisionEvent) => events.push(e) });
    const handler = guardMcpServer(pep, handlerOf(ran), { verifier });
    // The PDP allows { order } (no copies to block on); the server would run it with copies: 10.
    const decision = await dev.clients.client().authorizeAction('print_labels', { order: 'o1' });
    expect(decision.verdict).toBe('ALLOW');
    const call = callOf(1, 'print_labels', { order: 'o1' });
    call.params._meta = { ...call.params._meta, [PERMIT_META_KEY]: decision.permitId as string } as never;
    const res = await handler.fetch(post(call));
    expect(await res.text()).toContain('"isError":true');
    expect(ran).toEqual([]);
    expect(events.map((e) => [e.tool, e.decision.synthesized?.code])).toEqual([['print_labels', 'permit_invalid']]);
  });

  it('with a verifier: a permit for the args the server runs as they are is accepted', async () => {
    const ran: string[] = [];
    const verifier = createPermitVerifier({
      keys: dev.pdp.jwksUrl,
      issuer: dev.pdp.issuer,
      audience: dev.pdp.audience,
    });
    const handler = guardMcpServer(dev.clients.client(), handlerOf(ran), { verifier });
    const decision = await dev.clients.client().authorizeAction('print_labels', { order: 'o1', copies: 2 });
    const call = callOf(1, 'print_labels', { order: 'o1', copies: 2 });
    call.params._meta = { ...call.params._meta, [PERMIT_META_KEY]: decision.permitId as string } as never;
    const res = await handler.fetch(post(call));
    expect(await res.text()).toContain('printed');
    expect(ran).toEqual(['print_labels:2']);
  });
});
