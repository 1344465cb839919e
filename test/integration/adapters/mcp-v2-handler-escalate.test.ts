/**
 * ESCALATE from a guarded `createMcpHandler`, as a bare `@modelcontextprotocol/client` 2.4.0 `Client` (no
 * agent-pep on the client) meets it: at revision 2026-07-28 the SDK hands the `InputRequiredResult` to the
 * client's `elicitation/create` handler and retries with the signed `requestState` echoed; the retry is
 * decided by the PDP again, held until a reviewer approves at the PDP, then run exactly once. A client that
 * declares no elicitation gets the hold text; the default (2025-11-25) client gets the hold text too; the
 * manual route (`allowInputRequired`) is the snippet of docs/mcp.md. Against the dev PDP, over the SDK's
 * Streamable HTTP transport with the handler's `fetch` as the transport's fetch.
 */
import {
  Client,
  type ClientOptions,
  isInputRequiredResult,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { guardMcpServer, type McpHttpHandlerLike } from '../../../src/adapters/mcp.js';
import type { DecisionEvent } from '../../../src/index.js';
import { useDevPdp } from '../../support/dev-pdp-suite.js';
import { REFUND_REVIEW } from '../../support/policies.js';

const policy = { agents: ['support-ai'], latches: [REFUND_REVIEW] };
const dev = useDevPdp({ policy }, { session: 'sess_server', timeoutMs: 1000, retries: 0 });

/** A stateless 2.x server with one tool; `ran` records each refund that ran. */
function handlerOf(ran: unknown[]): McpHttpHandlerLike {
  return createMcpHandler(() => {
    const server = new McpServer({ name: 'payments', version: '2.0.0' });
    server.registerTool(
      'refund_payment',
      { inputSchema: z.object({ orderId: z.string(), amount: z.number() }) },
      async (args) => {
        ran.push(args);
        return { content: [{ type: 'text', text: `refunded ${args.amount}` }] };
      },
    );
    return server;
  });
}

/** What crossed the wire: each tools/call's `requestState` sent, and the `requestState` answered. */
interface Leg {
  sent: unknown;
  answered: unknown;
}

/** The guarded handler, the PDP's decisions it observed, the refunds that ran, and the wire's legs. */
function guarded(alter?: (body: Record<string, unknown>) => void) {
  const ran: unknown[] = [];
  const events: DecisionEvent[] = [];
  const legs: Leg[] = [];
  const handler = guardMcpServer(dev.clients.client({ onDecision: (e) => events.push(e) }), handlerOf(ran));
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    let request = new Request(input, init);
    const body = request.method === 'POST' ? (JSON.parse(await request.clone().text()) as Record<string, unknown>) : {};
    if (body.method === 'tools/call') {
      alter?.(body);
      request = new Request(request, { body: JSON.stringify(body) });
    }
    const response = await handler.fetch(request);
    if (body.method === 'tools/call') {
      // A JSON body or an SSE stream (the server's own answer): the requestState string, wherever it is.
      const answered = /"requestState":"([^"]+)"/.exec(await response.clone().text())?.[1];
      legs.push({ sent: (body.params as Record<string, unknown>).requestState, answered });
    }
    return response;
  };
  const escalationId = () => events.findLast((e) => e.decision.verdict === 'ESCALATE')?.decision.escalationId;
  return { ran, events, legs, fetch, escalationId };
}

/** A bare 2.4.0 client over the handler; `options` as the application gives them. */
async function bareClient(
  fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>,
  options?: ClientOptions,
) {
  const client = new Client({ name: 'agent', version: '1.0.0' }, options);
  return {
    client,
    connected: client.connect(new StreamableHTTPClientTransport(new URL('http://127.0.0.1/mcp'), { fetch })),
  };
}

const call = (session: string) => ({
  name: 'refund_payment',
  arguments: { orderId: 'o1', amount: 900 },
  _meta: { 'agent-pep/session': session },
});

/** The verdicts the PDP gave, in order. */
const verdicts = (events: DecisionEvent[]) => events.map((e) => e.decision.verdict);

