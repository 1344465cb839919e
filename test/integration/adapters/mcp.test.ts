/**
 * agent-pep/mcp against the real MCP SDK (`Client`, `McpServer`, `InMemoryTransport.createLinkedPair()`,
 * no network) and the real dev PDP on 127.0.0.1 (port 0). Each test counts what ran: tool bodies, the
 * calls that reached the server, and the decisions the PDP made (its evidence).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer, type RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  type GuardMcpClientOptions,
  type GuardMcpServerOptions,
  guardMcpClient,
  guardMcpServer,
  PERMIT_META_KEY,
} from '../../../src/adapters/mcp.js';
import { createPermitVerifier, type Interceptor, type Pep, type PepOptions } from '../../../src/index.js';
import { useDevPdp } from '../../support/dev-pdp-suite.js';
import { closedPort } from '../../support/fake-pdp.js';
import { REFUND_REVIEW } from '../../support/policies.js';

const policy = {
  agents: ['support-ai'],
  latches: [
    REFUND_REVIEW,
    { id: 'no-transfers', stage: 'action', tool: 'bank_*', verdict: 'BLOCK', reason: 'no money transfers' },
    {
      id: 'cap-limit',
      stage: 'action',
      tool: 'search_orders',
      when: { 'args.limit': { gt: 10 } },
      verdict: 'WARN',
      setArgs: { 'args.limit': 10 },
      reason: 'at most 10 results',
    },
    {
      id: 'phone-egress',
      stage: 'context_egress',
      content: '\\b\\d{3}[-.]\\d{3}[-.]\\d{4}\\b',
      verdict: 'WARN',
      redact: '[phone]',
      reason: 'phone numbers are redacted',
    },
    { id: 'secret-egress', stage: 'context_egress', content: 'SECRET', verdict: 'BLOCK', reason: 'secret in result' },
  ],
};

const dev = useDevPdp({ policy }, { session: 'sess_mcp', timeoutMs: 1000, retries: 0 });
/** The session a guarded server decides a raw client's calls in (CONTRACT section 16: the request names it, or the server's `session` function does). */
const inSession = { session: () => 'sess_mcp' };
afterEach(() => dev.pdp.setFault(null));
function makePep(extra: Partial<PepOptions> = {}): Pep {
  return dev.clients.client(extra);
}

/** How many decisions the dev PDP made at `stage` so far. */
/** Decisions of a stage, without visibility batches (a guarded server filters the tools/list a guarded client reads). */
const decisions = (stage: string): number =>
  dev.pdp.evidence().filter((r) => r.stage === stage && r.visibility === undefined).length;

/** What each tool body saw, in order. */
interface Ran {
  tool: string;
  args: unknown;
  meta: unknown;
}

/** The handles `registerTool` returned for each server `makeServer` made, by tool name (what the guard serves). */
const handlesOf = new WeakMap<McpServer, Record<string, RegisteredTool>>();
/** The server guard's options for a server `makeServer` made: its tools' handles, and the session of a raw client's calls. */
const served = (server: McpServer, extra: Omit<GuardMcpServerOptions, 'tools'> = inSession): GuardMcpServerOptions => ({
  ...extra,
  tools: handlesOf.get(server) ?? {},
});

/** A server with the test's tools; `ran` records every body that ran. */
function makeServer(ran: Ran[]): McpServer {
  const server = new McpServer({ name: 'payments', version: '1.0.0' });
  const handles: Record<string, RegisteredTool> = {};
  handlesOf.set(server, handles);
  const record = (tool: string, args: unknown, extra: { _meta?: unknown }) => {
    ran.push({ tool, args, meta: extra._meta });
  };
  handles.refund_payment = server.registerTool(
    'refund_payment',
    { inputSchema: { orderId: z.string(), amount: z.number() } },
    async (args, extra) => {
      record('refund_payment', args, extra);
      return { content: [{ type: 'text', text: `refunded ${args.amount}` }] };
    },
  );
  handles.bank_transfer_funds = server.registerTool(
    'bank_transfer_funds',
    { inputSchema: { to: z.string(), amount: z.number() } },
    async (args, extra) => {
      record('bank_transfer_funds', args, extra);
      return { content: [{ type: 'text', text: 'transferred' }] };
    },
  );
  handles.search_orders = server.registerTool(
    'search_orders',
    { inputSchema: { query: z.string(), limit: z.number().optional() } },
    async (args, extra) => {
      record('search_orders', args, extra);
      return { content: [{ type: 'text', text: `found ${args.limit ?? 'all'}` }] };
    },
  );
  handles.customer_contact = server.registerTool(
    'customer_contact',
    { inputSchema: { id: z.string() } },
    async (args, extra) => {
      record('customer_contact', args, extra);
      const text = args.id === 'leak' ? 'token SECRET-42' : 'call 555-123-4567';
      return { content: [{ type: 'text', text }], structuredContent: { text } };
    },
  );
  return server;
}

async function connect(server: McpServer, client = new Client({ name: 'agent', version: '1.0.0' })): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await client.connect(clientSide);
  return client;
}

/**
 * A client connected to `server` through the transport `guardMcpClient(pep, transport, opts)` returns
 * (`spy` sees the inner transport first: a test double of the test's own).
 */
async function guardedClient(
  server: McpServer,
  pep: Pep,
  opts?: GuardMcpClientOptions,
  spy?: (t: InMemoryTransport) => void,
): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  spy?.(clientSide);
  await server.connect(serverSide);
  const client = new Client({ name: 'agent', version: '1.0.0' });
  await client.connect(guardMcpClient(pep, clientSide, opts));
  return client;
}

interface ToolResultLike {
  isError?: boolean;
  content: { type: string; text?: string }[];
  structuredContent?: unknown;
}
const textOf = (r: unknown): string | undefined => (r as ToolResultLike).content[0]?.text;

