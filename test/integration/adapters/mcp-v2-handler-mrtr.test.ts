/**
 * A tool's own multi-round-trip request (MCP 2026-07-28: it answers `inputRequired(...)`, the client retries
 * with the `inputResponses` and the tool's `requestState`) works behind a guarded `createMcpHandler` handler
 * as behind the bare one (CONTRACT section 16: the conformance behaviour is the bare server's): only a
 * `requestState` the guard signed is the guard's to check and keep from the server; the retry is decided by
 * the PDP again like any call. The SDK's own 2.x client over its Streamable HTTP transport (the handler's
 * `fetch` as its fetch), the dev PDP deciding.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { acceptedContent, createMcpHandler, inputRequired, McpServer } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { guardMcpServer, type McpHttpHandlerLike, SESSION_META_KEY } from '../../../src/adapters/mcp.js';
import { useDevPdp } from '../../support/dev-pdp-suite.js';

const policy = {
  agents: ['support-ai'],
  latches: [
    {
      id: 'no-prod',
      stage: 'action',
      tool: 'deploy',
      when: { 'args.env': { eq: 'prod' } },
      verdict: 'BLOCK',
      reason: 'no prod',
    },
  ],
};
const dev = useDevPdp({ policy }, { session: 'sess_mrtr', timeoutMs: 1000, retries: 0 });

/** A server whose `deploy` asks the user to confirm first (with a `requestState` of its own, or none). */
function handlerOf(ran: string[], requestState: string | undefined): McpHttpHandlerLike {
  return createMcpHandler(() => {
    const server = new McpServer({ name: 'deployer', version: '2.0.0' });
    const confirmation = z.object({ confirm: z.boolean() });
    server.registerTool('deploy', { inputSchema: z.object({ env: z.string() }) }, async ({ env }, ctx) => {
      if (acceptedContent(ctx.mcpReq.inputResponses, 'confirm', confirmation)?.confirm !== true) {
        const confirm = inputRequired.elicit({ message: `Deploy to ${env}?`, requestedSchema: confirmation });
        return inputRequired({ inputRequests: { confirm }, ...(requestState ? { requestState } : {}) });
      }
      ran.push(`deploy:${env}`);
      return { content: [{ type: 'text', text: `deployed to ${env}` }] };
    });
    return server;
  });
}

async function confirmingClient(handler: McpHttpHandlerLike): Promise<Client> {
  const client = new Client(
    { name: 'agent', version: '1.0.0' },
    { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { confirm: true } }));
  const fetch = (input: string | URL | Request, init?: RequestInit) => handler.fetch(new Request(input, init));
  await client.connect(new StreamableHTTPClientTransport(new URL('http://127.0.0.1/mcp'), { fetch }));
  return client;
}

const _meta = { [SESSION_META_KEY]: 'sess_req' };

describe('guardMcpServer(pep, createMcpHandler(...)): a tool of its own input_required round trip', () => {
  it.each([
    ['with a requestState of its own', 'server-own-state'],
    ['with input responses only', undefined],
  ])('completes %s, as on the bare handler; the retry is decided again', async (_, state) => {
    const ran: string[] = [];
    const client = await confirmingClient(guardMcpServer(dev.clients.client(), handlerOf(ran, state)));
    const before = dev.pdp.evidence().length;
    const r = await client.callTool({ name: 'deploy', arguments: { env: 'staging' }, _meta });
    expect(r.content).toEqual([{ type: 'text', text: 'deployed to staging' }]);
    expect(ran).toEqual(['deploy:staging']);
    const decided = dev.pdp
      .evidence()
      .slice(before)
      .filter((e) => e.stage === 'action' && e.visibility === undefined);
    expect(decided.map((e) => e.verdict)).toEqual(['ALLOW', 'ALLOW']);
    await client.close();
  });

  it("a retry with the tool's requestState is still decided: a call the policy blocks never runs", async () => {
    const ran: string[] = [];
    const handler = guardMcpServer(dev.clients.client(), handlerOf(ran, 'server-own-state'));
    const res = await handler.fetch(
      new Request('http://127.0.0.1/mcp', {
        method: 'POST',
        headers: {
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
          'mcp-protocol-version': '2025-11-25',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: {
            name: 'deploy',
            arguments: { env: 'prod' },
            requestState: 'server-own-state',
            inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
            _meta,
          },
        }),
      }),
    );
    expect(await res.text()).toContain('"isError":true');
    expect(ran).toEqual([]);
  });
});
