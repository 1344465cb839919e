/**
 * A permit or approval names the pin it was decided against (CONTRACT section 16): a pinned guarded MCP
 * client sends the pin of the tool it calls in the request (`toolPin`; AuthZEN `context.toolPin`), the dev
 * PDP signs it into the permit (`tool_pin`), and an escalation's approval is bound to it (a call against
 * another definition does not get the approved one-time ALLOW), its review record naming it.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { guardMcpClient, PERMIT_META_KEY } from '../../../src/adapters/mcp.js';
import { useDevPdp } from '../../support/dev-pdp-suite.js';

const policy = {
  agents: ['support-ai'],
  latches: [
    { id: 'review-wires', stage: 'action', tool: 'wire_money', verdict: 'ESCALATE', reason: 'wires need a human' },
  ],
};
const dev = useDevPdp({ policy }, { session: 'sess_pin' });

const PIN_A = 'A'.repeat(43);
const PIN_B = 'B'.repeat(43);

/** The claims of a permit (its payload, decoded without trust: the test reads what the PDP signed). */
function claimsOf(permit: unknown): Record<string, unknown> {
  const payload = String(permit).split('.')[1] ?? '';
  return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
}

async function pinnedClient(pin: boolean) {
  const metas: unknown[] = [];
  const server = new McpServer({ name: 'orders', version: '1.0.0' });
  server.registerTool(
    'lookup_order',
    { title: 'Lookup', description: 'Finds an order', inputSchema: { id: z.string() } },
    async (_args, extra) => {
      metas.push(extra._meta);
      return { content: [{ type: 'text', text: 'found' }] };
    },
  );
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(b);
  const client = new Client({ name: 'agent', version: '1' });
  const guarded = guardMcpClient(dev.clients.client(), a, pin ? { pin: true } : {});
  await client.connect(guarded);
  return { client, guarded, metas };
}

describe('a permit names the pin it was decided against', () => {
  it('a pinned client sends the tool pin; the permit the server receives carries it as tool_pin', async () => {
    const { client, guarded, metas } = await pinnedClient(true);
    await client.listTools();
    const r = await client.callTool({ name: 'lookup_order', arguments: { id: 'o1' } });
    expect(r.isError).toBeFalsy();
    const permit = (metas[0] as Record<string, unknown>)[PERMIT_META_KEY];
    const pin = guarded.pepPins()?.tools.lookup_order;
    expect(pin).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(claimsOf(permit).tool_pin).toBe(pin);
  });

  it('a client without pins names none: the permit has no tool_pin', async () => {
    const { client, metas } = await pinnedClient(false);
    await client.callTool({ name: 'lookup_order', arguments: { id: 'o1' } });
    expect(claimsOf((metas[0] as Record<string, unknown>)[PERMIT_META_KEY])).not.toHaveProperty('tool_pin');
  });

  it('over AuthZEN too (context.toolPin)', async () => {
    const pep = dev.clients.client({ protocol: 'authzen' });
    const d = await pep.authorizeAction('lookup_order', { id: 'o' }, { toolPin: PIN_A });
    expect(d.verdict).toBe('ALLOW');
    expect(claimsOf(d.permitId).tool_pin).toBe(PIN_A);
  });

  it('a toolPin that is not a SHA-256 in base64url is a synthesized BLOCK invalid_request', async () => {
    const d = await dev.clients.client().authorizeAction('lookup_order', { id: 'o' }, { toolPin: 'short' });
    expect([d.verdict, d.synthesized?.code]).toEqual(['BLOCK', 'invalid_request']);
  });
});

describe('an approval is bound to the pin it was decided against', () => {
  it('approved for one definition, a call against another is not released; the same one is, with the pin in its permit and review record', async () => {
    const pep = dev.clients.client({ session: 'sess_pin_review' });
    const args = { to: 'acct_1', amount: 10 };
    const held = await pep.authorizeAction('wire_money', args, { toolPin: PIN_A });
    expect(held.verdict).toBe('ESCALATE');
    const id = held.escalationId as string;
    await dev.pdp.resolveEscalation(id, 'approve');
    const other = await pep.authorizeAction('wire_money', args, { toolPin: PIN_B });
    expect(other.verdict).toBe('ESCALATE');
    expect(other.escalationId).not.toBe(id);
    const same = await pep.authorizeAction('wire_money', args, { toolPin: PIN_A });
    expect(same.verdict).toBe('ALLOW');
    expect(claimsOf(same.permitId).tool_pin).toBe(PIN_A);
    const review = dev.pdp.evidence().find((e) => e.stage === 'review' && e.escalationId === id);
    expect(review).toMatchObject({ outcome: 'approve', toolPin: PIN_A });
  });
});
