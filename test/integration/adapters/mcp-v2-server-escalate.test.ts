/**
 * ESCALATE on a 2.x `McpServer` (and a low-level `Server`) guarded directly (CONTRACT section 16): to a
 * client at revision 2026-07-28 that declared elicitation, a held call is answered with an
 * `InputRequiredResult` whose `requestState` the guard signs (bound to the tool, the args hash, the session
 * and the escalation id); the client's retry echoes it and is decided by the PDP again: held until a
 * reviewer approves at the PDP, then run exactly once. A tampered state is the SDK's invalid-params error,
 * observed. A client without elicitation, or at 2025-11-25, gets the hold text. The servers are served by
 * `createMcpHandler` (the guard on the server inside its factory, not on the handler), reached by a bare
 * 2.x `Client` over the SDK's Streamable HTTP transport.
 */
import { Client, type ClientOptions, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createMcpHandler, McpServer, Server } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { guardMcpServer } from '../../../src/adapters/mcp.js';
import type { DecisionEvent } from '../../../src/index.js';
import { useDevPdp } from '../../support/dev-pdp-suite.js';
import { REFUND_REVIEW } from '../../support/policies.js';

const policy = { agents: ['support-ai'], latches: [REFUND_REVIEW] };
const dev = useDevPdp({ policy }, { session: 'sess_server', timeoutMs: 1000, retries: 0 });

type Kind = 'McpServer' | 'Server';

/** A handler whose every server is guarded directly; `ran` records each refund that ran. */
function served(kind: Kind, alter?: (body: Record<string, unknown>) => void) {
  const ran: unknown[] = [];
  const events: DecisionEvent[] = [];
  const pep = dev.clients.client({ onDecision: (e: DecisionEvent) => events.push(e) });
  const key = new Uint8Array(32).fill(7);
  const handler = createMcpHandler(() => {
    if (kind === 'McpServer') {
      const server = new McpServer({ name: 'payments', version: '2.0.0' });
      const refund = server.registerTool(
        'refund_payment',
        { inputSchema: z.object({ orderId: z.string(), amount: z.number() }) },
        async (args) => {
          ran.push(args);
          return { content: [{ type: 'text', text: `refunded ${args.amount}` }] };
        },
      );
      guardMcpServer(pep, server, { tools: { refund_payment: refund }, requestStateKey: key });
      return server;
    }
    const server = new Server({ name: 'payments', version: '2.0.0' }, { capabilities: { tools: {} } });
    guardMcpServer(pep, server, {
      requestStateKey: key,
      toolHandlers: {
        call: (request) => {
          // The guard's state (and the approval answered with it) never reaches the application's handler.
          if ('requestState' in request.params || 'inputResponses' in request.params) ran.push('state leaked');
          ran.push(request.params.arguments);
          return { content: [{ type: 'text', text: 'refunded' }] };
        },
        list: () => ({ tools: [{ name: 'refund_payment', inputSchema: { type: 'object' } }] }),
      },
    });
    return server;
  });
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    let request = new Request(input, init);
    if (alter !== undefined && request.method === 'POST') {
      const body = JSON.parse(await request.clone().text()) as Record<string, unknown>;
      if (body.method === 'tools/call') {
        alter(body);
        request = new Request(request, { body: JSON.stringify(body) });
      }
    }
    return handler.fetch(request);
  };
  const escalationId = () => events.findLast((e) => e.decision.verdict === 'ESCALATE')?.decision.escalationId;
  return { ran, events, fetch, escalationId };
}

async function clientOf(
  fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>,
  options?: ClientOptions,
) {
  const client = new Client({ name: 'agent', version: '1.0.0' }, options);
  await client.connect(new StreamableHTTPClientTransport(new URL('http://127.0.0.1/mcp'), { fetch }));
  return client;
}

const call = {
  name: 'refund_payment',
  arguments: { orderId: 'o1', amount: 900 },
  _meta: { 'agent-pep/session': 'sess_direct' },
};
const MODERN: ClientOptions = { versionNegotiation: { mode: 'auto' }, capabilities: { elicitation: {} } };
const verdicts = (events: DecisionEvent[]) => events.map((e) => [e.decision.verdict, e.decision.synthesized?.code]);

describe('ESCALATE on a 2.x server guarded directly: an InputRequiredResult with a signed requestState', () => {
  for (const kind of ['McpServer', 'Server'] as const) {
    it(`${kind}: held, asked, retried with the state and decided again; runs once after the approval`, async () => {
      const s = served(kind);
      const client = await clientOf(s.fetch, MODERN);
      let asked = 0;
      client.setRequestHandler('elicitation/create', async () => {
        asked++;
        if (asked === 2) await dev.pdp.resolveEscalation(s.escalationId() as string, 'approve');
        return { action: 'accept', content: {} };
      });
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      const r = await client.callTool(call);
      await client.close();
      expect(r.isError).toBeFalsy();
      expect(s.ran).toHaveLength(1);
      expect(asked).toBe(2);
      expect(verdicts(s.events)).toEqual([
        ['ESCALATE', undefined],
        ['ESCALATE', undefined],
        ['ALLOW', undefined],
      ]);
      expect(new Set(s.events.map((e) => e.decision.escalationId).filter(Boolean)).size).toBe(1);
    });

    it(`${kind}: a tampered requestState is the SDK's invalid-params error, observed; nothing runs`, async () => {
      let legs = 0;
      const s = served(kind, (body) => {
        const params = body.params as Record<string, unknown>;
        if (typeof params.requestState === 'string' && legs++ === 0) {
          const [payload, sig] = params.requestState.split('.');
          const claims = JSON.parse(Buffer.from(payload as string, 'base64url').toString('utf8'));
          claims.argsHash = 'x'.repeat(43);
          params.requestState = `${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${sig}`;
        }
      });
      const client = await clientOf(s.fetch, MODERN);
      client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: {} }));
      let err: unknown;
      try {
        await client.callTool(call);
      } catch (e) {
        err = e;
      }
      await client.close();
      expect(err).toBeInstanceOf(ProtocolError);
      expect((err as ProtocolError).code).toBe(-32602);
      expect(s.ran).toEqual([]);
      expect(verdicts(s.events)).toEqual([
        ['ESCALATE', undefined],
        ['BLOCK', 'invalid_request'],
      ]);
    });

    it(`${kind}: a client that declared no elicitation gets the hold text, and nothing runs`, async () => {
      const s = served(kind);
      const client = await clientOf(s.fetch, { versionNegotiation: { mode: 'auto' } });
      const r = await client.callTool(call);
      await client.close();
      expect(r.isError).toBe(true);
      expect(JSON.stringify(r.content)).toContain('held for human review');
      expect(s.ran).toEqual([]);
    });
  }
});
