/** agent-pep/ai without a PDP: option errors, names and types kept, and how a resumed approval is recognized. */
import { jsonSchema, tool } from 'ai';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { fitsInputSchema, wasSentForApproval } from '../../../src/adapters/ai/tools.js';
import { guardTools, pepMiddleware, pepToolApproval } from '../../../src/adapters/ai.js';
import { createPep } from '../../../src/index.js';
import { optionOf } from '../../support/options.js';

const pdpUrl = 'http://127.0.0.1:9';
const pep = createPep({ pdpUrl, agentId: 'a', session: 's', permits: { keys: { keys: [] }, issuer: pdpUrl } });

const raw = {
  refund_payment: tool({
    inputSchema: z.object({ orderId: z.string(), amount: z.number() }),
    execute: async ({ amount }) => ({ refunded: amount }),
  }),
  ask_user: tool({ inputSchema: jsonSchema<{ question: string }>({ type: 'object' }) }),
};

describe('guardTools', () => {
  it('keeps the tool set type (the execute input type is unchanged) and its names', () => {
    const tools = guardTools(pep, raw);
    expectTypeOf(tools).toEqualTypeOf<typeof raw>();
    expectTypeOf<Parameters<NonNullable<(typeof tools)['refund_payment']['execute']>>[0]>().toEqualTypeOf<{
      orderId: string;
      amount: number;
    }>();
    expect(Object.keys(tools)).toEqual(['refund_payment', 'ask_user']);
    expect(tools.refund_payment).not.toBe(raw.refund_payment);
    expect(typeof tools.refund_payment.needsApproval).toBe('function');
  });

  it('returns a tool without execute as it is (it runs in the client, not here)', () => {
    expect(guardTools(pep, raw).ask_user).toBe(raw.ask_user);
  });

  it('refuses unknown and bad options, naming them in err.option', () => {
    expect(optionOf(() => guardTools(pep, raw, { sesion: 'x' } as never))).toBe('sesion');
    expect(optionOf(() => guardTools(pep, raw, { session: '' }))).toBe('session');
    expect(optionOf(() => guardTools(pep, raw, { checkResult: 'yes' } as never))).toBe('checkResult');
    expect(optionOf(() => guardTools(pep, raw, { approval: 1 } as never))).toBe('approval');
  });

  it('refuses a tool set that is not an object, and a client without permits', () => {
    expect(() => guardTools(pep, null as never)).toThrow(TypeError);
    expect(() => guardTools(pep, [] as never)).toThrow(TypeError);
    const noPermits = createPep({ pdpUrl, agentId: 'a', session: 's' });
    expect(() => guardTools(noPermits, raw)).toThrow(TypeError);
  });

  it('refuses a key that is not a tool name', () => {
    expect(() => guardTools(pep, { '...': raw.refund_payment })).toThrow(TypeError);
  });
});

describe('pepMiddleware and pepToolApproval options', () => {
  it('refuse unknown and bad options, naming them in err.option', () => {
    expect(optionOf(() => pepMiddleware(pep, { maxRemember: 1 } as never))).toBe('maxRemember');
    expect(optionOf(() => pepMiddleware(pep, { maxRemembered: -1 }))).toBe('maxRemembered');
    expect(optionOf(() => pepMiddleware(pep, { session: '' }))).toBe('session');
    expect(optionOf(() => pepToolApproval(pep, { sessions: 's' } as never))).toBe('sessions');
  });

  it('refuse something that is not a client', () => {
    expect(() => pepMiddleware({} as never)).toThrow(TypeError);
    expect(() => pepToolApproval({} as never)).toThrow(TypeError);
    expect(() => guardTools({} as never, raw)).toThrow(TypeError);
  });
});

describe('a resumed approval', () => {
  const request = (toolCallId: string, extra: Record<string, unknown> = {}) => [
    { role: 'user', content: 'refund' },
    {
      role: 'assistant',
      content: [{ type: 'tool-approval-request', approvalId: 'ap1', toolCallId, ...extra }],
    },
  ];

  it('is a human approval request for this very tool call in the messages', () => {
    expect(wasSentForApproval(request('c1'), 'c1')).toBe(true);
  });

  it('is not one for another call, an automatic 7.x approval, or messages of another shape', () => {
    expect(wasSentForApproval(request('c2'), 'c1')).toBe(false);
    expect(wasSentForApproval(request('c1', { isAutomatic: true }), 'c1')).toBe(false);
    expect(wasSentForApproval(undefined, 'c1')).toBe(false);
    expect(wasSentForApproval([null, { role: 'assistant', content: 'text' }], 'c1')).toBe(false);
    expect(
      wasSentForApproval([{ role: 'user', content: [{ type: 'tool-approval-request', toolCallId: 'c1' }] }], 'c1'),
    ).toBe(false);
  });
});

describe('tool names', () => {
  it('a key such as __proto__ stays an own key of the guarded set, never its prototype', () => {
    const tools = Object.defineProperty({}, '__proto__', { value: raw.refund_payment, enumerable: true });
    const guarded = guardTools(pep, tools as Record<string, object>);
    expect(Object.getPrototypeOf(guarded)).toBe(Object.prototype);
    expect(Object.keys(guarded)).toEqual(['__proto__']);
    const own = Object.getOwnPropertyDescriptor(guarded, '__proto__')?.value as { execute?: unknown } | undefined;
    expect(typeof own?.execute).toBe('function');
  });
});

describe('fitsInputSchema: args a WARN or an interceptor changed must fit the tool schema as the SDK reads it', () => {
  it('a zod schema (Standard Schema): fits or not', async () => {
    const schema = z.object({ limit: z.number() });
    expect(await fitsInputSchema(schema, { limit: 5 })).toBe(true);
    expect(await fitsInputSchema(schema, { limit: 'unlimited' })).toBe(false);
  });

  it("the SDK's jsonSchema() with a validator: its answer; without one: not checked, as the SDK does not check it", async () => {
    const checked = jsonSchema<{ limit: number }>(
      { type: 'object' },
      {
        validate: (v) =>
          typeof (v as { limit?: unknown }).limit === 'number'
            ? { success: true, value: v as { limit: number } }
            : { success: false, error: new Error('limit') },
      },
    );
    expect(await fitsInputSchema(checked, { limit: 1 })).toBe(true);
    expect(await fitsInputSchema(checked, { limit: 'x' })).toBe(false);
    expect(await fitsInputSchema(jsonSchema({ type: 'object' }), { anything: true })).toBe(true);
  });

  it('a validator that throws means the args do not fit', async () => {
    const broken = {
      '~standard': {
        validate: () => {
          throw new Error('boom');
        },
      },
    };
    expect(await fitsInputSchema(broken, {})).toBe(false);
  });
});
