/**
 * A guard helper's unknown per-call option is a programming error, not a policy decision (CONTRACT.md
 * section 2: "a guard helper or adapter factory throws the TypeError with err.option"): `guardText`
 * and a guarded tool's call reject with a `TypeError` naming the key in `err.option`, send nothing and
 * run nothing. The stage methods still resolve BLOCK `invalid_request` (call-options-are-strict.test.ts).
 */
import { describe, expect, it, vi } from 'vitest';
import { PolicyBlockedError } from '../../../src/index.js';
import { answer } from '../../support/fake-pdp.js';
import { useFakePdp } from '../../support/fake-pdp-suite.js';

const fake = useFakePdp({ permits: false });
const { clients } = fake;

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => undefined,
    (err: unknown) => err,
  );
}

describe('unknown per-call options of the guard helpers', () => {
  it("guardText('input', text, { tol }) rejects with TypeError option 'tol', and nothing is sent", async () => {
    const err = await rejection(clients.client().guardText('input', 'x', { tol: 1 } as never));
    expect(err).toBeInstanceOf(TypeError);
    expect(err).not.toBeInstanceOf(PolicyBlockedError);
    expect((err as { option?: string }).option).toBe('tol');
    expect(fake.pdp.received).toHaveLength(0);
  });

  it('guardText at context_egress takes tool, and refuses a misspelt one', async () => {
    const pep = clients.client();
    await expect(pep.guardText('context_egress', 'x', { tool: 'lookup' } as never)).resolves.toBe('x');
    const err = await rejection(pep.guardText('context_egress', 'x', { tol: 'lookup' } as never));
    expect((err as { option?: string }).option).toBe('tol');
  });

  it('guardText outside context_egress refuses tool (it would skip no rule there, but means a mistake)', async () => {
    const err = await rejection(clients.client().guardText('output', 'x', { tool: 'lookup' } as never));
    expect((err as { option?: string }).option).toBe('tool');
  });

  it('a guarded tool called with an unknown option rejects with TypeError and never runs', async () => {
    const execute = vi.fn(async () => 'ran');
    const tool = clients.client().guardTool('lookup', execute);
    const err = await rejection(tool({}, { sesion: 's2' } as never));
    expect(err).toBeInstanceOf(TypeError);
    expect((err as { option?: string }).option).toBe('sesion');
    expect(execute).not.toHaveBeenCalled();
    expect(fake.pdp.received).toHaveLength(0);
  });

  it('options that are not an object are a TypeError too', async () => {
    const err = await rejection(clients.client().guardText('input', 'x', 'fast' as never));
    expect(err).toBeInstanceOf(TypeError);
    expect((err as { option?: string }).option).toBe('(options)');
  });

  it('the known keys still pass, undefined values included', async () => {
    const pep = clients.client();
    await expect(pep.guardText('input', 'x', { session: 's2', signal: undefined, simulated: undefined })).resolves.toBe(
      'x',
    );
    fake.pdp.handler = (req, res) =>
      answer(res, { verdict: 'ALLOW', requestId: (req.body as { requestId: string }).requestId, permitId: 'p' });
    const tool = pep.guardTool('lookup', async () => 'ran');
    await expect(tool({}, { session: 's2' })).resolves.toBe('ran');
  });
});
