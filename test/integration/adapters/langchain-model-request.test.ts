/**
 * Model-request caps in LangChain (issue 43, item 5; docs/interceptors.md "Model requests"):
 * `pepMiddleware`'s `wrapModelCall` checks each model call's settings (the chat model's `model`,
 * `temperature`, `topP`, `maxTokens`, the system message); a cap or a replaced model goes into a copy
 * of the chat model made from its constructor fields, a replaced system message into the request, and
 * a deny or BLOCK stops the call with an `AIMessage` carrying the denial. Driven with `createAgent` and a
 * subclass of LangChain's own `FakeStreamingChatModel` that records the settings it ran with.
 */
import { AIMessage, type BaseMessage, HumanMessage } from '@langchain/core/messages';
import { FakeStreamingChatModel } from '@langchain/core/utils/testing';
import { createAgent, fakeModel } from 'langchain';
import { describe, expect, it } from 'vitest';
import { pepMiddleware } from '../../../src/adapters/langchain.js';
import type { Interceptor } from '../../../src/index.js';
import { answer, type Received } from '../../support/fake-pdp.js';
import { useFakePdp } from '../../support/fake-pdp-suite.js';

const fake = useFakePdp({ permits: false });

interface Ran {
  model: string;
  temperature: number | undefined;
  maxTokens: number | undefined;
  system: string;
}
const ran: Ran[] = [];

/** LangChain's fake chat model with the settings a provider's chat model has, recording what each call ran with. */
class SettingsModel extends FakeStreamingChatModel {
  model: string;
  temperature: number | undefined;
  maxTokens: number | undefined;
  constructor(fields: { model?: string; temperature?: number; maxTokens?: number; responses?: BaseMessage[] }) {
    super({ ...fields, responses: fields.responses ?? [new AIMessage('ok')] });
    this.model = fields.model ?? 'big-model';
    this.temperature = fields.temperature;
    this.maxTokens = fields.maxTokens;
  }
  override bindTools() {
    return this as never;
  }
  override async _generate(messages: BaseMessage[], options: never, runManager?: never) {
    ran.push({
      model: this.model,
      temperature: this.temperature,
      maxTokens: this.maxTokens,
      system: messages[0]?.text ?? '',
    });
    return super._generate(messages, options, runManager);
  }
}

async function invoke(interceptors: Interceptor[], opts = {}) {
  ran.length = 0;
  const agent = createAgent({
    model: new SettingsModel({ temperature: 0.9, maxTokens: 4096 }) as never,
    tools: [],
    systemPrompt: 'Be helpful.',
    middleware: [pepMiddleware(fake.clients.client({ interceptors }), opts)],
  });
  return agent.invoke({ messages: [new HumanMessage('hi')] } as never);
}

describe('LangChain model requests', () => {
  it('caps go into a copy of the chat model, a replaced system message into the request', async () => {
    const cap: Interceptor = {
      name: 'cap',
      modelRequest: () => ({
        action: 'proceedWith',
        request: { temperature: 0.2, maxOutputTokens: 256, system: 'Be brief.' },
      }),
    };
    await invoke([cap]);
    expect(ran).toEqual([{ model: 'big-model', temperature: 0.2, maxTokens: 256, system: 'Be brief.' }]);
    const asked = fake.pdp.received.map((r) => r.body as { purpose?: string; content: string });
    expect(JSON.parse(asked.find((b) => b.purpose === 'model_request')?.content ?? '{}')).toEqual({
      model: 'big-model',
      system: 'Be brief.',
      temperature: 0.2,
      maxOutputTokens: 256,
    });
  });

  it('a PDP WARN with modelRequest: true replaces the model; a higher temperature never raises it', async () => {
    fake.pdp.handler = (req: Received, res) => {
      const b = req.body as { requestId: string; purpose?: string };
      const warn = b.purpose === 'model_request';
      answer(res, {
        verdict: warn ? 'WARN' : 'ALLOW',
        requestId: b.requestId,
        ...(warn ? { transformedContent: JSON.stringify({ model: 'small-model', temperature: 2 }) } : {}),
      });
    };
    await invoke([], { modelRequest: true });
    expect(ran).toEqual([{ model: 'small-model', temperature: 0.9, maxTokens: 4096, system: 'Be helpful.' }]);
  });

  it('a cap a chat model cannot take (no such field) stops the call: fail closed, the model never called', async () => {
    const cool: Interceptor = {
      name: 'cool',
      modelRequest: () => ({ action: 'proceedWith', request: { temperature: 0.1 } }),
    };
    const model = fakeModel().respond(new AIMessage('ok'));
    const agent = createAgent({
      model,
      tools: [],
      middleware: [pepMiddleware(fake.clients.client({ interceptors: [cool] }))],
    });
    const result = (await agent.invoke({ messages: [new HumanMessage('hi')] } as never)) as { messages: BaseMessage[] };
    expect(model.callCount).toBe(0);
    expect(result.messages.at(-1)?.text).toBe(
      'ERROR: context_egress was not checked: the policy check failed (ambiguous_decision)',
    );
  });

  it('a deny stops the call: the model never runs, the run ends with the denial as an AIMessage', async () => {
    const no: Interceptor = { name: 'no', modelRequest: () => ({ action: 'deny', reason: 'not now' }) };
    const result = (await invoke([no])) as { messages: BaseMessage[] };
    expect(ran).toHaveLength(0);
    expect(result.messages.at(-1)?.text).toBe('ERROR: context_egress blocked by policy: not now');
  });
});
