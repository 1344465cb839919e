/**
 * A guarded `createMcpHandler` handler reads a request body only up to the SDK's own ceiling
 * (`maxRequestBodySize`, default 4 MiB, as `createMcpHandler`'s): the guard reads the body before the SDK
 * does, so an unbounded read would let any client make it hold any body in memory. Over the ceiling it
 * answers as the SDK does (413, JSON-RPC -32000) and nothing is decided or run.
 */
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { guardMcpServer, type McpHttpHandlerLike, SESSION_META_KEY } from '../../../src/adapters/mcp.js';
import { useDevPdp } from '../../support/dev-pdp-suite.js';

const dev = useDevPdp({ policy: { agents: ['support-ai'], latches: [] } }, { session: 'sess_size' });

function handlerOf(ran: string[]): McpHttpHandlerLike {
  return createMcpHandler(() => {
    const server = new McpServer({ name: 'notes', version: '2.0.0' });
    server.registerTool('save_note', { inputSchema: z.object({ text: z.string() }) }, async () => {
      ran.push('save_note');
      return { content: [{ type: 'text', text: 'saved' }] };
    });
    return server;
  });
}

const HEADERS = {
  accept: 'application/json, text/event-stream',
  'content-type': 'application/json',
  'mcp-protocol-version': '2025-11-25',
};
const call = (text: string) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'save_note', arguments: { text }, _meta: { [SESSION_META_KEY]: 'sess_req' } },
  });

describe('guardMcpServer(pep, createMcpHandler(...)) bounds the body it reads (maxRequestBodySize)', () => {
  it('a body over the ceiling is answered 413 as the SDK answers it; nothing is decided or run', async () => {
    const ran: string[] = [];
    const guarded = guardMcpServer(dev.clients.client(), handlerOf(ran), { maxRequestBodySize: 1024 });
    const before = dev.pdp.evidence().length;
    const response = await guarded.fetch(
      new Request('http://127.0.0.1/mcp', { method: 'POST', headers: HEADERS, body: call('x'.repeat(4096)) }),
    );
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32000);
    expect(ran).toEqual([]);
    expect(dev.pdp.evidence().length).toBe(before);
  });

  it('an endless body is refused once it passes the ceiling: the guard stops reading', async () => {
    const ran: string[] = [];
    const guarded = guardMcpServer(dev.clients.client(), handlerOf(ran), { maxRequestBodySize: 8192 });
    let pulls = 0;
    const chunk = new TextEncoder().encode(' '.repeat(1024));
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulls++;
        controller.enqueue(chunk);
      },
    });
    const request = new Request('http://127.0.0.1/mcp', {
      method: 'POST',
      headers: HEADERS,
      body,
      duplex: 'half',
    } as RequestInit);
    const response = await guarded.fetch(request);
    expect(response.status).toBe(413);
    expect(pulls).toBeLessThan(64);
    expect(ran).toEqual([]);
  });

  it('a body within the ceiling is decided and runs', async () => {
    const ran: string[] = [];
    const guarded = guardMcpServer(dev.clients.client(), handlerOf(ran), { maxRequestBodySize: 8192 });
    const response = await guarded.fetch(
      new Request('http://127.0.0.1/mcp', { method: 'POST', headers: HEADERS, body: call('short') }),
    );
    expect(response.status).toBe(200);
    expect(ran).toEqual(['save_note']);
  });

  it('a bad ceiling is a TypeError naming maxRequestBodySize', () => {
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '1024']) {
      let err: unknown;
      try {
        guardMcpServer(dev.clients.client(), handlerOf([]), { maxRequestBodySize: bad as never });
      } catch (e) {
        err = e;
      }
      expect((err as { option?: string }).option).toBe('maxRequestBodySize');
    }
  });
});