describe('ESCALATE from a guarded createMcpHandler, to a bare @modelcontextprotocol/client 2.4.0 Client', () => {
  it('at 2026-07-28 the elicitation handler is asked; each retry echoes the signed requestState and is decided again: held until approved at the PDP, then it runs exactly once', async () => {
    const g = guarded();
    const asked: string[] = [];
    const { client, connected } = await bareClient(g.fetch, {
      versionNegotiation: { mode: 'auto' },
      capabilities: { elicitation: {} },
    });
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(String(request.params.message));
      // The human accepts twice; the reviewer approves at the PDP only before the second accept.
      if (asked.length === 2) await dev.pdp.resolveEscalation(g.escalationId() as string, 'approve');
      return { action: 'accept', content: {} };
    });
    await connected;
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const r = await client.callTool(call('sess_mrtr'));
    await client.close();
    expect(r.content).toEqual([{ type: 'text', text: 'refunded 900' }]);
    expect(g.ran).toEqual([{ orderId: 'o1', amount: 900 }]);
    expect(asked).toEqual([
      "ERROR: Tool 'refund_payment' is held for human review: refunds over 500 need review",
      "ERROR: Tool 'refund_payment' is held for human review: refunds over 500 need review",
    ]);
    // First call without state; each retry sends back, byte for byte, the state the last answer carried.
    expect(g.legs).toHaveLength(3);
    expect(g.legs[0]?.sent).toBeUndefined();
    expect(typeof g.legs[0]?.answered).toBe('string');
    expect(g.legs[1]?.sent).toBe(g.legs[0]?.answered);
    expect(g.legs[2]?.sent).toBe(g.legs[1]?.answered);
    expect(g.legs[2]?.answered).toBeUndefined();
    // Decided by the PDP on every leg, in the request's session, one escalation throughout.
    expect(verdicts(g.events)).toEqual(['ESCALATE', 'ESCALATE', 'ALLOW']);
    expect(new Set(g.events.slice(0, 2).map((e) => e.decision.escalationId)).size).toBe(1);
    expect(
      dev.pdp
        .evidence()
        .filter((e) => e.session === 'sess_mrtr' && e.stage === 'action')
        .map((e) => e.verdict),
    ).toEqual(['ESCALATE', 'ESCALATE', 'ALLOW']);
  });

  it('the approval is spent by the one run: the same call again is held afresh and does not run twice', async () => {
    const g = guarded();
    const { client, connected } = await bareClient(g.fetch, {
      versionNegotiation: { mode: 'auto' },
      capabilities: { elicitation: {} },
      inputRequired: { autoFulfill: false },
    });
    await connected;
    const held = await client.callTool(call('sess_once'), { allowInputRequired: true });
    await dev.pdp.resolveEscalation(g.escalationId() as string, 'approve');
    const state = (held as unknown as { requestState: string }).requestState;
    const retry = { ...call('sess_once'), requestState: state };
    const done = await client.callTool(retry, { allowInputRequired: true });
    const again = await client.callTool(retry, { allowInputRequired: true });
    await client.close();
    expect([isInputRequiredResult(held), isInputRequiredResult(done), isInputRequiredResult(again)]).toEqual([
      true,
      false,
      true,
    ]);
    expect(g.ran).toHaveLength(1);
    expect(verdicts(g.events)).toEqual(['ESCALATE', 'ALLOW', 'ESCALATE']);
  });

  it('a requestState altered on its way back is the SDK invalid-params error (-32602), observed, and nothing runs', async () => {
    const g = guarded((body) => {
      const params = body.params as Record<string, unknown>;
      if (typeof params.requestState === 'string') params.requestState = `${params.requestState.slice(0, -4)}AAAA`;
    });
    const { client, connected } = await bareClient(g.fetch, {
      versionNegotiation: { mode: 'auto' },
      capabilities: { elicitation: {} },
    });
    client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: {} }));
    await connected;
    const failed = await client.callTool(call('sess_tamper')).then(
      () => undefined,
      (err: unknown) => err,
    );
    await client.close();
    expect(failed).toBeInstanceOf(ProtocolError);
    expect((failed as ProtocolError).code).toBe(-32602);
    expect(g.ran).toEqual([]);
    expect(g.events.map((e) => [e.decision.verdict, e.decision.synthesized?.code])).toEqual([
      ['ESCALATE', undefined],
      ['BLOCK', 'invalid_request'],
    ]);
  });

  it('a 2026-07-28 client that declares no elicitation gets the hold text as the tool result, not an input request it cannot answer', async () => {
    const g = guarded();
    const { client, connected } = await bareClient(g.fetch, { versionNegotiation: { mode: 'auto' } });
    await connected;
    const r = await client.callTool(call('sess_noelicit'));
    await dev.pdp.resolveEscalation(g.escalationId() as string, 'approve');
    const after = await client.callTool(call('sess_noelicit'));
    await client.close();
    expect(r).toEqual({
      content: [
        { type: 'text', text: "ERROR: Tool 'refund_payment' is held for human review: refunds over 500 need review" },
      ],
      isError: true,
    });
    expect(after.isError ?? false).toBe(false);
    expect(g.ran).toHaveLength(1);
    expect(verdicts(g.events)).toEqual(['ESCALATE', 'ALLOW']);
  });

  it('a Client with default options speaks 2025-11-25: the hold text as the tool result, and the same call once approved runs once', async () => {
    const g = guarded();
    const { client, connected } = await bareClient(g.fetch, { capabilities: { elicitation: {} } });
    client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: {} }));
    await connected;
    expect(client.getNegotiatedProtocolVersion()).toBe('2025-11-25');
    const r = await client.callTool(call('sess_legacy'));
    await dev.pdp.resolveEscalation(g.escalationId() as string, 'approve');
    const after = await client.callTool(call('sess_legacy'));
    await client.close();
    expect([r.isError, after.isError ?? false]).toEqual([true, false]);
    expect(g.ran).toHaveLength(1);
    expect(verdicts(g.events)).toEqual(['ESCALATE', 'ALLOW']);
  });

  it.each(['accept', 'decline'] as const)(
    'the SDK stops after inputRequired.maxRounds (10) while nobody approved (the human answers %s): SdkError INPUT_REQUIRED_ROUNDS_EXCEEDED with the last requestState, nothing ran',
    async (action) => {
      const g = guarded();
      let asked = 0;
      const { client, connected } = await bareClient(g.fetch, {
        versionNegotiation: { mode: 'auto' },
        capabilities: { elicitation: {} },
      });
      client.setRequestHandler('elicitation/create', async () => {
        asked++;
        return action === 'accept' ? { action, content: {} } : { action };
      });
      await connected;
      const failed = await client.callTool(call('sess_rounds')).then(
        () => undefined,
        (err: unknown) => err,
      );
      await client.close();
      expect(failed).toBeInstanceOf(SdkError);
      expect((failed as SdkError).code).toBe(SdkErrorCode.InputRequiredRoundsExceeded);
      const last = ((failed as SdkError).data as { lastResult: { requestState?: unknown } }).lastResult;
      expect(last.requestState).toBe(g.legs.at(-1)?.answered);
      expect([asked, g.ran.length]).toEqual([10, 0]);
      expect(verdicts(g.events)).toEqual(Array(11).fill('ESCALATE'));
    },
  );
  it('to stop waiting, the elicitation handler throws: the call rejects with that error, no retry is sent, nothing runs', async () => {
    const g = guarded();
    const { client, connected } = await bareClient(g.fetch, {
      versionNegotiation: { mode: 'auto' },
      capabilities: { elicitation: {} },
    });
    const stop = new Error('the user stopped waiting');
    client.setRequestHandler('elicitation/create', async () => {
      throw stop;
    });
    await connected;
    const failed = await client.callTool(call('sess_stop')).then(
      () => undefined,
      (err: unknown) => err,
    );
    await client.close();
    expect(failed).toBe(stop);
    expect([g.legs.length, g.ran.length]).toEqual([1, 0]);
    expect(verdicts(g.events)).toEqual(['ESCALATE']);
  });

  describe('the manual route of docs/mcp.md ("A bare 2.x client"): the application retries once the review is decided', () => {
    /** The docs' snippet, as written there, with `reviewDecided` the application's wait. */
    async function snippet(client: Client, reviewDecided: () => Promise<void>) {
      const call = {
        name: 'refund_payment',
        arguments: { orderId: 'o1', amount: 900 },
        _meta: { 'agent-pep/session': 'sess_42' },
      };
      let result = await client.callTool(call, { allowInputRequired: true });
      while (isInputRequiredResult(result)) {
        await reviewDecided();
        const approval = { 'agent-pep/approval': { action: 'accept' as const, content: {} } };
        const retry = { ...call, requestState: result.requestState, inputResponses: approval };
        result = await client.callTool(retry, { allowInputRequired: true });
      }
      return result;
    }

    for (const [resolution, outcome] of [
      ['approve', { runs: 1, isError: false, verdicts: ['ESCALATE', 'ALLOW'] }],
      ['deny', { runs: 0, isError: true, verdicts: ['ESCALATE', 'BLOCK'] }],
    ] as const) {
      it(`reviewer ${resolution}s at the PDP: the retry with the requestState is decided again and ends the loop`, async () => {
        const g = guarded();
        const { client, connected } = await bareClient(g.fetch, {
          versionNegotiation: { mode: 'auto' },
          capabilities: { elicitation: {} },
          inputRequired: { autoFulfill: false },
        });
        await connected;
        const result = await snippet(client, () => dev.pdp.resolveEscalation(g.escalationId() as string, resolution));
        await client.close();
        expect([g.ran.length, result.isError ?? false]).toEqual([outcome.runs, outcome.isError]);
        expect(verdicts(g.events)).toEqual(outcome.verdicts);
        expect(typeof g.legs[1]?.sent).toBe('string');
      });
    }
  });
});
