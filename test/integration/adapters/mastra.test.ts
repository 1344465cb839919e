/**
 * agent-pep/mastra against `@mastra/core` 1.x, driven by the AI SDK's MockLanguageModelV3 (Mastra runs
 * AI SDK models) and the real dev PDP: the rules of docs/adapters.md that the cross-adapter suite does
 * not reach (the memory thread as the session, an approval that never bypasses the PDP, the tool's own
 * approval, the result check, failures at the tool itself, strict options).
 */
import { Mastra } from '@mastra/core';
import { Agent } from '@mastra/core/agent';
import { InMemoryStore } from '@mastra/core/storage';
import { createTool } from '@mastra/core/tools';
import { type DevPdp, startDevPdp } from 'agent-pep/dev-pdp';
import { tool as aiTool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { guardTools, pepInputProcessor, pepOutputProcessor } from '../../../src/adapters/mastra.js';
import { createPep, type DecisionEvent, type Pep } from '../../../src/index.js';
import { mockAnswer, mockCall, toolOutput } from '../../contract/targets-mastra.js';
import { closedPort } from '../../support/fake-pdp.js';

const AGENT = 'support-mastra';
const POLICY = {
  agents: [AGENT],
  latches: [
    {
      id: 'review',
      stage: 'action',
      tool: 'refund_payment',
      when: { 'args.amount': { gt: 500 } },
      verdict: 'ESCALATE',
      reason: 'refunds over 500 need review',
    },
    {
      id: 'phone',
      stage: 'output',
      content: '\\b\\d{3}-\\d{3}-\\d{4}\\b',
      verdict: 'WARN',
      redact: '[phone]',
      reason: 'phone numbers are redacted',
    },
    { id: 'plan', stage: 'output', content: 'secret plan', verdict: 'BLOCK', reason: 'no plans' },
    {
      id: 'secret',
      stage: 'context_egress',
      content: 'AKIA[0-9A-Z]{16}',
      verdict: 'BLOCK',
      reason: 'credential in tool output',
    },
  ],
};
const HELD = "ERROR: Tool 'refund_payment' is held for human review: refunds over 500 need review";

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

let threads = 0;
function run(
  pep: Pep,
  input: Record<string, unknown>,
  opts: { result?: string; requireApproval?: boolean; guard?: Record<string, unknown> } = {},
) {
  const ran: Record<string, unknown>[] = [];
  const refund = createTool({
    id: 'refund_payment',
    description: 'Refund',
    inputSchema: z.object({ orderId: z.string(), amount: z.number() }),
    requireApproval: opts.requireApproval ?? false,
    execute: async (a: { orderId: string; amount: number }) => {
      ran.push(a);
      return opts.result ?? `refunded ${a.amount}`;
    },
  });
  const model = new MockLanguageModelV3({
    doGenerate: [mockCall(input), mockAnswer('done'), mockAnswer('done')] as never,
  });
  const agent = new Agent({
    id: 'support',
    name: 'support',
    instructions: 'Help.',
    model,
    tools: guardTools(pep, { refund_payment: refund }, opts.guard) as never,
  });
  new Mastra({ agents: { support: agent }, storage: new InMemoryStore(), logger: false });
  const memory = { thread: `thread-${++threads}`, resource: 'user-1' };
  const seen = () => toolOutput(model.doGenerateCalls.at(-1)?.prompt as never);
  return { agent, model, ran, memory, seen };
}

describe('agent-pep/mastra guardTools', () => {
  it('decides each call in the session of the memory thread, not the client session', async () => {
    const r = run(client(), { orderId: 'o1', amount: 10 });
    await r.agent.generate('refund', { memory: r.memory });
    expect(r.ran).toEqual([{ orderId: 'o1', amount: 10 }]);
    const actions = pdp.evidence().filter((e) => e.stage === 'action' && e.session === r.memory.thread);
    expect(actions).toHaveLength(1);
    expect(pdp.evidence().filter((e) => e.session === r.memory.thread && e.stage === 'context_egress')).toHaveLength(1);
  });

  it('an approval in Mastra never bypasses the PDP: approved in the host but still held at the PDP, the body does not run', async () => {
    const r = run(client(), { orderId: 'o2', amount: 901 });
    const out = await r.agent.generate('refund', { memory: r.memory });
    expect(out.finishReason).toBe('suspended');
    expect(r.ran).toEqual([]);
    await r.agent.approveToolCallGenerate({ runId: out.runId as string, toolCallId: 'c1', memory: r.memory });
    expect(r.ran).toEqual([]);
    expect(r.seen()).toBe(HELD);
    const asked = pdp.evidence().filter((e) => e.stage === 'action' && e.session === r.memory.thread);
    expect(asked.map((e) => e.verdict)).toEqual(['ESCALATE', 'ESCALATE']);
  });

  it('approved at the PDP and in Mastra, the resumed call is decided again and runs once with a verified permit', async () => {
    events = [];
    const r = run(client(), { orderId: 'o3', amount: 902 });
    const out = await r.agent.generate('refund', { memory: r.memory });
    const id = events.findLast((e) => e.decision.escalationId !== undefined)?.decision.escalationId;
    expect(id).toBeDefined();
    pdp.resolveEscalation(id as string, 'approve');
    await r.agent.approveToolCallGenerate({ runId: out.runId as string, toolCallId: 'c1', memory: r.memory });
    expect(r.ran).toEqual([{ orderId: 'o3', amount: 902 }]);
    expect(r.seen()).toBe('refunded 902');
  });

  it('a new run whose model reuses a call id is sent for approval again (held calls are per run)', async () => {
    const pep = client();
    const first = run(pep, { orderId: 'o11', amount: 905 });
    const out = await first.agent.generate('refund', { memory: first.memory });
    await first.agent.approveToolCallGenerate({ runId: out.runId as string, toolCallId: 'c1', memory: first.memory });
    expect(first.seen()).toBe(HELD);
    const again = run(pep, { orderId: 'o11', amount: 905 });
    const second = await again.agent.generate('refund', { memory: again.memory });
    expect(second.finishReason).toBe('suspended');
    expect(again.ran).toEqual([]);
  });

  it('declined in Mastra, the body never runs', async () => {
    const r = run(client(), { orderId: 'o4', amount: 903 });
    const out = await r.agent.generate('refund', { memory: r.memory });
    await r.agent.declineToolCallGenerate({ runId: out.runId as string, toolCallId: 'c1', memory: r.memory });
    expect(r.ran).toEqual([]);
  });

  it('with approval: false, ESCALATE is a hold the model is told about (no suspension)', async () => {
    const r = run(client(), { orderId: 'o5', amount: 904 }, { guard: { approval: false } });
    const out = await r.agent.generate('refund', { memory: r.memory });
    expect(out.finishReason).not.toBe('suspended');
    expect(r.ran).toEqual([]);
    expect(r.seen()).toBe(HELD);
  });

  it("the tool's own requireApproval still asks first; the PDP decides only once it is approved", async () => {
    const r = run(client(), { orderId: 'o6', amount: 5 }, { requireApproval: true });
    const out = await r.agent.generate('refund', { memory: r.memory });
    expect(out.finishReason).toBe('suspended');
    expect(pdp.evidence().filter((e) => e.session === r.memory.thread && e.stage === 'action')).toHaveLength(0);
    await r.agent.approveToolCallGenerate({ runId: out.runId as string, toolCallId: 'c1', memory: r.memory });
    expect(r.ran).toEqual([{ orderId: 'o6', amount: 5 }]);
  });

  it('a result the PDP blocks at context_egress never reaches the model (the body ran once)', async () => {
    const r = run(client(), { orderId: 'o7', amount: 6 }, { result: 'key AKIAABCDEFGHIJKLMNOP' });
    await r.agent.generate('refund', { memory: r.memory });
    expect(r.ran).toHaveLength(1);
    expect(r.seen()).not.toContain('AKIA');
    expect(r.seen()).toBe("ERROR: Tool 'refund_payment' denied by policy: credential in tool output");
  });

  it('with checkResult: false, the result goes to the model unchecked', async () => {
    const r = run(
      client(),
      { orderId: 'o8', amount: 6 },
      { result: 'key AKIAABCDEFGHIJKLMNOP', guard: { checkResult: false } },
    );
    await r.agent.generate('refund', { memory: r.memory });
    expect(r.seen()).toContain('AKIA');
  });

  it('a PDP that is down fails closed at the tool: the model reads the code, the body never runs, onDecision sees it', async () => {
    events = [];
    const r = run(client({ pdpUrl: await closedPort() }), { orderId: 'o9', amount: 1 });
    await r.agent.generate('refund', { memory: r.memory });
    expect(r.ran).toEqual([]);
    expect(r.seen()).toBe("ERROR: Tool 'refund_payment' was not run: the policy check failed (pdp_unreachable)");
    expect(events.some((e) => e.decision.synthesized?.code === 'pdp_unreachable')).toBe(true);
  });

  it('a simulated client is refused at the tool', async () => {
    const r = run(client({ simulated: true }), { orderId: 'o10', amount: 1 });
    await r.agent.generate('refund', { memory: r.memory });
    expect(r.ran).toEqual([]);
    expect(r.seen()).toBe("ERROR: Tool 'refund_payment' was not run: the policy check failed (simulated)");
  });

  it('refuses what is not a Mastra tool, and unknown or bad options, with a TypeError', () => {
    const pep = client();
    const vercel = aiTool({ inputSchema: z.object({}), execute: async () => 'x' });
    expect(() => guardTools(pep, { v: vercel } as never)).toThrow(TypeError);
    const t = createTool({ id: 't', description: 't', execute: async () => 'x' });
    expect(() => guardTools(pep, { t }, { nope: true } as never)).toThrow(expect.objectContaining({ option: 'nope' }));
    expect(() => guardTools(pep, { t }, { approval: 'yes' } as never)).toThrow(
      expect.objectContaining({ option: 'approval' }),
    );
    expect(() => guardTools(createPep({ pdpUrl: pdp.url, agentId: AGENT, session: 's' }), { t })).toThrow(TypeError);
  });
});

describe('agent-pep/mastra pepInputProcessor', () => {
  it("checks the user's text in the session of the memory thread, once per text", async () => {
    const pep = client();
    const model = new MockLanguageModelV3({ doGenerate: [mockAnswer('ok'), mockAnswer('ok')] as never });
    const agent = new Agent({
      id: 'a',
      name: 'a',
      instructions: 'Help.',
      model,
      inputProcessors: [pepInputProcessor(pep) as never],
    });
    const thread = `thread-${++threads}`;
    await agent.generate('hello there', { memory: { thread, resource: 'user-1' } });
    expect(pdp.evidence().filter((e) => e.stage === 'input' && e.session === thread)).toHaveLength(1);
  });

  it('refuses unknown options with a TypeError naming the option', () => {
    expect(() => pepInputProcessor(client(), { nope: 1 } as never)).toThrow(
      expect.objectContaining({ option: 'nope' }),
    );
  });
});

describe('agent-pep/mastra pepOutputProcessor', () => {
  async function generated(pep: Pep, answer: string) {
    const model = new MockLanguageModelV3({ doGenerate: [mockAnswer(answer)] as never });
    const agent = new Agent({
      id: 'a',
      name: 'a',
      instructions: 'Help.',
      model,
      outputProcessors: [pepOutputProcessor(pep) as never],
    });
    const thread = `thread-${++threads}`;
    const out = await agent.generate('hi', { memory: { thread, resource: 'user-1' } });
    return { text: out.text, thread };
  }

  it('returns the text as the PDP allows it, WARN replacing it, decided in the session of the thread', async () => {
    expect((await generated(client(), 'all fine')).text).toBe('all fine');
    const r = await generated(client(), 'call 555-123-4567');
    expect(r.text).toBe('call [phone]');
    expect(pdp.evidence().filter((e) => e.stage === 'output' && e.session === r.thread)).toHaveLength(1);
  });

  it('a refused text never reaches the caller: BLOCK, a PDP that is down and a simulated client give the refusal text', async () => {
    expect((await generated(client(), 'the secret plan')).text).toBe('ERROR: output blocked by policy: no plans');
    const down = await generated(client({ pdpUrl: await closedPort() }), 'the secret plan');
    expect(down.text).toMatch(/^ERROR: .*\(pdp_unreachable\)$/);
    const simulated = await generated(client({ simulated: true }), 'all fine');
    expect(simulated.text).toMatch(/^ERROR: .*\(simulated\)$/);
  });
});
