/**
 * guardMcpServer on the Web-standard handler of `@modelcontextprotocol/server` 2.x (`createMcpHandler`):
 * a new handler whose `fetch` decides each tools/call before the server sees it, on the args the tool will
 * run with, in the request's policy session; tools/list answers what the caller may see, marked
 * `cacheScope: "private"`; nothing of the SDK's handler is changed. Driven by the SDK's own 2.x client over
 * its Streamable HTTP transport (the handler's `fetch` as the transport's fetch), against the dev PDP.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  guardMcpClient,
  guardMcpServer,
  type McpHttpHandlerLike,
  SESSION_META_KEY,
} from '../../../src/adapters/mcp.js';
import type { DecisionEvent } from '../../../src/index.js';
import { useDevPdp } from '../../support/dev-pdp-suite.js';
import { REFUND_REVIEW } from '../../support/policies.js';

const policy = {
  agents: ['support-ai'],
  latches: [
    { id: 'no-transfers', stage: 'action', tool: 'bank_*', verdict: 'BLOCK', reason: 'no money transfers' },
    REFUND_REVIEW,
    {
      id: 'bulk-print',
      stage: 'action',
      tool: 'print_labels',
      when: { 'args.copies': { gt: 5 } },
      verdict: 'BLOCK',
      reason: 'at most 5 copies',
    },
  ],
};
const dev = useDevPdp({ policy }, { session: 'sess_handler', timeoutMs: 1000, retries: 0 });

/** A stateless 2.x server: one McpServer per request; `ran` records each body that ran. */
function handlerOf(ran: unknown[][]): McpHttpHandlerLike {
  return createMcpHandler(() => {
    const server = new McpServer({ name: 'payments', version: '2.0.0' });
    server.registerTool('lookup_order', { inputSchema: z.object({ id: z.string() }) }, async (args) => {
      ran.push(['lookup_order', args]);
      return { content: [{ type: 'text', text: `order ${args.id}` }] };
    });
    server.registerTool('bank_transfer', { inputSchema: z.object({ to: z.string() }) }, async (args) => {
      ran.push(['bank_transfer', args]);
      return { content: [{ type: 'text', text: 'sent' }] };
    });
    server.registerTool(
      'refund_payment',
      { inputSchema: z.object({ orderId: z.string(), amount: z.number() }) },
      async (args) => {
        ran.push(['refund_payment', args]);
        return { content: [{ type: 'text', text: `refunded ${args.amount}` }] };
      },
    );
    // A default the client never sends: the guard decides on what the tool gets (10 copies: blocked).
    server.registerTool(
      'print_labels',
      { inputSchema: z.object({ order: z.string(), copies: z.number().default(10) }) },
      async (args) => {
        ran.push(['print_labels', args]);
        return { content: [{ type: 'text', text: 'printed' }] };
      },
    );
    return server;
  });
}

async function clientOf(
  handler: McpHttpHandlerLike,
  guard?: (t: StreamableHTTPClientTransport) => Parameters<Client['connect']>[0],
  revision?: string,
): Promise<Client> {
  const options = revision ? { versionNegotiation: { mode: { pin: revision } } } : {};
  const client = new Client({ name: 'agent', version: '1.0.0' }, options);
  const fetch = (input: string | URL | Request, init?: RequestInit) => handler.fetch(new Request(input, init));
  const transport = new StreamableHTTPClientTransport(new URL('http://127.0.0.1/mcp'), { fetch });
  await client.connect(guard ? guard(transport) : transport);
  return client;
}

const actionSteps = (before: number) =>
  dev.pdp
    .evidence()
    .slice(before)
    .filter((r) => r.stage === 'action' && r.visibility === undefined)
    .map((r) => [r.tool, r.session, r.verdict]);