describe('guardMcpServer: tools run only after ALLOW or WARN', () => {
  let ran: Ran[];
  let client: Client;
  beforeEach(async () => {
    ran = [];
    const server = makeServer(ran);
    guardMcpServer(makePep(), server, served(server));
    client = await connect(server);
  });

  it('runs an allowed call once, with the args as sent', async () => {
    const before = decisions('action');
    const r = await client.callTool({ name: 'refund_payment', arguments: { orderId: 'ord_1', amount: 129 } });
    expect(r.isError).toBeFalsy();
    expect(textOf(r)).toBe('refunded 129');
    expect(ran).toEqual([{ tool: 'refund_payment', args: { orderId: 'ord_1', amount: 129 }, meta: undefined }]);
    expect(decisions('action')).toBe(before + 1);
  });

  /**
   * A guarded server with one tool of `inputSchema`, and a client: `got` records each body run. Guarded
   * before the tool is registered (the server declares the tools capability; the handle is added to the
   * record after): the schema rules below hold for a tool registered after guarding as for one before.
   */
  async function oneTool(name: string, inputSchema: z.ZodRawShape) {
    const server = new McpServer({ name: 'one', version: '1.0.0' }, { capabilities: { tools: {} } });
    const tools: Record<string, RegisteredTool> = {};
    guardMcpServer(makePep(), server, { ...inSession, tools });
    const got: unknown[] = [];
    tools[name] = server.registerTool(name, { inputSchema }, async (a: unknown) => {
      got.push(a);
      return { content: [{ type: 'text' as const, text: 'done' }] };
    });
    return { got, client: await connect(server) };
  }
  const HELD = "ERROR: Tool 'refund_payment' is held for human review: refunds over 500 need review";

  it.each([
    ['a coercion ("900" becomes 900)', { orderId: 'o1', amount: '900' }, { amount: z.coerce.number() }],
    ['a default (no amount becomes 900)', { orderId: 'o1' }, { amount: z.number().default(900) }],
  ])(
    '%s: the PDP decides on the args the schema makes, and holds the call; the body never runs',
    async (_n, args, shape) => {
      const { got, client: c } = await oneTool('refund_payment', { orderId: z.string(), ...shape });
      expect(textOf(await c.callTool({ name: 'refund_payment', arguments: args }))).toBe(HELD);
      expect(got).toEqual([]);
    },
  );

  it('a transform applies once: the PDP decides on what the parse makes, and the callback gets exactly that', async () => {
    const { got, client: c } = await oneTool('refund_payment', {
      orderId: z.string(),
      amount: z.number().transform((n) => n + 1),
    });
    // 500 parses to 501: the refund-review latch (amount > 500) holds it.
    expect(textOf(await c.callTool({ name: 'refund_payment', arguments: { orderId: 'o1', amount: 500 } }))).toBe(HELD);
    expect(textOf(await c.callTool({ name: 'refund_payment', arguments: { orderId: 'o1', amount: 10 } }))).toBe('done');
    expect(got).toEqual([{ orderId: 'o1', amount: 11 }]);
  });

  it('args the PDP changed (WARN) that the schema would change again are refused, not run', async () => {
    const { got, client: c } = await oneTool('search_orders', {
      query: z.string(),
      limit: z.number().transform((n) => n + 1),
    });
    // 20 parses to 21; the PDP caps it at 10 (WARN); the schema would make 11 of that.
    const r = await c.callTool({ name: 'search_orders', arguments: { query: 'late', limit: 20 } });
    expect(textOf(r)).toBe("ERROR: Tool 'search_orders' was not run: the policy check failed (invalid_request)");
    expect(got).toEqual([]);
  });

  it('a schema that makes something other than an object of the args is refused, not decided as sent', async () => {
    const server = new McpServer({ name: 'payments', version: '1.0.0' });
    const got: unknown[] = [];
    const inputSchema = z
      .object({ orderId: z.string(), amount: z.coerce.number() })
      .transform((o) => [o.orderId, o.amount]);
    // An object schema with a top-level transform (the SDK's types want a plain object output).
    const register = server.registerTool.bind(server) as (...a: unknown[]) => unknown;
    const handle = register('refund_payment', { inputSchema }, async (a: unknown) => {
      got.push(a);
      return { content: [{ type: 'text', text: 'refunded' }] };
    }) as RegisteredTool;
    guardMcpServer(makePep(), server, { ...inSession, tools: { refund_payment: handle } });
    const c = await connect(server);
    const r = await c.callTool({ name: 'refund_payment', arguments: { orderId: 'o1', amount: '900' } });
    expect(textOf(r)).toBe("ERROR: Tool 'refund_payment' was not run: the policy check failed (invalid_request)");
    expect(got).toEqual([]);
  });

  it('a schema whose output holds undefined members (null to undefined) runs when the PDP allows', async () => {
    const { got, client: c } = await oneTool('search_docs', {
      q: z.string(),
      note: z
        .string()
        .nullable()
        .transform((v) => v ?? undefined),
    });
    expect(textOf(await c.callTool({ name: 'search_docs', arguments: { q: 'pep', note: null } }))).toBe('done');
    expect(got).toHaveLength(1);
  });

  it('answers a PDP BLOCK with the isError denial text; the body does not run', async () => {
    const r = await client.callTool({ name: 'bank_transfer_funds', arguments: { to: 'x', amount: 5 } });
    expect(r).toEqual({
      isError: true,
      content: [{ type: 'text', text: "ERROR: Tool 'bank_transfer_funds' denied by policy: no money transfers" }],
    });
    expect(ran).toHaveLength(0);
  });

  it('answers ESCALATE with the held-for-review text (MCP 1.x has no approval flow); the body does not run', async () => {
    const r = await client.callTool({ name: 'refund_payment', arguments: { orderId: 'ord_1', amount: 900 } });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe("ERROR: Tool 'refund_payment' is held for human review: refunds over 500 need review");
    expect(ran).toHaveLength(0);
  });

  it('runs a WARN with the transformedArgs', async () => {
    const r = await client.callTool({ name: 'search_orders', arguments: { query: 'late', limit: 500 } });
    expect(textOf(r)).toBe('found 10');
    expect(ran.map((x) => x.args)).toEqual([{ query: 'late', limit: 10 }]);
  });

  it('fails closed when the PDP hangs: pdp_timeout, the body does not run', async () => {
    dev.pdp.setFault({ kind: 'hang' });
    const r = await client.callTool({ name: 'refund_payment', arguments: { orderId: 'ord_1', amount: 1 } });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe("ERROR: Tool 'refund_payment' was not run: the policy check failed (pdp_timeout)");
    expect(ran).toHaveLength(0);
  });

  it('guards tools registered after guardMcpServer once their handles are in the record (registerTool and the tool() overloads)', async () => {
    const server = makeServer(ran);
    const tools = served(server).tools as Record<string, RegisteredTool>;
    guardMcpServer(makePep(), server, { ...inSession, tools });
    let later = 0;
    tools.bank_wire = server.registerTool('bank_wire', { inputSchema: { to: z.string() } }, async () => {
      later++;
      return { content: [{ type: 'text', text: 'wired' }] };
    });
    tools.bank_sweep = server.tool('bank_sweep', 'moves everything', async () => {
      later++;
      return { content: [{ type: 'text', text: 'swept' }] };
    });
    tools.lookup_order = server.tool('lookup_order', { orderId: z.string() }, async ({ orderId }) => {
      later++;
      return { content: [{ type: 'text', text: `order ${orderId}` }] };
    });
    const c = await connect(server);
    const wire = await c.callTool({ name: 'bank_wire', arguments: { to: 'x' } });
    const sweep = await c.callTool({ name: 'bank_sweep', arguments: {} });
    expect([wire.isError, sweep.isError]).toEqual([true, true]);
    expect(textOf(sweep)).toBe("ERROR: Tool 'bank_sweep' denied by policy: no money transfers");
    expect(later).toBe(0);
    expect(textOf(await c.callTool({ name: 'lookup_order', arguments: { orderId: 'o1' } }))).toBe('order o1');
    expect(later).toBe(1);
  });

  it('a callback swapped in with RegisteredTool.update({ callback }) is guarded too', async () => {
    const server = new McpServer({ name: 's', version: '1' });
    const swapped: string[] = [];
    const transfer = server.registerTool('bank_transfer_funds', {}, async () => ({ content: [] }));
    const lookup = server.registerTool('lookup_order', {}, async () => ({ content: [] }));
    guardMcpServer(makePep(), server, { ...inSession, tools: { bank_transfer_funds: transfer, lookup_order: lookup } });
    for (const [tool, name] of [
      [transfer, 'bank_transfer_funds'],
      [lookup, 'lookup_order'],
    ] as const) {
      tool.update({
        callback: async () => {
          swapped.push(name);
          return { content: [{ type: 'text', text: 'swapped' }] };
        },
      });
    }
    const c = await connect(server);
    const blocked = await c.callTool({ name: 'bank_transfer_funds', arguments: {} });
    const allowed = await c.callTool({ name: 'lookup_order', arguments: {} });
    expect(textOf(blocked)).toBe("ERROR: Tool 'bank_transfer_funds' denied by policy: no money transfers");
    expect(textOf(allowed)).toBe('swapped');
    expect(swapped).toEqual(['lookup_order']);
  });

  it('one callback registered for two tools is decided under the name of the tool called', async () => {
    const server = new McpServer({ name: 's', version: '1' });
    const calls: string[] = [];
    const shared = async (extra: { requestId: unknown }) => {
      calls.push(String(extra.requestId));
      return { content: [{ type: 'text' as const, text: 'ran' }] };
    };
    const tools = {
      lookup_order: server.registerTool('lookup_order', {}, shared),
      bank_lookup: server.registerTool('bank_lookup', {}, shared),
    };
    guardMcpServer(makePep(), server, { ...inSession, tools });
    const c = await connect(server);
    const blocked = await c.callTool({ name: 'bank_lookup', arguments: {} });
    const allowed = await c.callTool({ name: 'lookup_order', arguments: {} });
    expect([textOf(blocked), textOf(allowed)]).toEqual([
      "ERROR: Tool 'bank_lookup' denied by policy: no money transfers",
      'ran',
    ]);
    expect(calls).toHaveLength(1);
  });

  it('a tool is decided under the name the record serves it by: renamed with update({ name }) and moved to its new key, it is decided under the new name', async () => {
    const server = new McpServer({ name: 's', version: '1' });
    let runs = 0;
    const tool = server.registerTool('lookup_order', {}, async () => {
      runs++;
      return { content: [] };
    });
    const tools: Record<string, RegisteredTool> = { lookup_order: tool };
    guardMcpServer(makePep(), server, { ...inSession, tools });
    tool.update({ name: 'bank_lookup' });
    delete tools.lookup_order;
    tools.bank_lookup = tool;
    const c = await connect(server);
    const r = await c.callTool({ name: 'bank_lookup', arguments: {} });
    expect(textOf(r)).toBe("ERROR: Tool 'bank_lookup' denied by policy: no money transfers");
    // the old name is no longer served
    const old = await c.callTool({ name: 'lookup_order', arguments: {} });
    expect(textOf(old)).toBe("ERROR: Tool 'lookup_order' was not run: the policy check failed (invalid_request)");
    expect(runs).toBe(0);
  });
});

