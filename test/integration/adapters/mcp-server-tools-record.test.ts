/**
 * guardMcpServer serves an `McpServer`'s tools from the `tools` record it is given, read again at each
 * `tools/list` and `tools/call` (CONTRACT section 16: "a tool registered before or after guarding is decided on
 * the arguments it will run with"; "every refusal, the guard's own included, reaches onDecision"), on both
 * SDK lines: a handle added after guarding is served like the others, a tool whose handle is not there is
 * never listed and its calls are refused (observed), look-alike names are refused once they appear, and no
 * member of an SDK object changes, whether tools were registered before or after. The real 1.x and 2.x SDKs
 * over their `InMemoryTransport`, the dev PDP deciding.
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
import { memberShape } from '../../support/members.js';

const policy = {
  agents: ['support-ai'],
  latches: [
    { id: 'no-transfers', stage: 'action', tool: 'bank_*', verdict: 'BLOCK', reason: 'no money transfers' },
    { id: 'few', stage: 'action', tool: 'late_*', when: { 'args.n': { gt: 3 } }, verdict: 'BLOCK', reason: 'too many' },
  ],
};
const dev = useDevPdp({ policy }, { session: 'sess_record' });
const _meta = { [SESSION_META_KEY]: 'sess_app' };

type Handle = { update(u: Record<string, unknown>): void };
type Ran = unknown[];
/** What differs between the SDK lines in these tests: how a server is made, a tool registered, a client connected. */
interface Stack {
  line: string;
  make(withCapability: boolean): { server: object; low: object };
  register(server: object, name: string, ran: Ran, n?: 'default'): Handle;
  connect(server: object): Promise<{ client: CallingClient; serverSide: object }>;
}
interface CallingClient {
  callTool(p: { name: string; arguments: Record<string, unknown>; _meta: object }): Promise<{ isError?: boolean }>;
  listTools(p?: { _meta: object }): Promise<{ tools: { name: string }[] }>;
}

const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });

const V1: Stack = {
  line: '1.x',
  make(withCapability) {
    const server = new McpServerV1(
      { name: 'orders', version: '1' },
      withCapability ? { capabilities: { tools: {} } } : {},
    );
    return { server, low: server.server };
  },
  register(server, name, ran, n) {
    const inputSchema = { n: n === 'default' ? z.coerce.number().default(5) : z.number() };
    return (server as McpServerV1).registerTool(name, { inputSchema }, async (args) => {
      ran.push([name, args]);
      return text(name);
    });
  },
  async connect(server) {
    const [clientSide, serverSide] = InMemoryV1.createLinkedPair();
    await (server as McpServerV1).connect(serverSide);
    const client = new ClientV1({ name: 'agent', version: '1' });
    await client.connect(clientSide);
    return { client: client as unknown as CallingClient, serverSide };
  },
};

const V2: Stack = {
  line: '2.x',
  make(withCapability) {
    const server = new McpServerV2(
      { name: 'orders', version: '2' },
      withCapability ? { capabilities: { tools: {} } } : {},
    );
    return { server, low: server.server };
  },
  register(server, name, ran, n) {
    const inputSchema = z.object({ n: n === 'default' ? z.coerce.number().default(5) : z.number() });
    return (server as McpServerV2).registerTool(name, { inputSchema }, async (args) => {
      ran.push([name, args]);
      return text(name);
    });
  },
  async connect(server) {
    const [clientSide, serverSide] = InMemoryV2.createLinkedPair();
    await (server as McpServerV2).connect(serverSide);
    const client = new ClientV2({ name: 'agent', version: '1' });
    await client.connect(clientSide);
    return { client: client as unknown as CallingClient, serverSide };
  },
};

function guard(server: object, tools: Record<string, unknown>, events?: DecisionEvent[]) {
  const pep = dev.clients.client(events ? { onDecision: (e: DecisionEvent) => events.push(e) } : {});
  guardMcpServer(pep, server as McpServerV1, { tools: tools as never });
}

const refusedBy = (events: DecisionEvent[]) =>
  events
    .filter((e) => e.decision.simulated !== true)
    .map((e) => [e.tool, e.decision.synthesized?.code ?? e.decision.verdict]);

