/**
 * Model-request caps in the AI SDK (issue 43, item 5; docs/interceptors.md "Model requests"):
 * `pepMiddleware` checks each model call's `model`, system messages, `temperature`, `topP` and
 * `maxOutputTokens` before it is sent; an interceptor or the PDP caps them (never raises), a deny or
 * BLOCK rejects the call with the model never called. Driven with `ai` 6's `generateText`,
 * `wrapLanguageModel` and `MockLanguageModelV3`, against a recording fake PDP.
 */
import { generateText, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { pepMiddleware } from '../../../src/adapters/ai.js';
import type { Interceptor } from '../../../src/index.js';
import { answer, type Received } from '../../support/fake-pdp.js';
import { useFakePdp } from '../../support/fake-pdp-suite.js';

const fake = useFakePdp();

function model() {
  return new MockLanguageModelV3({
    modelId: 'big-model',
    doGenerate: async () => ({
      content: [{ type: 'text', text: 'ok' }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage: {
        inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 1, text: 1, reasoning: 0 },
      },
      warnings: [],
    }),
  } as never);
}

const cap: Interceptor = {
  name: 'cap',
  modelRequest: () => ({
    action: 'proceedWith',
    request: { temperature: 0.2, maxOutputTokens: 256, system: 'Be brief.' },
  }),
};

async function call(pep: ReturnType<typeof fake.clients.client>, m = model(), opts = {}) {
  await generateText({
    model: wrapLanguageModel({ model: m, middleware: pepMiddleware(pep, opts) }),
    system: 'Be helpful.',
    prompt: 'hi',
    temperature: 0.9,
    maxOutputTokens: 4096,
  });
  return m;
}

describe('AI SDK model requests', () => {
  it('an interceptor caps the call: the model receives the capped settings and the replaced system prompt', async () => {
    const m = await call(fake.clients.client({ interceptors: [cap] }));
    const sent = m.doGenerateCalls[0] as unknown as {
      temperature: number;
      maxOutputTokens: number;
      prompt: { role: string; content: unknown }[];
    };
    expect(sent.temperature).toBe(0.2);
    expect(sent.maxOutputTokens).toBe(256);
    expect(sent.prompt.filter((p) => p.role === 'system')).toEqual([{ role: 'system', content: 'Be brief.' }]);
    const asked = fake.pdp.received.map((r) => r.body as { stage: string; purpose?: string; content: string });
    const modelAsk = asked.find((b) => b.purpose === 'model_request');
    expect(JSON.parse(modelAsk?.content ?? '{}')).toEqual({
      model: 'big-model',
      system: 'Be brief.',
      temperature: 0.2,
      maxOutputTokens: 256,
    });
  });

  it('a PDP WARN caps with modelRequest: true, and never raises', async () => {
    fake.pdp.handler = (req: Received, res) => {
      const b = req.body as { requestId: string; purpose?: string };
      answer(res, {
        verdict: b.purpose === 'model_request' ? 'WARN' : 'ALLOW',
        requestId: b.requestId,
        ...(b.purpose === 'model_request'
          ? { transformedContent: JSON.stringify({ temperature: 1.5, maxOutputTokens: 100 }) }
          : {}),
      });
    };
    const m = await call(fake.clients.client(), model(), { modelRequest: true });
    expect(m.doGenerateCalls[0]).toMatchObject({ temperature: 0.9, maxOutputTokens: 100 });
  });

  it('a deny stops the call: generateText rejects and the model is never called', async () => {
    const no: Interceptor = { name: 'no-big', modelRequest: () => ({ action: 'deny', reason: 'too big' }) };
    const m = model();
    await expect(call(fake.clients.client({ interceptors: [no] }), m)).rejects.toMatchObject({
      code: 'blocked',
      interceptor: 'no-big',
    });
    expect(m.doGenerateCalls).toHaveLength(0);
  });

  it('a replaced model cannot be applied in a middleware: refused, the model never called', async () => {
    const swap: Interceptor = {
      name: 'swap',
      modelRequest: () => ({ action: 'proceedWith', request: { model: 'small' } }),
    };
    const m = model();
    await expect(call(fake.clients.client({ interceptors: [swap] }), m)).rejects.toMatchObject({
      code: 'ambiguous_decision',
    });
    expect(m.doGenerateCalls).toHaveLength(0);
  });

  it('without modelRequest interceptors or the option, no model request is sent (nothing changes for such clients)', async () => {
    await call(fake.clients.client());
    expect(fake.pdp.received.some((r) => (r.body as { purpose?: string }).purpose === 'model_request')).toBe(false);
  });
});
