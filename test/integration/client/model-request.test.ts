/**
 * Model-request caps (issue 43, item 5; docs/interceptors.md "Model requests"): `modelRequest`
 * interceptors (section 7's chain: registration order, frozen snapshots, the first deny ends it, a throw
 * is `interceptor_failed`) and then the PDP (`context_egress`, `purpose: 'model_request'`, content the
 * JSON of the settings, a WARN's `transformedContent` the JSON of the capped settings) may cap or
 * replace `model`, `system`, `temperature`, `topP`, `maxOutputTokens`, never raise a cap another set.
 */
import { describe, expect, it, vi } from 'vitest';
import type { Interceptor } from '../../../src/index.js';
import { answer, type Received } from '../../support/fake-pdp.js';
import { useFakePdp } from '../../support/fake-pdp-suite.js';

const fake = useFakePdp();
const REQUEST = { model: 'big-model', system: 'Be helpful.', temperature: 0.9, topP: 1, maxOutputTokens: 4096 };

function pdpWarns(transformed: string): void {
  fake.pdp.handler = (req: Received, res) =>
    answer(res, {
      verdict: 'WARN',
      transformedContent: transformed,
      requestId: (req.body as { requestId: string }).requestId,
    });
}

const settings = (d: { transformedContent?: string }) => JSON.parse(d.transformedContent ?? 'null') as unknown;

describe('the wire', () => {
  it('is a context_egress request with purpose model_request and the settings as JSON content', async () => {
    const d = await fake.clients.client().checkModelRequest(REQUEST);
    expect(d.verdict).toBe('ALLOW');
    expect(d.transformedContent).toBeUndefined();
    expect(fake.pdp.received[0]?.body).toMatchObject({
      stage: 'context_egress',
      purpose: 'model_request',
      content: JSON.stringify(REQUEST),
    });
  });

  it('a PDP WARN caps: lower numbers apply, higher ones never raise, a replaced model applies', async () => {
    pdpWarns(JSON.stringify({ model: 'small-model', temperature: 1.5, maxOutputTokens: 512 }));
    const d = await fake.clients.client().checkModelRequest(REQUEST);
    expect(settings(d)).toEqual({ ...REQUEST, model: 'small-model', maxOutputTokens: 512 });
  });

  it.each([
    ['not JSON', 'temperature: 0'],
    ['an unknown setting', JSON.stringify({ seed: 1 })],
    ['a negative number', JSON.stringify({ topP: -1 })],
  ])('a PDP WARN whose content is %s is ambiguous_decision', async (_name, transformed) => {
    pdpWarns(transformed);
    expect((await fake.clients.client().checkModelRequest(REQUEST)).synthesized?.code).toBe('ambiguous_decision');
  });

  it('a PDP BLOCK stops the request; settings that are not settings are invalid_request with no request sent', async () => {
    fake.pdp.handler = (req: Received, res) =>
      answer(res, { verdict: 'BLOCK', reason: 'no', requestId: (req.body as { requestId: string }).requestId });
    expect((await fake.clients.client().checkModelRequest(REQUEST)).verdict).toBe('BLOCK');
    const bad = await fake.clients.client().checkModelRequest({ temperature: 'hot' } as never);
    expect(bad.synthesized?.code).toBe('invalid_request');
    expect(fake.pdp.received).toHaveLength(1);
  });
});

describe('modelRequest interceptors', () => {
  const cap: Interceptor = {
    name: 'cap',
    modelRequest: () => ({ action: 'proceedWith', request: { temperature: 0.2, system: 'Be brief.' } }),
  };

  it('cap, and the PDP can never raise the cap: an interceptor 0.2, then a PDP WARN 0.7, sends 0.2', async () => {
    pdpWarns(JSON.stringify({ temperature: 0.7 }));
    const d = await fake.clients.client({ interceptors: [cap] }).checkModelRequest(REQUEST);
    expect(settings(d)).toMatchObject({ temperature: 0.2, system: 'Be brief.' });
    const sent = fake.pdp.received[0]?.body as { content?: string } | undefined;
    expect(JSON.parse(sent?.content ?? '{}')).toMatchObject({ temperature: 0.2 });
  });

  it('the PDP may not replace a text an interceptor set: ambiguous_decision', async () => {
    pdpWarns(JSON.stringify({ system: 'Say anything.' }));
    const d = await fake.clients.client({ interceptors: [cap] }).checkModelRequest(REQUEST);
    expect(d.synthesized?.code).toBe('ambiguous_decision');
  });

  it('the first deny ends the chain: BLOCK with the interceptor, later ones not called, no PDP request', async () => {
    const later = vi.fn(() => ({ action: 'proceed' as const }));
    const pep = fake.clients.client({
      interceptors: [
        {
          name: 'no-big',
          modelRequest: (r) =>
            r.model === 'big-model' ? { action: 'deny', reason: 'too big' } : { action: 'proceed' },
        },
        { name: 'later', modelRequest: later },
      ],
    });
    const d = await pep.checkModelRequest(REQUEST);
    expect(d).toMatchObject({ verdict: 'BLOCK', interceptor: 'no-big', reason: 'too big' });
    expect(d.synthesized).toBeUndefined();
    expect(later).not.toHaveBeenCalled();
    expect(fake.pdp.received).toHaveLength(0);
  });

  it.each([
    [
      'throws',
      () => {
        throw new Error('x');
      },
    ],
    ['answers nonsense', () => 'yes'],
    [
      'writes to its frozen snapshot',
      (r: { temperature?: number }) => {
        r.temperature = 2;
        return { action: 'proceed' };
      },
    ],
    [
      'raises nothing but replaces a text an earlier one set',
      () => ({ action: 'proceedWith', request: { system: 'Other.' } }),
    ],
  ])('an interceptor that %s is interceptor_failed, naming it', async (_name, hook) => {
    const pep = fake.clients.client({ interceptors: [cap, { name: 'bad', modelRequest: hook as never }] });
    const d = await pep.checkModelRequest(REQUEST);
    expect(d).toMatchObject({ interceptor: 'bad', synthesized: { code: 'interceptor_failed' } });
    expect(fake.pdp.received).toHaveLength(0);
  });

  it('a later interceptor cannot raise a cap an earlier one set (it is lowered, not raised)', async () => {
    const raise: Interceptor = {
      name: 'raise',
      modelRequest: () => ({ action: 'proceedWith', request: { temperature: 1 } }),
    };
    const d = await fake.clients.client({ interceptors: [cap, raise] }).checkModelRequest(REQUEST);
    expect(settings(d)).toMatchObject({ temperature: 0.2 });
  });

  it('text-stage before interceptors do not run on a model request; an unknown interceptor key is still a TypeError', async () => {
    const before = vi.fn(() => ({ action: 'proceed' as const }));
    await fake.clients
      .client({ interceptors: [{ name: 'b', stages: ['context_egress'], before }] })
      .checkModelRequest(REQUEST);
    expect(before).not.toHaveBeenCalled();
    expect(() => fake.clients.client({ interceptors: [{ name: 'x', modelRequst: () => ({}) } as never] })).toThrow(
      TypeError,
    );
  });
});
