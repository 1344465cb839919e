/**
 * agent-pep/cloudflare-agents against the `agents` package's pieces that run in Node (its Agent and
 * McpAgent import `cloudflare:workers` and run only in workerd): the SDK's MCP client manager with the
 * v2 MCP `Client` it uses, talking to an MCP server in memory; the AI SDK tools an agent runs; the real
 * dev PDP. The agent is its instance name (`{ name }`), which is what the adapter reads.
 */
import { McpServer, type RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { type DevPdp, startDevPdp } from 'agent-pep/dev-pdp';
import { tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentSession, guardAgentMcp, guardTools } from '../../../src/adapters/cloudflare-agents.js';
import { guardMcpServer } from '../../../src/adapters/mcp.js';
import { createPep, createPermitVerifier, type DecisionEvent, type Pep } from '../../../src/index.js';
import { callAsModel, managerWith } from '../../contract/targets-cloudflare-agents.js';

const AGENT = 'support-cf';
const POLICY = {
  agents: [AGENT],
  latches: [
    {
      id: 'round',
      stage: 'action',
      tool: 'refund_payment',
      when: { 'args.amount': { eq: 7 } },
      verdict: 'WARN',
      setArgs: { 'args.amount': 5 },
      reason: 'rounded',
    },
    {
      id: 'secret',
      stage: 'context_egress',
      content: 'AKIA[0-9A-Z]{16}',
      verdict: 'BLOCK',
      reason: 'credential in tool output',
    },
  ],
};

let pdp: DevPdp;
const peps: Pep[] = [];
let events: DecisionEvent[] = [];

function client(extra: Record<string, unknown> = {}): Pep {
  const pep = createPep({
    pdpUrl: pdp.url,
    agentId: AGENT,
    session: 'sess_client',
    timeoutMs: 1500,
    retries: 0,
    permits: { keys: pdp.jwksUrl, issuer: pdp.issuer },
    onDecision: (e) => events.push(e),
    ...extra,
  });
  peps.push(pep);
  return pep;
}

beforeAll(async () => {
  pdp = await startDevPdp({ policy: POLICY, port: 0, log: false });
});
afterAll(async () => {
  for (const p of peps) await p.close();
  await pdp?.close();
});

interface Ran {
  args: Record<string, unknown>;
  permit: unknown;
  session: unknown;
}

/** A payments server (tools capability declared) and the record of its tools' handles, which a server guard serves. */
function payments(ran: Ran[], result?: string) {
  const server = new McpServer({ name: 'payments', version: '1.0.0' }, { capabilities: { tools: {} } });
  const tools: Record<string, RegisteredTool> = {};
  return {
    server,
    tools,
    register() {
      tools.refund_payment = server.registerTool(
        'refund_payment',
        { inputSchema: { orderId: z.string(), amount: z.number() } },
        async (a: Record<string, unknown>, extra: { _meta?: Record<string, unknown> }) => {
          ran.push({ args: a, permit: extra._meta?.['agent-pep/permit'], session: extra._meta?.['agent-pep/session'] });
          return { content: [{ type: 'text' as const, text: result ?? `refunded ${String(a.amount)}` }] };
        },
      );
    },
  };
}

describe('guardAgentMcp (agent.mcp, the SDK MCPClientManager)', () => {
  it('decides in the session of the agent, and sends the permit in _meta', async () => {
    const ran: Ran[] = [];
    const p = payments(ran);
    p.register();
    const { mcp, close } = await managerWith(p.server);
    guardAgentMcp(client(), { name: 'support-42', mcp });
    const r = await callAsModel(mcp, { orderId: 'o1', amount: 3 });
    await close();
    expect(r).toEqual({ isError: false, text: 'refunded 3' });
    expect(ran).toHaveLength(1);
    expect(typeof ran[0]?.permit).toBe('string');
    expect(ran[0]?.session).toBe('support-42');
    expect(
      pdp
        .evidence()
        .filter((e) => e.session === 'support-42')
        .map((e) => e.stage),
    ).toEqual(['action', 'context_egress']);
  });

  it("a server guard that decides itself decides in the agent's session, sent in _meta['agent-pep/session']", async () => {
    const ran: Ran[] = [];
    const p = payments(ran);
    guardMcpServer(client(), p.server, { tools: p.tools });
    p.register();
    const { mcp, close } = await managerWith(p.server);
    guardAgentMcp(client(), { name: 'support-44', mcp });
    const r = await callAsModel(mcp, { orderId: 'o3', amount: 2 });
    await close();
    expect(r).toEqual({ isError: false, text: 'refunded 2' });
    expect(ran.map((x) => x.session)).toEqual(['support-44']);
    // The client guard and the server guard both decided the call, both in the agent's session.
    const actions = pdp.evidence().filter((e) => e.stage === 'action' && e.session === 'support-44');
    expect(actions).toHaveLength(2);
  });

  it("end to end with agent-pep/mcp: the server guarded with { verifier } runs the WARN's args once, on the permit alone", async () => {
    const ran: Ran[] = [];
    const p = payments(ran);
    const verifier = createPermitVerifier({ keys: pdp.jwksUrl, issuer: pdp.issuer, audience: pdp.audience });
    guardMcpServer(client(), p.server, { tools: p.tools, verifier });
    p.register();
    const { mcp, close } = await managerWith(p.server);
    guardAgentMcp(client(), { name: 'support-43', mcp });
    const before = pdp.evidence().length;
    const r = await callAsModel(mcp, { orderId: 'o2', amount: 7 });
    const asked = pdp
      .evidence()
      .slice(before)
      .filter((e) => e.stage === 'action');
    await close();
    expect(r.text).toBe('refunded 5');
    expect(ran.map((x) => x.args)).toEqual([{ orderId: 'o2', amount: 5 }]);
    expect(asked).toHaveLength(1); // the client's decision only: the server verified the permit
  });

  it('a call sent without going through the guard is refused by a server that verifies permits', async () => {
    const ran: Ran[] = [];
    const p = payments(ran);
    const verifier = createPermitVerifier({ keys: pdp.jwksUrl, issuer: pdp.issuer, audience: pdp.audience });
    guardMcpServer(client(), p.server, { tools: p.tools, verifier });
    p.register();
    const { mcp, close } = await managerWith(p.server);
    const r = await callAsModel(mcp, { orderId: 'o3', amount: 3 });
    await close();
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/\(permit_invalid\)$/);
    expect(ran).toEqual([]);
  });

  it('a result the PDP blocks at context_egress reaches the model as the denial, never the text', async () => {
    const ran: Ran[] = [];
    const p = payments(ran, 'key AKIAABCDEFGHIJKLMNOP');
    p.register();
    const { mcp, close } = await managerWith(p.server);
    guardAgentMcp(client(), { name: 'support-44', mcp });
    const r = await callAsModel(mcp, { orderId: 'o4', amount: 3 });
    await close();
    expect(r).toEqual({
      isError: true,
      text: "ERROR: Tool 'refund_payment' denied by policy: credential in tool output",
    });
  });

  it('an args value of another type than the server lists is refused before it is sent (observed)', async () => {
    events = [];
    const ran: Ran[] = [];
    const p = payments(ran);
    p.register();
    const { mcp, close } = await managerWith(p.server);
    guardAgentMcp(client(), { name: 'support-45', mcp });
    const r = await mcp.callTool({
      serverId: 'payments',
      name: 'refund_payment',
      arguments: { orderId: 'o5', amount: '9' },
    });
    await close();
    expect((r as { isError?: boolean }).isError).toBe(true);
    expect(ran).toEqual([]);
    expect(events.map((e) => e.decision.synthesized?.code)).toEqual(['invalid_request']);
  });

  it('refuses a manager guarded twice, a manager without callTool, and unknown options, with a TypeError', async () => {
    const { mcp, close } = await managerWith(new McpServer({ name: 'x', version: '1' }));
    await close();
    guardAgentMcp(client(), { name: 'a', mcp });
    expect(() => guardAgentMcp(client(), { name: 'a', mcp })).toThrow(TypeError);
    expect(() => guardAgentMcp(client(), { name: 'a', mcp: {} as never })).toThrow(TypeError);
    const other = await managerWith(new McpServer({ name: 'y', version: '1' }));
    await other.close();
    expect(() => guardAgentMcp(client(), { name: 'a', mcp: other.mcp }, { nope: 1 } as never)).toThrow(
      expect.objectContaining({ option: 'nope' }),
    );
  });
});