describe('guardMcpServer: experimental task tools', () => {
  it('a task tool is not served: its call answers a tool error, and no task is ever created', async () => {
    const server = new McpServer(
      { name: 's', version: '1' },
      { capabilities: { tasks: { requests: { tools: { call: {} } } } }, taskStore: new InMemoryTaskStore() },
    );
    const created: string[] = [];
    const tools: Record<string, RegisteredTool> = {};
    for (const name of ['bank_batch', 'lookup_batch']) {
      tools[name] = server.experimental.tasks.registerToolTask(
        name,
        { inputSchema: { n: z.number() }, execution: { taskSupport: 'optional' } },
        {
          createTask: async (args, extra) => {
            created.push(name);
            const task = await extra.taskStore.createTask({ ttl: 60_000, pollInterval: 10 });
            await extra.taskStore.storeTaskResult(task.taskId, 'completed', {
              content: [{ type: 'text', text: `batch ${args.n}` }],
            });
            return { task };
          },
          getTask: async (_args, extra) => (await extra.taskStore.getTask(extra.taskId)) as never,
          getTaskResult: async (_args, extra) => (await extra.taskStore.getTaskResult(extra.taskId)) as never,
        },
      );
    }
    guardMcpServer(makePep(), server, { ...inSession, tools });
    const client = await connect(server);
    for (const name of ['bank_batch', 'lookup_batch']) {
      const r = await client.callTool({ name, arguments: { n: 1 } });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toBe(`Tool ${name} has no handler`);
    }
    expect(created).toEqual([]);
  });
});