describe('guardMcpServer on a createMcpHandler handler (@modelcontextprotocol/server 2.x)', () => {
  it('a 2.x McpServer given directly is a TypeError (never guarded silently in part): guard its createMcpHandler', () => {
    expect(() => guardMcpServer(dev.clients.client(), new McpServer({ name: 's', version: '2' }) as never)).toThrow(
      TypeError,
    );
  });

  it('returns a new handler and changes nothing of the one given (its properties are the same before and after)', () => {
    const handler = handlerOf([]);
    const before = Object.entries(Object.getOwnPropertyDescriptors(handler));
    const guarded = guardMcpServer(dev.clients.client(), handler);
    expect(guarded).not.toBe(handler);
    expect(Object.entries(Object.getOwnPropertyDescriptors(handler))).toEqual(before);
    expect(typeof guarded.fetch).toBe('function');
  });

  it("decides each tools/call in the request's session: an allowed call runs once, a blocked one never reaches the server", async () => {
    const ran: unknown[][] = [];
    const handler = guardMcpServer(dev.clients.client(), handlerOf(ran));
    const client = await clientOf(handler);
    const before = dev.pdp.evidence().length;
    const meta = { [SESSION_META_KEY]: 'sess_req' };
    const ok = await client.callTool({ name: 'lookup_order', arguments: { id: 'o1' }, _meta: meta });
    const no = await client.callTool({ name: 'bank_transfer', arguments: { to: 'x' }, _meta: meta });
    expect(ok.isError ?? false).toBe(false);
    expect(no).toEqual({
      content: [{ type: 'text', text: "ERROR: Tool 'bank_transfer' denied by policy: no money transfers" }],
      isError: true,
    });
    expect(ran).toEqual([['lookup_order', { id: 'o1' }]]);
    expect(actionSteps(before)).toEqual([
      ['lookup_order', 'sess_req', 'ALLOW'],
      ['bank_transfer', 'sess_req', 'BLOCK'],
    ]);
    await client.close();
  });

  it("decides on the args the tool will run with: the schema's default the client did not send is decided", async () => {
    const ran: unknown[][] = [];
    const client = await clientOf(guardMcpServer(dev.clients.client(), handlerOf(ran)));
    const before = dev.pdp.evidence().length;
    const r = await client.callTool({
      name: 'print_labels',
      arguments: { order: 'o1' },
      _meta: { [SESSION_META_KEY]: 'sess_req' },
    });
    expect(r.isError).toBe(true);
    expect(ran).toEqual([]);
    expect(actionSteps(before)).toEqual([['print_labels', 'sess_req', 'BLOCK']]);
    await client.close();
  });

  it('a tools/call without a session is refused (invalid_request) and observed by onDecision; the tool never runs', async () => {
    const ran: unknown[][] = [];
    const events: DecisionEvent[] = [];
    const pep = dev.clients.client({ onDecision: (e: DecisionEvent) => events.push(e) });
    const client = await clientOf(guardMcpServer(pep, handlerOf(ran)));
    const r = await client.callTool({ name: 'lookup_order', arguments: { id: 'o1' } });
    expect(r.isError).toBe(true);
    expect(ran).toEqual([]);
    expect(events.map((e) => [e.tool, e.decision.verdict, e.decision.synthesized?.code])).toEqual([
      ['lookup_order', 'BLOCK', 'invalid_request'],
    ]);
    await client.close();
  });

  it('a refusal for a missing session says how to send one (the _meta key, or the session option), to the caller and in the decision, naming no args', async () => {
    const ran: unknown[][] = [];
    const events: DecisionEvent[] = [];
    const pep = dev.clients.client({ onDecision: (e: DecisionEvent) => events.push(e) });
    // A bare 2.x client: no agent-pep on the client, so nothing puts a session in _meta.
    const client = await clientOf(guardMcpServer(pep, handlerOf(ran)));
    const r = await client.callTool({ name: 'lookup_order', arguments: { id: 'order-secret-4711' } });
    await client.close();
    const shown = JSON.stringify(r.content);
    const decided = events[0]?.decision;
    expect([r.isError, ran, events.length, decided?.synthesized?.code]).toEqual([true, [], 1, 'invalid_request']);
    for (const text of [shown, decided?.synthesized?.message ?? '']) {
      expect(text).toContain("_meta['agent-pep/session']");
      expect(text).toContain('guardMcpClient');
      expect(text).toContain('session: (request, httpRequest) => string');
      expect(text).not.toContain('order-secret-4711');
    }
  });

  it("the server's session function names the session (from the HTTP request it is given)", async () => {
    const ran: unknown[][] = [];
    const handler = guardMcpServer(dev.clients.client(), handlerOf(ran), {
      session: (_request, http) => ((http as Request).headers.get('x-tenant') === null ? '' : 'sess_tenant'),
    });
    const headed: McpHttpHandlerLike = {
      fetch: (req: Request) => {
        const headers = new Headers(req.headers);
        headers.set('x-tenant', 't1');
        return handler.fetch(new Request(req, { headers }));
      },
    };
    const client = await clientOf(headed);
    const before = dev.pdp.evidence().length;
    await client.callTool({ name: 'lookup_order', arguments: { id: 'o2' } });
    expect(actionSteps(before)).toEqual([['lookup_order', 'sess_tenant', 'ALLOW']]);
    await client.close();
  });

  it('tools/list answers what the caller may see, marked cacheScope "private"', async () => {
    const handler = guardMcpServer(dev.clients.client(), handlerOf([]));
    const response = await handler.fetch(
      new Request('http://127.0.0.1/mcp', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 7,
          method: 'tools/list',
          params: { _meta: { [SESSION_META_KEY]: 'sess_list' } },
        }),
      }),
    );
    const body = (await response.json()) as { id: number; result: { tools: { name: string }[]; cacheScope?: string } };
    expect(body.id).toBe(7);
    expect(body.result.tools.map((t) => t.name)).toEqual(['lookup_order', 'refund_payment', 'print_labels']);
    expect(body.result.cacheScope).toBe('private');
  });

  it('at revision 2026-07-28 (stateless, _meta and mirrored headers on every request): decided on the args that run, blocked calls never reach the server', async () => {
    const ran: unknown[][] = [];
    const client = await clientOf(guardMcpServer(dev.clients.client(), handlerOf(ran)), undefined, '2026-07-28');
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const before = dev.pdp.evidence().length;
    const meta = { [SESSION_META_KEY]: 'sess_modern' };
    const ok = await client.callTool({ name: 'lookup_order', arguments: { id: 'o7' }, _meta: meta });
    const printed = await client.callTool({ name: 'print_labels', arguments: { order: 'o7' }, _meta: meta });
    expect([ok.isError ?? false, printed.isError]).toEqual([false, true]);
    expect(ran).toEqual([['lookup_order', { id: 'o7' }]]);
    expect(actionSteps(before)).toEqual([
      ['lookup_order', 'sess_modern', 'ALLOW'],
      ['print_labels', 'sess_modern', 'BLOCK'],
    ]);
    await client.close();
  });

  it('a guarded 2.x client and a guarded handler decide in the application session, each once', async () => {
    const ran: unknown[][] = [];
    const client = await clientOf(guardMcpServer(dev.clients.client(), handlerOf(ran)), (t) =>
      guardMcpClient(dev.clients.client().withSession('sess_agent'), t),
    );
    const before = dev.pdp.evidence().length;
    const ok = await client.callTool({ name: 'lookup_order', arguments: { id: 'o3' } });
    expect(ok.isError ?? false).toBe(false);
    expect(ran).toEqual([['lookup_order', { id: 'o3' }]]);
    expect(actionSteps(before)).toEqual([
      ['lookup_order', 'sess_agent', 'ALLOW'],
      ['lookup_order', 'sess_agent', 'ALLOW'],
    ]);
    await client.close();
  });

  describe('ESCALATE at revision 2026-07-28: an InputRequiredResult with a signed requestState', () => {
    /** A 2.x client pinned to 2026-07-28 whose human (the elicitation handler) runs `onAsk` and accepts. */
    async function modern(handler: McpHttpHandlerLike, onAsk: () => void) {
      const client = new Client(
        { name: 'agent', version: '1.0.0' },
        { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: { elicitation: {} } },
      );
      client.setRequestHandler('elicitation/create', async () => {
        onAsk();
        return { action: 'accept', content: {} };
      });
      const fetch = (input: string | URL | Request, init?: RequestInit) => handler.fetch(new Request(input, init));
      await client.connect(new StreamableHTTPClientTransport(new URL('http://127.0.0.1/mcp'), { fetch }));
      return client;
    }
    const refund = {
      name: 'refund_payment',
      arguments: { orderId: 'o1', amount: 900 },
      _meta: { [SESSION_META_KEY]: 'sess_esc' },
    };

    it('the retried call is decided by the PDP again: approved there, it runs once; the approval in the host alone runs nothing', async () => {
      const ran: unknown[][] = [];
      const events: DecisionEvent[] = [];
      const pep = dev.clients.client({ onDecision: (e: DecisionEvent) => events.push(e) });
      const handler = guardMcpServer(pep, handlerOf(ran));
      // The human accepts in the host, but nobody approved at the PDP: the retry is held again.
      const unapproved = await modern(handler, () => undefined);
      await expect(unapproved.callTool(refund)).rejects.toThrow();
      expect(ran).toEqual([]);
      await unapproved.close();
      // Approved at the PDP while the human is asked: the retry gets the one-time ALLOW and runs once.
      const approved = await modern(handler, () => {
        const id = events.findLast((e) => e.decision.verdict === 'ESCALATE')?.decision.escalationId;
        dev.pdp.resolveEscalation(id as string, 'approve');
      });
      const r = await approved.callTool(refund);
      expect(r.isError ?? false).toBe(false);
      expect(ran).toEqual([['refund_payment', { orderId: 'o1', amount: 900 }]]);
      await approved.close();
    });

    it('a tampered, moved (other args or session) or expired requestState is the SDK invalid-params error; nothing runs', async () => {
      const ran: unknown[][] = [];
      const events: DecisionEvent[] = [];
      const handler = guardMcpServer(
        dev.clients.client({ onDecision: (e: DecisionEvent) => events.push(e) }),
        handlerOf(ran),
        {
          requestStateTtlMs: 60_000,
        },
      );
      // Capture the first (held) request and its InputRequiredResult, to replay variants of the retry.
      let first: { headers: Headers; body: Record<string, unknown> } | undefined;
      let state: string | undefined;
      const spy: McpHttpHandlerLike = {
        fetch: async (req: Request) => {
          const body = JSON.parse(await req.clone().text()) as Record<string, unknown>;
          const res = await handler.fetch(req);
          const text = await res.clone().text();
          if (body.method === 'tools/call' && state === undefined && text.includes('requestState')) {
            first = { headers: req.headers, body };
            state = (JSON.parse(text) as { result: { requestState: string } }).result.requestState;
          }
          return res;
        },
      };
      const client = await modern(spy, () => undefined);
      await expect(client.callTool(refund)).rejects.toThrow();
      await client.close();
      expect(typeof state).toBe('string');
      const retry = async (params: Record<string, unknown>) => {
        const body = { ...first?.body, id: 99, params: { ...(first?.body.params as object), ...params } };
        const res = await handler.fetch(
          new Request('http://127.0.0.1/mcp', {
            method: 'POST',
            headers: first?.headers ?? {},
            body: JSON.stringify(body),
          }),
        );
        return (await res.json()) as { error?: { code: number; data?: { reason?: string } } };
      };
      const s = state as string;
      const tampered = `${s.slice(0, -2)}${s.endsWith('A') ? 'B' : 'A'}A`;
      const params = first?.body.params as { arguments: Record<string, unknown>; _meta: Record<string, unknown> };
      const answers = [
        await retry({ requestState: tampered, inputResponses: {} }),
        await retry({ requestState: s, inputResponses: {}, arguments: { ...params.arguments, amount: 901 } }),
        await retry({
          requestState: s,
          inputResponses: {},
          _meta: { ...params._meta, [SESSION_META_KEY]: 'sess_other' },
        }),
      ];
      // The same state, for the same call, once its 60 s are over.
      const realNow = Date.now();
      const clock = vi.spyOn(Date, 'now').mockReturnValue(realNow + 61_000);
      try {
        answers.push(await retry({ requestState: s, inputResponses: {} }));
      } finally {
        clock.mockRestore();
      }
      for (const a of answers) {
        expect([a.error?.code, a.error?.data?.reason]).toEqual([-32602, 'invalid_request_state']);
      }
      expect(ran).toEqual([]);
      const refusals = events.filter((e) => e.decision.synthesized?.code === 'invalid_request');
      expect(refusals).toHaveLength(4);
    });
  });
});
