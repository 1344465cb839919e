/**
 * A stateless MCP server on the v2 SDK (`@modelcontextprotocol/server` 2.x, protocol 2026-07-28): one
 * `McpServer` per request behind `createMcpHandler`, the Web-standard handler (`Request` in, `Response`
 * out: Workers, Deno, Bun, Hono as it is), and the same handler served by Node's `http` module.
 *
 * Its tool runs only with a permit for this exact call: it reads the permit the agent's guarded client
 * sent in `params._meta['agent-pep/permit']` and verifies it with `createPermitVerifier` (every check of
 * docs/permits.md, its `jti` claimed once) before acting. Nothing else of agent-pep is needed here.
 * @module
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import type { PermitVerifier } from 'agent-pep';
import { PERMIT_META_KEY } from 'agent-pep/mcp';
import { z } from 'zod';

// #region mcp-v2-server
/** The Web-standard handler of the payments server: `handler.fetch(request)` answers one HTTP request. */
export function paymentsHandler(verifier: PermitVerifier, refunds: { count: number }) {
  return createMcpHandler(() => {
    const server = new McpServer({ name: 'payments', version: '2.0.0' });
    const input = z.object({ orderId: z.string(), amount: z.number() });
    server.registerTool('refund_payment', { inputSchema: input }, async (args, ctx) => {
      const permit = ctx.mcpReq._meta?.[PERMIT_META_KEY];
      try {
        if (typeof permit !== 'string') throw new Error('no permit');
        await verifier.verify(permit, { tool: 'refund_payment', args });
      } catch {
        return { isError: true, content: [{ type: 'text', text: 'refused: no valid permit for this call' }] };
      }
      refunds.count++;
      return { content: [{ type: 'text', text: `refunded ${args.amount}` }] };
    });
    return server;
  });
}
// #endregion mcp-v2-server

/** Serves a Web-standard handler with Node's `http` module on 127.0.0.1 (port 0); resolves with its URL. */
export async function serveNode(handler: {
  fetch(request: Request): Promise<Response>;
}): Promise<{ url: URL; close(): Promise<void> }> {
  const http: Server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      const response = await handler.fetch(
        new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url ?? '/'}`, {
          method: req.method ?? 'GET',
          headers,
          ...(body ? { body } : {}),
        }),
      );
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    })();
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