describe('guardMcpServer: failing closed', () => {
  it('fails closed when the PDP is down: pdp_unreachable, the body does not run', async () => {
    const ran: Ran[] = [];
    const server = makeServer(ran);
    guardMcpServer(makePep({ pdpUrl: await closedPort() }), server, served(server));
    const client = await connect(server);
    const r = await client.callTool({ name: 'refund_payment', arguments: { orderId: 'ord_1', amount: 1 } });
    expect(textOf(r)).toBe("ERROR: Tool 'refund_payment' was not run: the policy check failed (pdp_unreachable)");
    expect(ran).toHaveLength(0);
  });

  it('an error inside the adapter answers isError and the body does not run', async () => {
    const ran: Ran[] = [];
    const server = makeServer(ran);
    const real = makePep();
    // A Pep whose guarded tools throw a plain error (not a policy decision) when called.
    const broken: Pep = {
      ...real,
      guardTool: (name, execute, options) => {
        real.guardTool(name, execute, options);
        return async () => {
          throw new Error('adapter bug');
        };
      },
    };
    guardMcpServer(broken, server, served(server));
    const client = await connect(server);
    const r = await client.callTool({ name: 'refund_payment', arguments: { orderId: 'ord_1', amount: 1 } });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe("ERROR: Tool 'refund_payment' was not run: the policy check failed (invalid_request)");
    expect(ran).toHaveLength(0);
  });

  it('a tool name that cannot be decided (normalizes to nothing) is refused, its body does not run', async () => {
    const server = new McpServer({ name: 's', version: '1' });
    let runs = 0;
    // the MCP SDK warns about such a name on the console: expected here, so asserted, not printed
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    let handle: RegisteredTool;
    try {
      handle = server.registerTool('---', {}, async () => {
        runs++;
        return { content: [] };
      });
      expect(warn.mock.calls.map((c) => String(c[0])).join('\n')).toContain('Tool name validation warning for "---"');
    } finally {
      warn.mockRestore();
    }
    guardMcpServer(makePep(), server, { ...inSession, tools: { '---': handle } });
    const client = await connect(server);
    const r = await client.callTool({ name: '---', arguments: {} });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe("ERROR: Tool '---' was not run: the policy check failed (invalid_request)");
    expect(runs).toBe(0);
  });

  it("the low-level server's fallback handler never answers tools/call or tools/list: the guard serves both, even before the first tool", async () => {
    const server = new McpServer({ name: 's', version: '1' }, { capabilities: { tools: {} } });
    let fallbackRuns = 0;
    server.server.fallbackRequestHandler = async (request) => {
      if (request.method === 'tools/call' || request.method === 'tools/list') fallbackRuns++;
      return { content: [{ type: 'text', text: 'dynamic tool ran' }] } as never;
    };
    guardMcpServer(makePep(), server, { ...inSession, tools: {} });
    const client = await connect(server);
    const r = await client.callTool({ name: 'bank_transfer_funds', arguments: { to: 'x', amount: 5 } });
    expect(textOf(r)).toBe("ERROR: Tool 'bank_transfer_funds' was not run: the policy check failed (invalid_request)");
    expect((await client.listTools()).tools).toEqual([]);
    expect(fallbackRuns).toBe(0);
  });

  it('WARN args that do not fit the input schema are refused, not run', async () => {
    const server = new McpServer({ name: 's', version: '1' }, { capabilities: { tools: {} } });
    const tools: Record<string, RegisteredTool> = {};
    guardMcpServer(makePep(), server, { ...inSession, tools });
    let runs = 0;
    // The PDP caps limit at 10; this tool's schema wants more than 10, so the capped call cannot run.
    tools.search_orders = server.registerTool(
      'search_orders',
      { inputSchema: { query: z.string(), limit: z.number().min(11) } },
      async () => {
        runs++;
        return { content: [] };
      },
    );
    const client = await connect(server);
    const r = await client.callTool({ name: 'search_orders', arguments: { query: 'q', limit: 500 } });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe("ERROR: Tool 'search_orders' was not run: the policy check failed (invalid_request)");
    expect(runs).toBe(0);
  });
});

