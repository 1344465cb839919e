/**
 * The guarded `McpServer` route serves `tools/call` itself, so the SDK's own `maxToolInputElements` check
 * (private to the SDK) does not run there: the guard's `maxToolInputElements` option keeps the same ceiling,
 * on 1.x and 2.x, before the schema parse, the action hash and the PDP.
 */
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport as InMemoryV1 } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer as McpServerV1 } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InMemoryTransport as InMemoryV2, McpServer as McpServerV2 } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { guardMcpServer, SESSION_META_KEY } from '../../../src/adapters/mcp.js';
import type { DecisionEvent } from '../../../src/index.js';
import { useDevPdp } from '../../support/dev-pdp-suite.js';

const dev = useDevPdp({ policy: { agents: ['support-ai'], latches: [] } }, { session: 'sess_elements' });
const _meta = { [SESSION_META_KEY]: 'sess_app' };

type Line = 'v1' | 'v2';

async function serve(line: Line, guard: { max?: number } | undefined, ran: unknown[], events: DecisionEvent[]) {
  const options = { capabilities: { tools: {} }, ...(guard === undefined ? { maxToolInputElements: 5 } : {}) };
  const body = async (args: unknown) => {
    ran.push(args);
    return { content: [{ type: 'text' as const, text: 'ok' }] };
  };
  if (line === 'v1') {
    const server = new McpServerV1({ name: 'orders', version: '1' }, options);
    const sum = server.registerTool('sum', { inputSchema: { xs: z.array(z.number()) } }, body);
    if (guard !== undefined) {
      const pep = dev.clients.client({ onDecision: (e: DecisionEvent) => events.push(e) });
      guardMcpServer(pep, server, { tools: { sum }, maxToolInputElements: guard.max });
    }
    const [c, s] = InMemoryV1.createLinkedPair();
    await server.connect(s);
    const client = new ClientV1({ name: 'agent', version: '1' });
    await client.connect(c);
    return client;
  }
  const server = new McpServerV2({ name: 'orders', version: '1' }, options);
  const sum = server.registerTool('sum', { inputSchema: z.object({ xs: z.array(z.number()) }) }, body);
  if (guard !== undefined) {
    const pep = dev.clients.client({ onDecision: (e: DecisionEvent) => events.push(e) });
    guardMcpServer(pep, server, { tools: { sum }, maxToolInputElements: guard.max });
  }
  const [c, s] = InMemoryV2.createLinkedPair();
  await server.connect(s);
  const client = new ClientV2({ name: 'agent', version: '1' });
  await client.connect(c);
  return client;
}

const xs = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('guardMcpServer keeps the SDK ceiling on tool input elements (maxToolInputElements)', () => {
  for (const line of ['v1', 'v2'] as const) {
    it(`${line}: args over the ceiling are refused before any decision, observed, and the tool never runs (as bare)`, async () => {
      for (const guard of [undefined, { max: 5 }]) {
        const ran: unknown[] = [];
        const events: DecisionEvent[] = [];
        const client = await serve(line, guard, ran, events);
        const before = dev.pdp.evidence().length;
        const r = await client.callTool({ name: 'sum', arguments: { xs: xs(50) }, _meta });
        expect(r.isError).toBe(true);
        expect(ran).toEqual([]);
        expect(dev.pdp.evidence().length).toBe(before);
        if (guard !== undefined) {
          expect(events.map((e) => [e.tool, e.decision.verdict, e.decision.synthesized?.code])).toEqual([
            ['sum', 'BLOCK', 'invalid_request'],
          ]);
        }
      }
    });

    it(`${line}: args within the ceiling are decided and run`, async () => {
      const ran: unknown[] = [];
      const client = await serve(line, { max: 5 }, ran, []);
      const r = await client.callTool({ name: 'sum', arguments: { xs: xs(3) }, _meta });
      expect(r.isError).toBeFalsy();
      expect(ran).toEqual([{ xs: [0, 1, 2] }]);
    });
  }

  it('a bad ceiling is a TypeError naming maxToolInputElements', () => {
    for (const bad of [0, -1, Number.NaN, '5', 1.5]) {
      const server = new McpServerV1({ name: 'o', version: '1' }, { capabilities: { tools: {} } });
      let err: unknown;
      try {
        guardMcpServer(dev.clients.client(), server, { tools: {}, maxToolInputElements: bad as never });
      } catch (e) {
        err = e;
      }
      expect((err as { option?: string }).option).toBe('maxToolInputElements');
    }
  });
});
