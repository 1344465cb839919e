import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport as InMemoryV1 } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer as McpServerV1 } from '@modelcontextprotocol/sdk/server/mcp.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { guardMcpServer, SESSION_META_KEY } from '../../../src/adapters/mcp.js';
import { useDevPdp } from '../../support/dev-pdp-suite.js';

const policy = { agents: ['support-ai'], latches: [] };
const dev = useDevPdp({ policy }, { session: 'sess_record' });
const _meta = { [SESSION_META_KEY]: 'sess_app' };

async function setup(guard: boolean) {
  const server = new McpServerV1({ name: 'orders', version: '1' }, { capabilities: { tools: {} }, maxToolInputElements: 5 });
  const ran: unknown[] = [];
  const sum = server.registerTool('sum', { inputSchema: { xs: z.array(z.number()) } }, async (args) => {
    ran.push(args);
    return { content: [{ type: 'text' as const, text: 'ok' }] };
  });
  if (guard) guardMcpServer(dev.clients.client(), server, { tools: { sum } });
  const [c, s] = InMemoryV1.createLinkedPair();
  await server.connect(s);
  const client = new ClientV1({ name: 'agent', version: '1' });
  await client.connect(c);
  return { client, ran };
}

describe('probe', () => {
  it.each([false, true])('maxToolInputElements guarded=%s', async (guard) => {
    const { client, ran } = await setup(guard);
    const r = await client.callTool({ name: 'sum', arguments: { xs: Array.from({ length: 50 }, (_, i) => i) }, _meta });
    expect(r.isError).toBe(true);
    expect(ran).toEqual([]);
  });
});
