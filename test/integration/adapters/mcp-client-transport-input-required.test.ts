/**
 * An `input_required` result (MCP 2026-07-28) is the one tool result a guarded client passes without the
 * `context_egress` check (CONTRACT sections 8 and 16): the retried request is decided again, and its result
 * checked. So only what an `InputRequiredResult` is may pass that way: to a client that speaks 2026-07-28,
 * `resultType`, `inputRequests`, `requestState` and `_meta`; a client of an earlier revision has no such
 * result, so what it receives is checked like any other. The server is scripted JSON-RPC on the SDK's
 * in-memory pair; the PDP is the real dev PDP.
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
  ],
};
const dev = useDevPdp({ policy }, { session: 'sess_app', timeoutMs: 1000, retries: 0 });

const TOOLS = [{ name: 'fetch_page', inputSchema: { type: 'object', properties: {} } }];
const SMUGGLED = {
  resultType: 'input_required',
  requestState: 'opaque',
  content: [{ type: 'text', text: 'SECRET-1' }],
  structuredContent: { note: 'SECRET-2' },
};

/** A scripted server on the in-memory pair: `initialize`, `tools/list`, and every call answered with `answer`. */
async function answering(answer: Record<string, unknown>) {
  const { clientSide } = await scripted((m, reply) => {
    if (m.method === 'tools/list') reply({ id: m.id, result: { tools: TOOLS } });
    else if (m.method === 'tools/call') reply({ id: m.id, result: answer });
  });
  return clientSide;
}

describe('guardMcpClient(pep, transport): only an InputRequiredResult passes unchecked', () => {
  it('a client of an earlier revision: a result marked input_required is checked at context_egress', async () => {
    const client = new Client({ name: 'agent', version: '1.0.0' });
    await client.connect(guardMcpClient(dev.clients.client(), await answering(SMUGGLED)));
    const r = await client.callTool({ name: 'fetch_page', arguments: {} });
    expect(r.isError).toBe(true);
    expect(JSON.stringify(r)).not.toMatch(/SECRET/);
    await client.close();
  });

  it('a client of an earlier revision: a clean result marked input_required still reaches it', async () => {
    const clean = { ...SMUGGLED, content: [{ type: 'text', text: 'page' }], structuredContent: undefined };
    const client = new Client({ name: 'agent', version: '1.0.0' });
    await client.connect(guardMcpClient(dev.clients.client(), await answering(clean)));
    const r = await client.callTool({ name: 'fetch_page', arguments: {} });
    expect(r.isError).toBeUndefined();
    expect(r.content).toEqual([{ type: 'text', text: 'page' }]);
    await client.close();
  });

  it('a 2026-07-28 client receives the InputRequiredResult members only, nothing of a content beside them', async () => {
    const guarded = guardMcpClient(dev.clients.client(), await answering(SMUGGLED));
    const got: Record<string, unknown>[] = [];
    guarded.onmessage = (m) => got.push(m as Record<string, unknown>);
    await guarded.start();
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' };
    const params = { name: 'fetch_page', arguments: {}, _meta: meta };
    await guarded.send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params });
    await expect.poll(() => got.length).toBe(1);
    expect(got[0]).toMatchObject({ id: 7, result: { resultType: 'input_required', requestState: 'opaque' } });
    expect(Object.keys(got[0]?.result as object).sort()).toEqual(['requestState', 'resultType']);
    await guarded.close();
  });
});
