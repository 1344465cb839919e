/**
 * Per-call options are strict (CONTRACT.md section 2, v3): an unknown key in a stage method's last
 * argument resolves a synthesized BLOCK `invalid_request` naming the key, with no network call. A
 * misspelt `tool` must never skip the tool's rules.
 */
import { describe, expect, it } from 'vitest';
import { useFakePdp } from '../../support/fake-pdp-suite.js';

const fake = useFakePdp();
const { clients } = fake;

describe('unknown per-call option keys', () => {
  it("checkContextEgress('x', { tol: 1 }) is BLOCK invalid_request naming 'tol', and nothing is sent", async () => {
    const d = await clients.client().checkContextEgress('x', { tol: 1 } as never);
    expect(d.verdict).toBe('BLOCK');
    expect(d.synthesized?.code).toBe('invalid_request');
    expect(d.synthesized?.message).toContain('"tol"');
    expect(fake.pdp.received).toHaveLength(0);
  });

  it.each([
    ['checkInput', (p: ReturnType<typeof clients.client>) => p.checkInput('x', { sesion: 's2' } as never)],
    ['checkOutput', (p: ReturnType<typeof clients.client>) => p.checkOutput('x', { simulate: true } as never)],
    ['checkDelivery', (p: ReturnType<typeof clients.client>) => p.checkDelivery('x', { tool: 'send' } as never)],
    [
      'authorizeAction',
      (p: ReturnType<typeof clients.client>) => p.authorizeAction('lookup', {}, { signl: undefined } as never),
    ],
  ])('%s refuses an unknown key without a network call', async (_name, call) => {
    const d = await call(clients.client());
    expect(d.synthesized?.code).toBe('invalid_request');
    expect(fake.pdp.received).toHaveLength(0);
  });

  it('authorizeActions refuses every call when its options carry an unknown key', async () => {
    const ds = await clients.client().authorizeActions(
      [
        { tool: 'a', args: {} },
        { tool: 'b', args: {} },
      ],
      {
        sessoin: 'x',
      } as never,
    );
    expect(ds.map((d) => d.synthesized?.code)).toEqual(['invalid_request', 'invalid_request']);
    expect(fake.pdp.received).toHaveLength(0);
  });

  it('a key name is named at most 64 characters long (never a long caller string)', async () => {
    const key = `k${'x'.repeat(10_000)}`;
    const d = await clients.client().checkInput('x', { [key]: 1 } as never);
    expect(d.synthesized?.code).toBe('invalid_request');
    expect((d.synthesized?.message ?? '').length).toBeLessThan(200);
  });

  it('the known keys still pass, undefined values included', async () => {
    const d = await clients
      .client()
      .checkContextEgress('x', { tool: 'lookup', session: 's2', simulated: undefined, signal: undefined });
    expect(d.verdict).toBe('ALLOW');
    expect(fake.pdp.received[0]?.body).toMatchObject({ tool: 'lookup', session: 's2' });
  });
});
