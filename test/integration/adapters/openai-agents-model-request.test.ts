/**
 * Model-request caps in the OpenAI Agents SDK (issue 43, item 5; docs/interceptors.md "Model
 * requests"): `pepModelInputFilter` checks each model call's settings (the agent's model,
 * `instructions` as `system`, `modelSettings`); a replaced `instructions` reaches the model, a deny or
 * BLOCK, or a cap the filter cannot apply, stops the run before the model is called. Driven with
 * `run` and the SDK's `ScriptedModel`, against a recording fake PDP.
 */
import { Agent, run, setTracingDisabled } from '@openai/agents';
import { assistantMessage, ScriptedModel } from '@openai/agents/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { pepModelInputFilter } from '../../../src/adapters/openai-agents.js';
import type { Interceptor } from '../../../src/index.js';
import { useFakePdp } from '../../support/fake-pdp-suite.js';

const fake = useFakePdp();
beforeAll(() => setTracingDisabled(true));

function agentWith(model: ScriptedModel, settings: Record<string, unknown> = {}) {
  return new Agent({ name: 'support', instructions: 'Be helpful.', model, modelSettings: settings });
}

const modelAsks = () =>
  fake.pdp.received
    .map((r) => r.body as { purpose?: string; content: string })
    .filter((b) => b.purpose === 'model_request')
    .map((b) => JSON.parse(b.content) as Record<string, unknown>);

describe('OpenAI Agents model requests', () => {
  it('a replaced system prompt reaches the model as its instructions; the settings were asked about', async () => {
    const brief: Interceptor = {
      name: 'brief',
      modelRequest: () => ({ action: 'proceedWith', request: { system: 'Be brief.' } }),
    };
    const pep = fake.clients.client({ interceptors: [brief] });
    const model = new ScriptedModel([[assistantMessage('ok')]]);
    await run(agentWith(model, { temperature: 0.5 }), 'hi', { callModelInputFilter: pepModelInputFilter(pep) });
    expect((model.calls[0]?.request as { systemInstructions?: string } | undefined)?.systemInstructions).toBe(
      'Be brief.',
    );
    expect(modelAsks()[0]).toEqual({ system: 'Be brief.', temperature: 0.5 });
  });

  it('a deny stops the run before the model is called', async () => {
    const no: Interceptor = { name: 'no', modelRequest: () => ({ action: 'deny', reason: 'not now' }) };
    const model = new ScriptedModel([[assistantMessage('ok')]]);
    const pending = run(agentWith(model), 'hi', {
      callModelInputFilter: pepModelInputFilter(fake.clients.client({ interceptors: [no] })),
    });
    await expect(pending).rejects.toBeDefined();
    expect(model.calls).toHaveLength(0);
  });

  it('a cap the filter cannot apply (modelSettings) stops the run: fail closed', async () => {
    const cool: Interceptor = {
      name: 'cool',
      modelRequest: () => ({ action: 'proceedWith', request: { temperature: 0.1 } }),
    };
    const model = new ScriptedModel([[assistantMessage('ok')]]);
    const pending = run(agentWith(model, { temperature: 0.9 }), 'hi', {
      callModelInputFilter: pepModelInputFilter(fake.clients.client({ interceptors: [cool] })),
    });
    await expect(pending).rejects.toBeDefined();
    expect(model.calls).toHaveLength(0);
  });

  it('an unknown option is a TypeError naming it', () => {
    expect(() => pepModelInputFilter(fake.clients.client(), { modelRequst: true } as never)).toThrow(
      expect.objectContaining({ option: 'modelRequst' }),
    );
  });
});
