/**
 * A server's JSON-RPC error answer to a guarded call is text the model may read (frameworks hand a tool's
 * error message to the model), so it is checked at `context_egress` like a result (CONTRACT sections 8
 * and 12: results are checked, and the session learns what it read): blocked, the `Client` gets the
 * refusal; allowed, the error as it came. The server is scripted JSON-RPC on the SDK's in-memory pair; the
 * PDP is the real dev PDP.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { describe, expect, it } from 'vitest';
import { guardMcpClient } from '../../../src/adapters/mcp.js';
import { useDevPdp } from '../../support/dev-pdp-suite.js';
import { scripted } from '../../support/mcp-scripted.js';

const policy = {
  agents: ['support-ai'],
  latches: [
    { id: 'secret-egress', stage: 'context_egress', content: 'SECRET', verdict: 'BLOCK', reason: 'secret in result' },
    { id: 'page-labels', stage: 'context_egress', tool: 'fetch_page', verdict: 'ALLOW', labels: ['untrusted'] },
  ],
};
const dev = useDevPdp({ policy }, { session: 'sess_app', timeoutMs: 1000, retries: 0 });

const TOOLS = [{ name: 'fetch_page', inputSchema: { type: 'object', properties: {} } }];

/** A scripted server on the in-memory pair whose every `tools/call` is answered with the JSON-RPC `error`. */
async function failing(error: Record<string, unknown>) {
  const { clientSide } = await scripted((m, reply) => {
    if (m.method === 'tools/list') reply({ id: m.id, result: { tools: TOOLS } });
    else if (m.method === 'tools/call') reply({ id: m.id, error });
  });
  return clientSide;
}

/** What `callTool` gave: its result, or the error it threw. */
async function outcome(client: Client): Promise<{ result?: unknown; error?: { code?: unknown; message?: string } }> {
  try {
    return { result: await client.callTool({ name: 'fetch_page', arguments: {} }) };
  } catch (err) {
    return { error: err as { code?: unknown; message?: string } };
  }
}

describe('guardMcpClient(pep, transport): a JSON-RPC error answer is checked at context_egress', () => {
  it.each([
    ['its message', { code: -32603, message: 'SECRET-1' }],
    ['its data', { code: -32603, message: 'failed', data: { detail: 'SECRET-2' } }],
  ])('an error whose %s the policy blocks never reaches the client', async (_, error) => {
    const client = new Client({ name: 'agent', version: '1.0.0' });
    await client.connect(guardMcpClient(dev.clients.client(), await failing(error)));
    const got = await outcome(client);
    expect(
      JSON.stringify(got.result ?? { message: got.error?.message, data: (got.error as { data?: unknown })?.data }),
    ).not.toMatch(/SECRET/);
    await client.close();
  });

  it('an allowed error reaches the client as it came, and the session learns what it read (its label)', async () => {
    const client = new Client({ name: 'agent', version: '1.0.0' });
    await client.connect(guardMcpClient(dev.clients.client(), await failing({ code: -32603, message: 'page failed' })));
    const got = await outcome(client);
    expect(got.error?.code).toBe(-32603);
    expect(got.error?.message).toContain('page failed');
    const egress = dev.pdp.evidence().filter((r) => r.stage === 'context_egress' && r.session === 'sess_app');
    expect(egress.at(-1)?.labels).toEqual(['untrusted']);
    await client.close();
  });
});
