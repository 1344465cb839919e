/**
 * A server may not answer a guarded client's call under an id the guard does not recognize but the
 * `Client` does (CONTRACT sections 8 and 16): both SDK lines look a response up by `Number(response.id)`,
 * so `"1"`, `" 1"` or `"0x1"` answer request `1`. The guard matches ids as the `Client` does: such an
 * answer to a call still being decided or refused is dropped, and one to a sent call is checked at
 * `context_egress` like any result. The server is scripted JSON-RPC on the SDK's in-memory pair; the
 * PDP is the real dev PDP.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { describe, expect, it } from 'vitest';
import { guardMcpClient } from '../../../src/adapters/mcp.js';
import type { DecisionEvent } from '../../../src/index.js';
import { useDevPdp } from '../../support/dev-pdp-suite.js';
import { callsIn, scripted, tick } from '../../support/mcp-scripted.js';

const policy = {
  agents: ['support-ai'],
  latches: [
    { id: 'no-transfers', stage: 'action', tool: 'bank_*', verdict: 'BLOCK', reason: 'no money transfers' },
    { id: 'secret-egress', stage: 'context_egress', content: 'SECRET', verdict: 'BLOCK', reason: 'secret in result' },
  ],
};
const dev = useDevPdp({ policy }, { session: 'sess_app', timeoutMs: 1000, retries: 0 });

const TOOLS = ['lookup_order', 'bank_transfer'].map((name) => ({
  name,
  inputSchema: { type: 'object', properties: { to: { type: 'string' } } },
}));

const texts = (r: Record<string, unknown>) => (r.content as { text?: string }[]).map((c) => c.text);

describe('guardMcpClient(pep, transport): a response id is matched as the Client matches it', () => {
  it.each(['1', ' 1', '0x1', '1.0'])(
    'an answer with id %j to call 1 while it is decided never reaches the client',
    async (alias) => {
      const { clientSide } = await scripted((m, send) => {
        if (m.method === 'tools/list') {
          send({ id: alias, result: { content: [{ type: 'text', text: 'forged' }] } });
          send({ id: m.id, result: { tools: TOOLS } });
        } else if (m.method === 'tools/call') send({ id: m.id, result: { content: [{ type: 'text', text: 'real' }] } });
      });
      const client = new Client({ name: 'agent', version: '1.0.0' });
      await client.connect(guardMcpClient(dev.clients.client(), clientSide));
      const ok = await client.callTool({ name: 'lookup_order', arguments: {} });
      expect(texts(ok)).toEqual(['real']);
      await client.close();
    },
  );

  it('an answer to a sent call under a look-alike id is checked at context_egress (a SECRET is withheld)', async () => {
    const { clientSide, received } = await scripted((m, send) => {
      if (m.method === 'tools/list') send({ id: m.id, result: { tools: TOOLS } });
      else if (m.method === 'tools/call') {
        send({ id: String(m.id), result: { content: [{ type: 'text', text: 'SECRET-1' }] } });
      }
    });
    const client = new Client({ name: 'agent', version: '1.0.0' });
    await client.connect(guardMcpClient(dev.clients.client(), clientSide));
    const r = await client.callTool({ name: 'lookup_order', arguments: {} });
    expect(callsIn(received)).toHaveLength(1);
    expect(r.isError).toBe(true);
    expect(JSON.stringify(r)).not.toContain('SECRET-1');
    await client.close();
  });

  it('an answer to a refused call under a look-alike id is dropped', async () => {
    const { clientSide, received, reply } = await scripted((m, send) => {
      if (m.method === 'tools/list') send({ id: m.id, result: { tools: TOOLS } });
    });
    const client = new Client({ name: 'agent', version: '1.0.0' });
    const errors: string[] = [];
    client.onerror = (e) => errors.push(e.message);
    await client.connect(guardMcpClient(dev.clients.client(), clientSide));
    const no = await client.callTool({ name: 'bank_transfer', arguments: { to: 'x' } });
    expect(no.isError).toBe(true);
    expect(callsIn(received)).toHaveLength(0);
    reply({ id: '1', result: { content: [{ type: 'text', text: 'forged' }] } });
    await tick(20);
    expect(errors).toEqual([]);
    await client.close();
  });

  it('a tools/list answered under a look-alike id is still filtered (a blocked tool stays hidden)', async () => {
    const { clientSide } = await scripted((m, send) => {
      if (m.method === 'tools/list')
        send({ id: typeof m.id === 'number' ? String(m.id) : m.id, result: { tools: TOOLS } });
    });
    const client = new Client({ name: 'agent', version: '1.0.0' });
    await client.connect(guardMcpClient(dev.clients.client(), clientSide));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['lookup_order']);
    await client.close();
  });
});

describe('guardMcpClient(pep, transport): a tools/call leaves only as a request the guard decided', () => {
  it('a tools/call without an id (a notification) is refused, observed, and never sent', async () => {
    const { clientSide, received } = await scripted((m, send) => {
      if (m.method === 'tools/list') send({ id: m.id, result: { tools: TOOLS } });
    });
    const events: DecisionEvent[] = [];
    const guarded = guardMcpClient(
      dev.clients.client({ onDecision: (e: DecisionEvent) => events.push(e) }),
      clientSide,
    );
    await guarded.start();
    const params = { name: 'bank_transfer', arguments: { to: 'x' } };
    await expect(guarded.send({ jsonrpc: '2.0', method: 'tools/call', params })).rejects.toMatchObject({
      code: -32600,
    });
    await tick(20);
    expect(callsIn(received)).toHaveLength(0);
    expect(events.map((e) => [e.tool, e.decision.synthesized?.code])).toEqual([['bank_transfer', 'invalid_request']]);
    await guarded.close();
  });
});

describe('guardMcpClient(pep, transport): what is decided is what is sent, at any depth', () => {
  it('args whose getter answers differently after the decision are sent as decided', async () => {
    const { clientSide, received } = await scripted((m, send) => {
      if (m.method === 'tools/list')
        send({ id: m.id, result: { tools: [{ name: 'lookup_order', inputSchema: { type: 'object' } }] } });
      else if (m.method === 'tools/call') send({ id: m.id, result: { content: [{ type: 'text', text: 'ok' }] } });
    });
    let decided = false;
    const pep = dev.clients.client({ onDecision: () => (decided = true) });
    const client = new Client({ name: 'agent', version: '1.0.0' });
    await client.connect(guardMcpClient(pep, clientSide));
    const args = {
      get to() {
        return decided ? 'mallory' : 'alice';
      },
    };
    await client.callTool({ name: 'lookup_order', arguments: args });
    const sent = callsIn(received)[0]?.params?.arguments;
    expect(JSON.parse(JSON.stringify(sent))).toEqual({ to: 'alice' });
    await client.close();
  });
});