describe('guardMcpServer: interceptors apply through pep.guardTool', () => {
  it("a substitute answers without running the body or asking the PDP; an after deny withholds the body's result", async () => {
    const interceptors: Interceptor[] = [
      {
        name: 'cached-lookup',
        stages: ['action'],
        before: (step) =>
          step.tool === 'refund_payment' && step.args?.orderId === 'cached'
            ? { action: 'substitute', result: 'from cache' }
            : { action: 'proceed' },
      },
      {
        name: 'no-big-refund-text',
        stages: ['action'],
        after: (_step, result) =>
          JSON.stringify(result).includes('refunded 42') ? { action: 'deny', reason: 'no 42' } : { action: 'proceed' },
      },
    ];
    const ran: Ran[] = [];
    const server = makeServer(ran);
    guardMcpServer(makePep({ interceptors }), server, served(server));
    const client = await connect(server);
    const before = decisions('action');
    const sub = await client.callTool({ name: 'refund_payment', arguments: { orderId: 'cached', amount: 1 } });
    expect(sub).toEqual({ content: [{ type: 'text', text: 'from cache' }] });
    expect(ran).toHaveLength(0);
    expect(decisions('action')).toBe(before);
    const denied = await client.callTool({ name: 'refund_payment', arguments: { orderId: 'o', amount: 42 } });
    expect(denied.isError).toBe(true);
    expect(textOf(denied)).toBe("ERROR: Tool 'refund_payment' denied by policy: no 42");
    expect(ran).toHaveLength(1);
  });
});

