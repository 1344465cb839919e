/**
 * `guardTool(name, execute, { schema })` validates the args with a Standard Schema before the
 * decision (issue 43, item 7): invalid args are BLOCK `invalid_request` with no request sent and the
 * tool not run; valid args are decided on as the schema outputs them. Driven with zod 4 (which
 * implements `~standard`) and a schema written by hand to the Standard Schema v1 interface.
 */
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { type DecisionEvent, PolicyBlockedError, type StandardSchemaV1 } from '../../../src/index.js';
import { answer, type Received } from '../../support/fake-pdp.js';
import { useFakePdp } from '../../support/fake-pdp-suite.js';

const fake = useFakePdp({ permits: false });

function allowWithPermit(): void {
  fake.pdp.handler = (req: Received, res) =>
    answer(res, { verdict: 'ALLOW', requestId: (req.body as { requestId: string }).requestId, permitId: 'p' });
}

async function rejection(p: Promise<unknown>): Promise<PolicyBlockedError> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: PolicyBlockedError) => e,
  );
}

const email = z.object({ to: z.email(), subject: z.string().default('(none)') });

describe('guardTool with a Standard Schema', () => {
  it('invalid args: BLOCK invalid_request naming the path, nothing sent, the tool not run, the refusal observed', async () => {
    const events: DecisionEvent[] = [];
    const execute = vi.fn(async () => 'sent');
    const send = fake.clients.client({ onDecision: (e) => events.push(e) }).guardTool('send_email', execute, {
      schema: email,
    });
    const err = await rejection(send({ to: 'not-an-address SECRET' } as never));
    expect(err).toBeInstanceOf(PolicyBlockedError);
    expect(err.code).toBe('invalid_request');
    expect(err.message).toContain('at to');
    expect(err.message).not.toContain('SECRET');
    expect(execute).not.toHaveBeenCalled();
    expect(fake.pdp.received).toHaveLength(0);
    expect(events.map((e) => e.decision.synthesized?.code)).toEqual(['invalid_request']);
  });

  it('valid args are decided on, and run, as the schema outputs them (defaults filled in)', async () => {
    allowWithPermit();
    const execute = vi.fn(async (args: { to: string; subject: string }) => args.subject);
    const send = fake.clients.client().guardTool('send_email', execute, { schema: email });
    await expect(send({ to: 'a@example.com' })).resolves.toBe('(none)');
    expect((fake.pdp.received[0]?.body as { args?: unknown } | undefined)?.args).toEqual({
      to: 'a@example.com',
      subject: '(none)',
    });
  });

  it("a PDP WARN's transformedArgs that do not match the schema are refused; the tool does not run", async () => {
    fake.pdp.handler = (req: Received, res) =>
      answer(res, {
        verdict: 'WARN',
        requestId: (req.body as { requestId: string }).requestId,
        permitId: 'p',
        transformedArgs: { to: 42 },
      });
    const execute = vi.fn(async () => 'sent');
    const send = fake.clients.client().guardTool('send_email', execute, { schema: email });
    const err = await rejection(send({ to: 'a@example.com' }));
    expect(err.code).toBe('invalid_request');
    expect(execute).not.toHaveBeenCalled();
  });

  it('a hand-written ~standard v1 schema (async validate) works the same', async () => {
    allowWithPermit();
    const schema: StandardSchemaV1<unknown, { n: number }> = {
      '~standard': {
        version: 1,
        vendor: 'test',
        validate: async (v) =>
          typeof (v as { n?: unknown }).n === 'number'
            ? { value: v as { n: number } }
            : { issues: [{ message: 'n must be a number', path: [{ key: 'n' }] }] },
      },
    };
    const tool = fake.clients.client().guardTool('count', async (args) => args.n + 1, { schema });
    await expect(tool({ n: 1 })).resolves.toBe(2);
    const err = await rejection(tool({ n: 'x' } as never));
    expect(err.code).toBe('invalid_request');
    expect(err.message).toContain('at n');
  });

  it('a schema that throws is a refusal too, and something that is not a schema is a TypeError at creation', async () => {
    const throwing = {
      '~standard': {
        version: 1,
        vendor: 't',
        validate: () => {
          throw new Error('boom');
        },
      },
    };
    const tool = fake.clients.client().guardTool('count', async () => 1, { schema: throwing as never });
    expect((await rejection(tool({}))).code).toBe('invalid_request');
    expect(() => fake.clients.client().guardTool('count', async () => 1, { schema: {} as never })).toThrow(
      expect.objectContaining({ option: 'schema' }),
    );
  });
});
