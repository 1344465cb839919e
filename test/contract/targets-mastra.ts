/**
 * The Mastra target of the cross-adapter contract suite (adapter-targets.ts): an `Agent` of
 * `@mastra/core` driven by the AI SDK's MockLanguageModelV3 (Mastra runs AI SDK models), with an
 * in-memory store so that a suspended run can be approved or declined, each run in a memory thread.
 */
import { Mastra } from '@mastra/core';
import { Agent } from '@mastra/core/agent';
import { InMemoryStore } from '@mastra/core/storage';
import { createTool } from '@mastra/core/tools';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { guardTools, pepInputProcessor } from '../../src/adapters/mastra.js';
import type { Pep } from '../../src/index.js';
import type { CallSetup, SchemaKind, Target } from './adapter-targets.js';

const TOOL = 'refund_payment';
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** The model's turn that proposes the call. */
export const mockCall = (input: Record<string, unknown>, name = TOOL) => ({
  content: [{ type: 'tool-call', toolCallId: 'c1', toolName: name, input: JSON.stringify(input) }],
  finishReason: { unified: 'tool-calls', raw: undefined },
  usage,
  warnings: [],
});
/** The model's turn that answers. */
export const mockAnswer = (text: string) => ({
  content: [{ type: 'text', text }],
  finishReason: { unified: 'stop', raw: undefined },
  usage,
  warnings: [],
});

interface Prompt {
  role: string;
  content: string | { type: string; text?: string; output?: { type: string; value?: unknown } }[];
}

/** What the model read for the tool call in its last request: the result's text or the error text. */
export function toolOutput(prompt: Prompt[] | undefined): string {
  for (const m of prompt ?? []) {
    if (m.role !== 'tool' || !Array.isArray(m.content)) continue;
    for (const p of m.content) {
      if (p.type !== 'tool-result') continue;
      const v = p.output?.value;
      return typeof v === 'string' ? v : JSON.stringify(v);
    }
  }
  return '(no tool result)';
}

function shape(kind: SchemaKind = 'plain') {
  const amount = kind === 'default' ? z.number().default(900) : kind === 'coerce' ? z.coerce.number() : z.number();
  return z.object({ orderId: z.string(), amount });
}

let threads = 0;

/** An agent registered with a Mastra instance that has storage (approvals need a snapshot). */
export function mastraAgent(pep: Pep, model: MockLanguageModelV3, tools: Record<string, unknown>) {
  const agent = new Agent({
    id: 'support',
    name: 'support',
    instructions: 'Help.',
    model,
    tools: guardTools(pep, tools) as never,
    inputProcessors: [pepInputProcessor(pep) as never],
  });
  new Mastra({ agents: { support: agent }, storage: new InMemoryStore(), logger: false });
  return agent;
}

/** A memory thread of its own for each run. */
export const newThread = () => ({ thread: `mastra-${++threads}`, resource: 'contract' });

export const mastraTarget: Target = {
  name: 'mastra',
  async action(pep, args, setup: CallSetup = {}) {
    const ran: Record<string, unknown>[] = [];
    const refund = createTool({
      id: TOOL,
      description: 'Refund',
      inputSchema: shape(setup.schema),
      execute: async (a: Record<string, unknown>) => {
        ran.push(a);
        return (setup.result ?? ((x) => `refunded ${String(x.amount)}`))(a);
      },
    });
    const model = new MockLanguageModelV3({
      doGenerate: [mockCall(args), mockAnswer('done'), mockAnswer('done')] as never,
    });
    const agent = mastraAgent(pep, model, { [TOOL]: refund });
    const memory = newThread();
    const out = await agent.generate('refund', { memory });
    if (out.finishReason === 'suspended') {
      if (setup.review === undefined) return { ran, seen: 'HELD' };
      const approve = setup.review(setup.lastEscalation?.());
      const resume = { runId: out.runId as string, toolCallId: 'c1', memory };
      await (approve ? agent.approveToolCallGenerate(resume) : agent.declineToolCallGenerate(resume));
    }
    // No tool result: the run stopped at its input check (a tripwire) before the model proposed the call.
    if (out.tripwire !== undefined) return { ran, seen: out.tripwire.reason };
    const prompt = model.doGenerateCalls.at(-1)?.prompt as Prompt[] | undefined;
    return { ran, seen: toolOutput(prompt) };
  },
  async text(pep, text) {
    const model = new MockLanguageModelV3({ doGenerate: [mockAnswer('ok')] as never });
    const agent = mastraAgent(pep, model, {});
    await agent.generate(text, { memory: newThread() });
    const prompt = model.doGenerateCalls[0]?.prompt as Prompt[] | undefined;
    const user = prompt?.find((m) => m.role === 'user');
    const got = Array.isArray(user?.content) ? user.content.map((p) => p.text ?? '').join('') : user?.content;
    return { modelGot: got };
  },
  async ownRefusal(pep) {
    // The PDP's WARN (setArgs amount: 'five') gives args the tool's schema refuses: the adapter refuses them.
    await this.action(pep, { orderId: 'o-unfit', amount: 3 });
  },
};