describe('guardMcpClient: callTool is decided before the request leaves', () => {
  let ran: Ran[];
  let client: Client;
  beforeEach(async () => {
    ran = [];
    client = await guardedClient(makeServer(ran), makePep());
  });

  it('a task-augmented tools/call is refused before it leaves, as a JSON-RPC invalid request (-32600)', async () => {
    const err = await client
      .request(
        {
          method: 'tools/call',
          params: { name: 'refund_payment', arguments: { orderId: 'ord_1', amount: 1 }, task: { ttl: 60_000 } },
        },
        CallToolResultSchema,
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as { code?: unknown }).code).toBe(-32600);
    expect(ran).toHaveLength(0);
  });

  it('sends an allowed call with its permit in params._meta, and returns the result', async () => {
    const r = await client.callTool({ name: 'refund_payment', arguments: { orderId: 'ord_1', amount: 129 } });
    expect(textOf(r)).toBe('refunded 129');
    expect(ran).toHaveLength(1);
    const meta = ran[0]?.meta as Record<string, unknown>;
    expect(typeof meta[PERMIT_META_KEY]).toBe('string');
    // The permit is the PDP's for exactly this call: a verifier for the dev PDP's audience accepts it.
    const verifier = createPermitVerifier({
      keys: dev.pdp.jwksUrl,
      issuer: dev.pdp.issuer,
      audience: dev.pdp.audience,
    });
    const claims = await verifier.verify(meta[PERMIT_META_KEY] as string, {
      tool: 'refund_payment',
      args: { orderId: 'ord_1', amount: 129 },
    });
    expect(claims.sid).toBe('sess_mcp');
  });

  it("keeps the caller's other _meta, and replaces a permit the caller put there with the PDP's", async () => {
    await client.callTool({
      name: 'refund_payment',
      arguments: { orderId: 'ord_1', amount: 129 },
      _meta: { [PERMIT_META_KEY]: 'forged', progressToken: 'p1' },
    });
    const meta = ran[0]?.meta as Record<string, unknown>;
    expect(meta.progressToken).toBe('p1');
    expect(meta[PERMIT_META_KEY]).not.toBe('forged');
    expect(String(meta[PERMIT_META_KEY]).split('.')).toHaveLength(3);
  });

  it('a BLOCK never reaches the server: isError with the denial text', async () => {
    const r = await client.callTool({ name: 'bank_transfer_funds', arguments: { to: 'x', amount: 5 } });
    expect(r).toEqual({
      isError: true,
      content: [{ type: 'text', text: "ERROR: Tool 'bank_transfer_funds' denied by policy: no money transfers" }],
    });
    expect(ran).toHaveLength(0);
  });

  it('an ESCALATE never reaches the server: isError with the held text', async () => {
    const r = await client.callTool({ name: 'refund_payment', arguments: { orderId: 'ord_1', amount: 900 } });
    expect(textOf(r)).toBe("ERROR: Tool 'refund_payment' is held for human review: refunds over 500 need review");
    expect(ran).toHaveLength(0);
  });

  it('after the escalation is approved at the PDP, the identical call asked again runs once', async () => {
    const held: string[] = [];
    const c = await guardedClient(
      makeServer(ran),
      makePep({
        onDecision: (e) => {
          if (e.decision.escalationId !== undefined) held.push(e.decision.escalationId);
        },
      }),
    );
    const call = { name: 'refund_payment', arguments: { orderId: 'ord_9', amount: 900 } };
    expect((await c.callTool(call)).isError).toBe(true);
    expect(held).toHaveLength(1);
    dev.pdp.resolveEscalation(held[0] as string, 'approve');
    expect(textOf(await c.callTool(call))).toBe('refunded 900');
    expect(ran).toHaveLength(1);
  });

  it('the call sent is the call decided: params or a method read again later cannot send another call', async () => {
    let reads = 0;
    const params = {
      get name() {
        reads++;
        return reads <= 2 ? 'refund_payment' : 'bank_transfer_funds';
      },
      arguments: { orderId: 'ord_1', amount: 5, to: 'x' },
    };
    await client.callTool(params as { name: string; arguments: Record<string, unknown> });
    // A method that reads as something else to the guard's check than to the SDK.
    let methodReads = 0;
    const req = {
      get method() {
        methodReads++;
        return methodReads === 1 ? 'ping' : 'tools/call';
      },
      params: { name: 'bank_transfer_funds', arguments: { to: 'x', amount: 5 } },
    };
    await client.request(req as never, CallToolResultSchema).catch(() => undefined);
    expect(ran.map((r) => r.tool)).not.toContain('bank_transfer_funds');
  });

  it('a tools/call sent through client.request is guarded the same way', async () => {
    const r = await client.request(
      { method: 'tools/call', params: { name: 'bank_transfer_funds', arguments: { to: 'x', amount: 5 } } },
      CallToolResultSchema,
    );
    expect(r.isError).toBe(true);
    expect(ran).toHaveLength(0);
  });

  it('sends a WARN with the transformedArgs (and the permit binds them)', async () => {
    await client.callTool({ name: 'search_orders', arguments: { query: 'late', limit: 500 } });
    expect(ran.map((x) => x.args)).toEqual([{ query: 'late', limit: 10 }]);
  });

  it('fails closed when the PDP hangs or is down: nothing reaches the server', async () => {
    dev.pdp.setFault({ kind: 'hang' });
    const hung = await client.callTool({ name: 'refund_payment', arguments: { orderId: 'ord_1', amount: 1 } });
    expect(textOf(hung)).toBe("ERROR: Tool 'refund_payment' was not run: the policy check failed (pdp_timeout)");
    dev.pdp.setFault(null);
    const down = await guardedClient(makeServer(ran), makePep({ pdpUrl: await closedPort() }));
    const r = await down.callTool({ name: 'refund_payment', arguments: { orderId: 'ord_1', amount: 1 } });
    expect(textOf(r)).toBe("ERROR: Tool 'refund_payment' was not run: the policy check failed (pdp_unreachable)");
    expect(ran).toHaveLength(0);
  });

  it('checks the result at context_egress with the tool name: WARN replaces the text, BLOCK withholds it', async () => {
    const before = decisions('context_egress');
    const warned = (await client.callTool({ name: 'customer_contact', arguments: { id: 'c1' } })) as ToolResultLike;
    expect(warned.isError).toBeFalsy();
    expect(warned.content).toEqual([{ type: 'text', text: 'call [phone]\n{"text":"call [phone]"}' }]);
    expect(warned.structuredContent).toBeUndefined();
    const blocked = await client.callTool({ name: 'customer_contact', arguments: { id: 'leak' } });
    expect(blocked).toEqual({
      isError: true,
      content: [{ type: 'text', text: "ERROR: Tool 'customer_contact' denied by policy: secret in result" }],
    });
    // Both calls reached the server; the results were checked, with the tool's name.
    expect(ran).toHaveLength(2);
    const egress = dev.pdp.evidence().filter((r) => r.stage === 'context_egress');
    expect(egress.length).toBe(before + 2);
    expect(egress.slice(-2).map((r) => r.tool)).toEqual(['customer_contact', 'customer_contact']);
  });

  it('every text of a result is checked: resource links and a legacy toolResult too (BLOCK withholds, WARN replaces)', async () => {
    const server = new McpServer({ name: 's', version: '1' });
    server.registerTool('fetch_page', { inputSchema: { kind: z.string() } }, async ({ kind }) => {
      if (kind === 'link') {
        return {
          content: [
            { type: 'text', text: 'see the link' },
            { type: 'resource_link', uri: 'file:///notes', name: 'notes', description: 'token SECRET-42' },
          ],
        };
      }
      if (kind === 'legacy') return { content: [{ type: 'text', text: 'done' }], toolResult: 'token SECRET-43' };
      return {
        content: [
          { type: 'text', text: 'done' },
          { type: 'resource_link', uri: 'file:///c', name: 'contact', description: 'call 555-123-4567' },
        ],
      };
    });
    const c = await guardedClient(server, makePep());
    for (const kind of ['link', 'legacy']) {
      const r = await c.callTool({ name: 'fetch_page', arguments: { kind } });
      expect(r).toEqual({
        isError: true,
        content: [{ type: 'text', text: "ERROR: Tool 'fetch_page' denied by policy: secret in result" }],
      });
    }
    const warned = await c.callTool({ name: 'fetch_page', arguments: { kind: 'phone' } });
    expect(JSON.stringify(warned)).not.toContain('555-123-4567');
    expect(textOf(warned)).toContain('[phone]');
  });

  it('a result without text is still checked (by tool name) and returned as it is on ALLOW', async () => {
    const server = new McpServer({ name: 's', version: '1' });
    server.registerTool('render_chart', {}, async () => ({
      content: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }],
    }));
    const c = await guardedClient(server, makePep());
    const before = decisions('context_egress');
    const r = await c.callTool({ name: 'render_chart', arguments: {} });
    expect(r).toEqual({ content: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }] });
    expect(decisions('context_egress')).toBe(before + 1);
  });

  it('an error inside the adapter sends nothing and answers isError', async () => {
    const real = makePep();
    const broken: Pep = {
      ...real,
      guardTool: (name, execute, options) => {
        real.guardTool(name, execute, options);
        return async () => {
          throw new Error('adapter bug');
        };
      },
    };
    const c = await guardedClient(makeServer(ran), broken);
    const r = await c.callTool({ name: 'refund_payment', arguments: { orderId: 'ord_1', amount: 1 } });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe("ERROR: Tool 'refund_payment' was not run: the policy check failed (invalid_request)");
    expect(ran).toHaveLength(0);
  });

  it('args that are not a JSON object are refused without a PDP request, and nothing is sent', async () => {
    const before = dev.pdp.evidence().length;
    const r = await client.callTool({ name: 'refund_payment', arguments: { orderId: 'o', amount: Number.NaN } });
    expect(textOf(r)).toBe("ERROR: Tool 'refund_payment' was not run: the policy check failed (invalid_request)");
    expect(ran).toHaveLength(0);
    expect(dev.pdp.evidence().length).toBe(before);
  });

  it.each([true, false])(
    "checkResult %s: an after interceptor's replacement is the whole result (the original's images are not added back)",
    async (checkResult) => {
      const server = new McpServer({ name: 'browser', version: '1.0.0' });
      server.registerTool('take_screenshot', { inputSchema: { url: z.string() } }, async () => ({
        content: [
          { type: 'text', text: 'here is the page' },
          { type: 'image', data: Buffer.from('SECRET-PIXELS').toString('base64'), mimeType: 'image/png' },
        ],
      }));
      const noScreenshots: Interceptor = {
        name: 'no-screenshots',
        stages: ['action'],
        after: () => ({ action: 'proceedWith', result: 'screenshot withheld' }),
      };
      const c = await guardedClient(server, makePep({ interceptors: [noScreenshots] }), { checkResult });
      const r = await c.callTool({ name: 'take_screenshot', arguments: { url: 'https://admin.example' } });
      expect(r).toEqual({ content: [{ type: 'text', text: 'screenshot withheld' }] });
    },
  );

  it("a WARN on an after interceptor's replacement gives the PDP's text alone", async () => {
    const rewrite: Interceptor = {
      name: 'rewrite',
      stages: ['action'],
      after: () => ({ action: 'proceedWith', result: 'call 555-123-4567 now' }),
    };
    const c = await guardedClient(makeServer(ran), makePep({ interceptors: [rewrite] }));
    const r = await c.callTool({ name: 'customer_contact', arguments: { id: 'c1' } });
    expect(r).toEqual({ content: [{ type: 'text', text: 'call [phone] now' }] });
  });

  it('checkResult: false returns the result unchecked', async () => {
    const plain = await guardedClient(makeServer(ran), makePep(), { checkResult: false });
    const before = decisions('context_egress');
    const r = await plain.callTool({ name: 'customer_contact', arguments: { id: 'c1' } });
    expect(textOf(r)).toBe('call 555-123-4567');
    expect(decisions('context_egress')).toBe(before);
  });
});