describe("guardTools (the agent's AI SDK tools)", () => {
  it("runs each tool in the agent's session", async () => {
    const ran: unknown[] = [];
    const tools = guardTools(
      client(),
      { name: 'support-46' },
      {
        refund_payment: tool({
          inputSchema: z.object({ orderId: z.string(), amount: z.number() }),
          execute: async (a) => {
            ran.push(a);
            return 'ok';
          },
        }),
      },
    );
    const execute = tools.refund_payment.execute as (i: unknown, o: unknown) => Promise<unknown>;
    await execute({ orderId: 'o6', amount: 1 }, { toolCallId: 't1', messages: [] });
    expect(ran).toEqual([{ orderId: 'o6', amount: 1 }]);
    expect(pdp.evidence().filter((e) => e.session === 'support-46' && e.stage === 'action')).toHaveLength(1);
  });

  it("refuses a session option (the session is the agent's)", () => {
    expect(() => guardTools(client(), { name: 'a' }, {}, { session: 'x' } as never)).toThrow(
      expect.objectContaining({ option: 'session' }),
    );
  });
});

describe('agentSession', () => {
  it("is the instance name, else the Durable Object id, else undefined (the client's session)", () => {
    expect(agentSession({ name: 'support-1' })).toBe('support-1');
    expect(agentSession({ name: '', ctx: { id: { toString: () => 'a1b2' } } })).toBe('a1b2');
    const throwing = {
      get name(): string {
        throw new Error('Attempting to read .name on Support before it was set');
      },
    };
    expect(agentSession(throwing)).toBeUndefined();
  });
});