describe.each([V1, V2])('guardMcpServer on a $line McpServer: the tools record is read at each request', (stack) => {
  it('a tool registered after guarding is served once its handle is added: listed, and decided on the args it runs with', async () => {
    const ran: Ran = [];
    const events: DecisionEvent[] = [];
    const { server } = stack.make(false);
    const tools: Record<string, unknown> = { bank_transfer: stack.register(server, 'bank_transfer', ran) };
    guard(server, tools, events);
    const { client } = await stack.connect(server);
    tools.late_count = stack.register(server, 'late_count', ran, 'default');
    expect((await client.listTools({ _meta })).tools.map((t) => t.name).sort()).toEqual(['late_count']);
    // n defaults to 5 (> 3): blocked on what would run; '2' is coerced to 2: allowed, run as 2
    expect((await client.callTool({ name: 'late_count', arguments: {}, _meta })).isError).toBe(true);
    expect((await client.callTool({ name: 'late_count', arguments: { n: '2' }, _meta })).isError).toBeFalsy();
    expect(ran).toEqual([['late_count', { n: 2 }]]);
    expect(refusedBy(events)).toEqual([
      ['late_count', 'BLOCK'],
      ['late_count', 'ALLOW'],
    ]);
  });

  it('a tool registered after guarding without its handle added is never listed, and its calls are refused and observed', async () => {
    const ran: Ran = [];
    const events: DecisionEvent[] = [];
    const { server } = stack.make(false);
    const tools = { first: stack.register(server, 'first', ran) };
    guard(server, tools, events);
    const { client } = await stack.connect(server);
    stack.register(server, 'unseen', ran);
    expect((await client.listTools({ _meta })).tools.map((t) => t.name)).toEqual(['first']);
    expect((await client.callTool({ name: 'unseen', arguments: { n: 1 }, _meta })).isError).toBe(true);
    expect(ran).toEqual([]);
    expect(refusedBy(events)).toEqual([['unseen', 'invalid_request']]);
  });

  it('a look-alike name added later is refused and observed, for both names, and listed under neither', async () => {
    const ran: Ran = [];
    const events: DecisionEvent[] = [];
    const { server } = stack.make(false);
    const tools: Record<string, unknown> = { refund_payment: stack.register(server, 'refund_payment', ran) };
    guard(server, tools, events);
    const { client } = await stack.connect(server);
    expect((await client.callTool({ name: 'refund_payment', arguments: { n: 1 }, _meta })).isError).toBeFalsy();
    tools.refundPayment = stack.register(server, 'refundPayment', ran);
    expect((await client.listTools({ _meta })).tools.map((t) => t.name)).toEqual([]);
    expect((await client.callTool({ name: 'refund_payment', arguments: { n: 1 }, _meta })).isError).toBe(true);
    expect((await client.callTool({ name: 'refundPayment', arguments: { n: 1 }, _meta })).isError).toBe(true);
    // removed again: served again
    delete tools.refundPayment;
    expect((await client.callTool({ name: 'refund_payment', arguments: { n: 2 }, _meta })).isError).toBeFalsy();
    expect(ran).toEqual([
      ['refund_payment', { n: 1 }],
      ['refund_payment', { n: 2 }],
    ]);
    expect(refusedBy(events)).toEqual([
      ['refund_payment', 'ALLOW'],
      ['refund_payment', 'invalid_request'],
      ['refundPayment', 'invalid_request'],
      ['refund_payment', 'ALLOW'],
    ]);
  });

  it('look-alike names or a value that is not a handle given at guarding are a TypeError naming tools', () => {
    const { server } = stack.make(false);
    const a = stack.register(server, 'refund_payment', []);
    const b = stack.register(server, 'refundPayment', []);
    for (const tools of [
      { refund_payment: a, refundPayment: b },
      { refund_payment: a, other: { handler: 1 } },
    ]) {
      let err: unknown;
      try {
        guard(server, tools);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(TypeError);
      expect((err as { option?: string }).option).toBe('tools');
    }
  });

  it('a server with no tool before guarding: with capabilities { tools } its first tool is registered after and served; without, guarding is a TypeError naming tools', async () => {
    const ran: Ran = [];
    const declared = stack.make(true).server;
    const tools: Record<string, unknown> = {};
    guard(declared, tools);
    const { client } = await stack.connect(declared);
    expect((await client.listTools({ _meta })).tools).toEqual([]);
    // the SDK does not throw: it set its tool handlers at construction, and leaves the guard's in place
    tools.first = stack.register(declared, 'first', ran);
    expect((await client.listTools({ _meta })).tools.map((t) => t.name)).toEqual(['first']);
    expect((await client.callTool({ name: 'first', arguments: { n: 1 }, _meta })).isError).toBeFalsy();
    expect(ran).toEqual([['first', { n: 1 }]]);

    const bare = stack.make(false).server;
    let err: unknown;
    try {
      guard(bare, {});
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TypeError);
    expect((err as { option?: string }).option).toBe('tools');
  });

  it('replaces no member of an SDK object: McpServer, its server, the transport and every handle, tools registered before and after', async () => {
    const ran: Ran = [];
    const { server, low } = stack.make(false);
    const tools: Record<string, unknown> = { before: stack.register(server, 'before', ran) };
    const { client, serverSide } = await stack.connect(server);
    const objects = () => [server, low, serverSide, ...Object.values(tools).map((h) => h as object)];
    const shape = () => objects().map(memberShape);
    const before = shape();
    guard(server, tools);
    expect(shape()).toEqual(before);
    // a tool registered after guarding: its handle looks like the one registered before
    const after = stack.register(server, 'after', ran);
    const handleShape = memberShape(after as object);
    tools.after = after;
    expect((await client.callTool({ name: 'before', arguments: { n: 1 }, _meta })).isError).toBeFalsy();
    expect((await client.callTool({ name: 'after', arguments: { n: 1 }, _meta })).isError).toBeFalsy();
    expect(ran).toHaveLength(2);
    expect(shape().slice(0, 3)).toEqual(before.slice(0, 3));
    expect(memberShape(after as object)).toEqual(handleShape);
    // and has the members a handle made before guarding has (nothing added by the guard)
    expect([...memberShape(after as object).keys()]).toEqual([...(before[3] as Map<string, unknown>).keys()]);
    expect(memberShape(tools.before as object)).toEqual(before[3]);
  });
});

describe('memberShape tells a patched member', () => {
  it('a method replaced on an SDK object changes its shape (the tests above can fail)', () => {
    const server = new McpServerV1({ name: 'x', version: '1' });
    const before = memberShape(server);
    Object.defineProperty(server, 'registerTool', { value: () => undefined });
    expect(memberShape(server)).not.toEqual(before);
    const low = server.server;
    const lowBefore = memberShape(low);
    low.setRequestHandler = low.setRequestHandler.bind(low);
    expect(memberShape(low)).not.toEqual(lowBefore);
  });
});