describe('end to end: the server verifies the permit from _meta and never asks the PDP', () => {
  const PERMIT_INVALID = "ERROR: Tool 'refund_payment' was not run: the policy check failed (permit_invalid)";
  let ran: Ran[];
  let server: McpServer;
  let tools: Record<string, RegisteredTool>;
  beforeEach(() => {
    ran = [];
    server = makeServer(ran);
    const verifier = createPermitVerifier({
      keys: dev.pdp.jwksUrl,
      issuer: dev.pdp.issuer,
      audience: dev.pdp.audience,
    });
    const options = served(server, { verifier });
    tools = options.tools as Record<string, RegisteredTool>;
    guardMcpServer(makePep(), server, options);
  });

  it('two tools whose names normalize alike are both refused once both are served: a permit could not tell them apart', async () => {
    // refundPayment normalizes to refund_payment: a permit minted for one would verify for the other.
    tools.refundPayment = server.registerTool(
      'refundPayment',
      { inputSchema: { orderId: z.string(), amount: z.number() } },
      async () => {
        ran.push({ tool: 'refundPayment', args: {}, meta: undefined });
        return { content: [] };
      },
    );
    const client = await guardedClient(server, makePep(), { hideBlocked: false });
    for (const name of ['refundPayment', 'refund_payment']) {
      const r = await client.callTool({ name, arguments: { orderId: 'ord_1', amount: 5 } });
      expect(textOf(r)).toBe(`ERROR: Tool '${name}' was not run: the policy check failed (invalid_request)`);
    }
    expect(ran.map((x) => x.tool)).toEqual([]);
  });

  it('runs a call whose permit verifies; the PDP decided it once, on the client', async () => {
    const client = await guardedClient(server, makePep());
    const before = decisions('action');
    const r = await client.callTool({ name: 'refund_payment', arguments: { orderId: 'ord_1', amount: 129 } });
    expect(textOf(r)).toBe('refunded 129');
    expect(ran).toHaveLength(1);
    expect(decisions('action')).toBe(before + 1);
  });

  it('a schema default the client did not send: the client fills it in from the listed inputSchema, so the PDP decides (and the permit binds) what runs', async () => {
    const got: unknown[] = [];
    tools.list_orders = server.registerTool(
      'list_orders',
      { inputSchema: { query: z.string(), limit: z.number().default(5) } },
      async (args) => {
        got.push(args);
        return { content: [{ type: 'text', text: 'listed' }] };
      },
    );
    const client = await guardedClient(server, makePep());
    const r = await client.callTool({ name: 'list_orders', arguments: { query: 'late' } });
    // It ran: this server's verifier checked that the permit binds exactly the args the callback got.
    expect(textOf(r)).toBe('listed');
    expect(got).toEqual([{ query: 'late', limit: 5 }]);
  });

  it('refuses a call whose schema turns a sent object into a Map with other values', async () => {
    const got: unknown[] = [];
    tools.refund_many = server.registerTool(
      'refund_many',
      {
        inputSchema: {
          refunds: z
            .record(z.string(), z.number())
            .transform((r) => new Map(Object.entries(r).map(([k, v]) => [k, v * 100]))),
        },
      },
      async (a) => {
        got.push(a.refunds);
        return { content: [{ type: 'text', text: 'refunded' }] };
      },
    );
    const client = await guardedClient(server, makePep());
    const r = await client.callTool({ name: 'refund_many', arguments: { refunds: { o1: 9 } } });
    expect(textOf(r)).toBe("ERROR: Tool 'refund_many' was not run: the policy check failed (permit_invalid)");
    expect(got).toEqual([]);
  });

  it('refuses a call whose arguments the input schema changes (a coercion): the permit is bound to others', async () => {
    tools.refund_coerced = server.registerTool(
      'refund_coerced',
      { inputSchema: { orderId: z.string(), amount: z.coerce.number() } },
      async (args) => {
        ran.push({ tool: 'refund_coerced', args, meta: undefined });
        return { content: [{ type: 'text', text: 'refunded' }] };
      },
    );
    const client = await guardedClient(server, makePep());
    // The string "900" for a declared number: the server's parser would coerce it to what the PDP never
    // saw (a latch on amount > 500 never holds for a string), so the client refuses it before deciding.
    const r = await client.callTool({ name: 'refund_coerced', arguments: { orderId: 'ord_1', amount: '900' } });
    expect(textOf(r)).toBe("ERROR: Tool 'refund_coerced' was not run: the policy check failed (invalid_request)");
    expect(ran).toHaveLength(0);
  });

  it('refuses the same request sent twice with the same permit (the replay claim)', async () => {
    const client = new Client({ name: 'agent', version: '1.0.0' });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const sent: unknown[] = [];
    const send = clientSide.send.bind(clientSide);
    clientSide.send = (message, options) => {
      sent.push(message);
      return send(message, options);
    };
    await server.connect(serverSide);
    await client.connect(guardMcpClient(makePep(), clientSide));
    await client.callTool({ name: 'refund_payment', arguments: { orderId: 'ord_1', amount: 129 } });
    expect(ran).toHaveLength(1);
    const call = sent.find((m) => (m as { method?: string }).method === 'tools/call') as {
      params: { name: string; arguments: Record<string, unknown>; _meta: Record<string, unknown> };
    };
    expect(typeof call.params._meta[PERMIT_META_KEY]).toBe('string');
    // The identical request again (same params, same permit), from a client without a PEP.
    await client.close();
    const plain = await connect(server);
    const before = dev.pdp.evidence().length;
    const again = await plain.request({ method: 'tools/call', params: call.params }, CallToolResultSchema);
    expect(again).toEqual({ isError: true, content: [{ type: 'text', text: PERMIT_INVALID }] });
    expect(ran).toHaveLength(1);
    expect(dev.pdp.evidence().length).toBe(before);
  });

  it('refuses a call without a permit: permit_invalid, the body does not run, the PDP is not asked', async () => {
    const plain = await connect(server);
    const before = dev.pdp.evidence().length;
    const r = await plain.callTool({ name: 'refund_payment', arguments: { orderId: 'ord_1', amount: 129 } });
    expect(r).toEqual({ isError: true, content: [{ type: 'text', text: PERMIT_INVALID }] });
    expect(ran).toHaveLength(0);
    expect(dev.pdp.evidence().length).toBe(before);
  });

  it('refuses a permit for other args or another tool: the body does not run, the PDP is not asked', async () => {
    const agent = makePep();
    const refund = await agent.authorizeAction('refund_payment', { orderId: 'ord_1', amount: 129 });
    const lookup = await agent.authorizeAction('lookup_order', { orderId: 'ord_1', amount: 129 });
    expect([refund.verdict, lookup.verdict]).toEqual(['ALLOW', 'ALLOW']);
    const plain = await connect(server);
    const before = dev.pdp.evidence().length;
    const changed = await plain.callTool({
      name: 'refund_payment',
      arguments: { orderId: 'ord_1', amount: 5000 },
      _meta: { [PERMIT_META_KEY]: refund.permitId },
    });
    const otherTool = await plain.callTool({
      name: 'refund_payment',
      arguments: { orderId: 'ord_1', amount: 129 },
      _meta: { [PERMIT_META_KEY]: lookup.permitId },
    });
    expect([textOf(changed), textOf(otherTool)]).toEqual([PERMIT_INVALID, PERMIT_INVALID]);
    expect(ran).toHaveLength(0);
    expect(dev.pdp.evidence().length).toBe(before);
    // The untouched permit still works once: the refusals did not use it up.
    const ok = await plain.callTool({
      name: 'refund_payment',
      arguments: { orderId: 'ord_1', amount: 129 },
      _meta: { [PERMIT_META_KEY]: refund.permitId },
    });
    expect(textOf(ok)).toBe('refunded 129');
    expect(ran).toHaveLength(1);
  });

  it('refuses every call while the PDP is down only on the client: the server needs no PDP', async () => {
    dev.pdp.setFault({ kind: 'hang' });
    const client = await guardedClient(server, makePep({ timeoutMs: 300 }));
    const r = await client.callTool({ name: 'refund_payment', arguments: { orderId: 'ord_1', amount: 1 } });
    expect(textOf(r)).toBe("ERROR: Tool 'refund_payment' was not run: the policy check failed (pdp_timeout)");
    expect(ran).toHaveLength(0);
  });
});

