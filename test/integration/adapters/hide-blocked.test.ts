/**
 * `hideBlocked` in the agent-framework adapters (docs/visibility.md): the model is offered only the
 * tools the policy shows, asked once per step (one visibility batch, one evidence record), and a hidden
 * tool called anyway is still decided per call. Each framework driven with its own test double.
 */
import { AIMessage } from '@langchain/core/messages';
import { Agent, tool as agentTool, run } from '@openai/agents';
import { assistantMessage, ScriptedModel } from '@openai/agents/testing';
import { generateText, jsonSchema, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { createAgent, fakeModel, tool as lcTool } from 'langchain';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { guardTools, pepPrepareStep } from '../../../src/adapters/ai.js';
import { pepMiddleware } from '../../../src/adapters/langchain.js';
import { guardTools as guardAgentTools } from '../../../src/adapters/openai-agents.js';
import type { Pep } from '../../../src/index.js';
import { useDevPdp } from '../../support/dev-pdp-suite.js';
import { TOOL_SURFACE_LATCHES } from '../../support/policies.js';

const dev = useDevPdp(
  { policy: { agents: ['support-ai'], latches: [...TOOL_SURFACE_LATCHES] } },
  { session: 'sess_hide' },
);
function makePep(): Pep {
  return dev.clients.client();
}
const visibilityRecords = (from: number) =>
  dev.pdp
    .evidence()
    .slice(from)
    .filter((r) => r.visibility !== undefined);

describe('agent-pep/ai: guardTools(..., { hideBlocked: true }) with pepPrepareStep', () => {
  const finish = { finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 }, warnings: [] };
  const aiTools = () => ({
    lookup_order: tool({ inputSchema: jsonSchema({ type: 'object' }), execute: async () => 'found' }),
    bank_transfer: tool({ inputSchema: jsonSchema({ type: 'object' }), execute: async () => 'sent' }),
    refund_payment: tool({ inputSchema: jsonSchema({ type: 'object' }), execute: async () => 'refunded' }),
  });

  it('each step offers only the visible tools, asked in one batch per step', async () => {
    const model = new MockLanguageModelV3({
      doGenerate: [{ ...finish, content: [{ type: 'text', text: 'done' }] }] as never,
    });
    const tools = guardTools(makePep(), aiTools(), { hideBlocked: true, approval: false });
    const before = dev.pdp.evidence().length;
    await generateText({ model, tools, prepareStep: pepPrepareStep(tools), stopWhen: stepCountIs(3), prompt: 'hi' });
    expect(model.doGenerateCalls).toHaveLength(1);
    for (const call of model.doGenerateCalls) {
      expect((call.tools ?? []).map((t) => t.name)).toEqual(['lookup_order', 'refund_payment']);
    }
    expect(visibilityRecords(before)).toHaveLength(1);
  });

  it('pepPrepareStep refuses tools not made with hideBlocked: true; hideBlocked must be a boolean', () => {
    expect(() => pepPrepareStep(guardTools(makePep(), aiTools()))).toThrow(TypeError);
    expect(() => guardTools(makePep(), aiTools(), { hideBlocked: 'yes' as never })).toThrow(
      expect.objectContaining({ option: 'hideBlocked' }),
    );
  });
});

describe('agent-pep/langchain: pepMiddleware(pep, { hideBlocked: true })', () => {
  const lcTools = () => [
    lcTool(async () => 'found', { name: 'lookup_order', description: 'Look up', schema: z.object({}) }),
    lcTool(async () => 'sent', { name: 'bank_transfer', description: 'Send money', schema: z.object({}) }),
  ];

  it('each model call is offered only the visible tools; a hidden tool called anyway is refused per call', async () => {
    let runs = 0;
    const tools = lcTools();
    tools[1] = lcTool(
      async () => {
        runs++;
        return 'sent';
      },
      { name: 'bank_transfer', description: 'Send money', schema: z.object({}) },
    );
    const model = fakeModel()
      .respondWithTools([{ name: 'bank_transfer', args: {}, id: 'c1' }])
      .respond(new AIMessage('ok'));
    const offered: string[][] = [];
    const bindTools = model.bindTools.bind(model);
    model.bindTools = ((list: { name: string }[], ...rest: unknown[]) => {
      offered.push(list.map((t) => t.name));
      return (bindTools as (...a: unknown[]) => unknown)(list, ...rest);
    }) as never;
    const agent = createAgent({ model, tools, middleware: [pepMiddleware(makePep(), { hideBlocked: true })] });
    await agent.invoke({ messages: [{ role: 'user', content: 'send money' }] }, { configurable: { thread_id: 't1' } });
    expect(offered.length).toBeGreaterThan(0);
    for (const names of offered) expect(names).toEqual(['lookup_order']);
    expect(runs).toBe(0);
  });
});

describe('agent-pep/openai-agents: guardTools(pep, tools, { hideBlocked: true })', () => {
  const make = (name: string) =>
    agentTool({ name, description: name, parameters: z.object({}), execute: async () => `ran ${name}` });

  it('each turn offers only the visible tools, in one batch per turn', async () => {
    const model = new ScriptedModel([[assistantMessage('hello')]]);
    const tools = guardAgentTools(makePep(), [make('lookup_order'), make('bank_transfer'), make('refund_payment')], {
      hideBlocked: true,
    });
    const agent = new Agent({ name: 'support', instructions: 'Help.', model, tools });
    const before = dev.pdp.evidence().length;
    await run(agent, 'hi');
    const names = (model.calls[0]?.request.tools ?? []).map((t) => (t as { name: string }).name);
    expect(names).toEqual(['lookup_order', 'refund_payment']);
    expect(visibilityRecords(before)).toHaveLength(1);
  });
});
