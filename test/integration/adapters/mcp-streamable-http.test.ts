/**
 * guardMcpServer behind the SDK's Node `StreamableHTTPServerTransport` (whose `onmessage` is an accessor
 * of its class that forwards to an inner Web-standard transport, where requests arrive): a guarded server
 * still answers `initialize`, `tools/list` and `tools/call`, stateless and stateful, for an `McpServer`
 * built with `capabilities: { tools }` (its tools registered before guarding, or after it) and for one whose
 * tools were registered before guarding; the guard touches no transport member. Real HTTP
 * on 127.0.0.1 (port 0), the SDK's own client transport, the dev PDP.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer, type RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { guardMcpClient, guardMcpServer, SESSION_META_KEY } from '../../../src/adapters/mcp.js';
import { useDevPdp } from '../../support/dev-pdp-suite.js';

const policy = {
  agents: ['support-ai'],
  latches: [{ id: 'no-transfers', stage: 'action', tool: 'bank_*', verdict: 'BLOCK', reason: 'no money transfers' }],
};
const dev = useDevPdp({ policy }, { session: 'sess_http', timeoutMs: 1000, retries: 0 });

/** A server, the record of its tools' handles the guard serves, and what to register once it is guarded. */
interface Built {
  server: McpServer;
  tools: Record<string, RegisteredTool>;
  afterGuarding?: () => void;
}
type Build = (ran: string[]) => Built;

/** Tools registered on a server declared with `capabilities: { tools }`, before the guard. */
const declared: Build = (ran) => {
  const server = new McpServer({ name: 'payments', version: '1.0.0' }, { capabilities: { tools: {} } });
  return { server, tools: register(server, ran) };
};
/** A server declared with `capabilities: { tools }`, its tools registered after the guard (handles added). */
const declaredAfter: Build = (ran) => {
  const server = new McpServer({ name: 'payments', version: '1.0.0' }, { capabilities: { tools: {} } });
  const tools: Record<string, RegisteredTool> = {};
  return { server, tools, afterGuarding: () => Object.assign(tools, register(server, ran)) };
};
/** Tools registered before the guard, no declared capability. */
const preRegistered: Build = (ran) => {
  const server = new McpServer({ name: 'payments', version: '1.0.0' });
  return { server, tools: register(server, ran) };
};

function register(server: McpServer, ran: string[]): Record<string, RegisteredTool> {
  const tools: Record<string, RegisteredTool> = {};
  for (const name of ['bank_transfer', 'lookup_order']) {
    tools[name] = server.registerTool(
      name,
      { inputSchema: { id: z.string(), copies: z.number().default(1) } },
      async (args) => {
        ran.push(`${name}:${args.id}:${args.copies}`);
        return { content: [{ type: 'text', text: `${name} ${args.id}` }] };
      },
    );
  }
  return tools;
}

interface Running {
  url: URL;
  ran: string[];
  close(): Promise<void>;
}

/**
 * An HTTP server: stateless, one guarded `McpServer` and transport per request (the SDK's documented
 * stateless pattern); stateful, one of each for the whole run.
 */
async function serve(build: Build, mode: 'stateless' | 'stateful'): Promise<Running> {
  const ran: string[] = [];
  const make = async () => {
    const { server, tools, afterGuarding } = build(ran);
    guardMcpServer(dev.clients.client(), server, { tools });
    afterGuarding?.();
    const transport = new StreamableHTTPServerTransport(
      mode === 'stateful' ? { sessionIdGenerator: () => crypto.randomUUID() } : {},
    );
    await server.connect(transport);
    return transport;
  };
  const shared = mode === 'stateful' ? await make() : undefined;
  const http: Server = createServer((req, res) => {
    void (async () => {
      const transport = shared ?? (await make());
      if (!shared) res.on('close', () => void transport.close());
      await transport.handleRequest(req, res);
    })();
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    ran,
    close: async () => {
      await shared?.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

describe('guardMcpServer over Streamable HTTP: a guarded server keeps answering', () => {
  let running: Running | undefined;
  let client: Client | undefined;
  afterEach(async () => {
    await client?.close();
    await running?.close();
    running = undefined;
    client = undefined;
  });

  for (const [label, build] of [
    ['capabilities: { tools } and tools before guarding', declared],
    ['capabilities: { tools } and tools registered after guarding', declaredAfter],
    ['tools registered before guarding', preRegistered],
  ] as const) {
    for (const mode of ['stateless', 'stateful'] as const) {
      it(`${label}, ${mode}: initialize, tools/list and tools/call are answered, each call decided in the request's session`, async () => {
        running = await serve(build, mode);
        client = new Client({ name: 'agent', version: '1.0.0' });
        const transport = guardMcpClient(
          dev.clients.client().withSession('sess_agent'),
          new StreamableHTTPClientTransport(running.url),
        );
        await client.connect(transport, { timeout: 5000 });
        const listed = await client.listTools(undefined, { timeout: 5000 });
        expect(listed.tools.map((t) => t.name)).toEqual(['lookup_order']);
        const before = dev.pdp.evidence().length;
        const ok = await client.callTool({ name: 'lookup_order', arguments: { id: 'o1' } }, undefined, {
          timeout: 5000,
        });
        expect(ok.isError).toBeFalsy();
        const blocked = await client.callTool({ name: 'bank_transfer', arguments: { id: 'x' } }, undefined, {
          timeout: 5000,
        });
        expect(blocked.isError).toBe(true);
        expect(running.ran).toEqual(['lookup_order:o1:1']);
        const steps = dev.pdp
          .evidence()
          .slice(before)
          .filter((r) => r.visibility === undefined && r.stage === 'action')
          .map((r) => [r.tool, r.session, r.verdict, r.argsHash]);
        // client, server, client: the server decides on the args as they run (the schema's default
        // `copies: 1` filled in), which the client decided on too (from the listed schema): one hash
        expect(steps.map((s) => s.slice(0, 3))).toEqual([
          ['lookup_order', 'sess_agent', 'ALLOW'],
          ['lookup_order', 'sess_agent', 'ALLOW'],
          ['bank_transfer', 'sess_agent', 'BLOCK'],
        ]);
        expect(steps[1]?.[3]).toBe(steps[0]?.[3]);
        expect(steps[0]?.[3]).toEqual(expect.any(String));
        // A client that sends no default: the server still decides on the args that run (stateless: a
        // stateful server serves one MCP session, the guarded client's).
        if (mode === 'stateful') return;
        const raw = new Client({ name: 'raw', version: '1.0.0' });
        await raw.connect(new StreamableHTTPClientTransport(running.url), { timeout: 5000 });
        const mark = dev.pdp.evidence().length;
        await raw.callTool({
          name: 'lookup_order',
          arguments: { id: 'o1' },
          _meta: { [SESSION_META_KEY]: 'sess_raw' },
        });
        await raw.close();
        const rawStep = dev.pdp
          .evidence()
          .slice(mark)
          .find((r) => r.stage === 'action');
        expect([rawStep?.session, rawStep?.argsHash]).toEqual(['sess_raw', steps[0]?.[3]]);
        expect(running.ran).toEqual(['lookup_order:o1:1', 'lookup_order:o1:1']);
      });
    }
  }
});