describe("guardMcpClient: the args by the server's listed inputSchema (docs/adapters.md, Schemas)", () => {
  /** Counts the tools/list requests that leave on the client's transport; each fails to send when `failList`. */
  function countingLists(failList: boolean): { spy: (t: InMemoryTransport) => void; lists: () => number } {
    let lists = 0;
    const spy = (t: InMemoryTransport): void => {
      const send = t.send.bind(t);
      t.send = (message, options) => {
        if ((message as { method?: string }).method === 'tools/list') {
          lists++;
          if (failList) return Promise.reject(new Error('tools/list is down'));
        }
        return send(message, options);
      };
    };
    return { spy, lists: () => lists };
  }

  it('a tool list that cannot be read refuses the call invalid_request, and nothing is sent', async () => {
    const ran: Ran[] = [];
    const { spy } = countingLists(true);
    const client = await guardedClient(makeServer(ran), makePep(), { hideBlocked: false }, spy);
    const r = await client.callTool({ name: 'refund_payment', arguments: { orderId: 'ord_1', amount: 1 } });
    expect(textOf(r)).toBe("ERROR: Tool 'refund_payment' was not run: the policy check failed (invalid_request)");
    expect(ran).toHaveLength(0);
  });

  it('the list the host read is used: no second tools/list for the call', async () => {
    const ran: Ran[] = [];
    const { spy, lists } = countingLists(false);
    const client = await guardedClient(makeServer(ran), makePep(), { hideBlocked: false }, spy);
    await client.listTools();
    await client.callTool({ name: 'refund_payment', arguments: { orderId: 'ord_1', amount: 1 } });
    expect(lists()).toBe(1);
    expect(ran).toHaveLength(1);
  });
});
