/**
 * Checks 13 and 14 (src/permit/binding.ts): a permit is bound to one normalized tool and one act_hash,
 * args snapshotted when verify is called; and rule 5, the client's decode-without-trust binding check.
 */
import { generateKeyPair } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { permitBindingProblem } from '../../../src/permit/binding.js';
import type { PermitVerifierOptions } from '../../../src/permit/verifier.js';
import {
  ARGS,
  b64,
  createPermitKit,
  type MintOptions,
  type PermitKit,
  permitCodeOf,
  TOOL,
} from '../../support/permits.js';

let kit: PermitKit;
beforeAll(async () => {
  kit = await createPermitKit();
});
const mint = (o?: MintOptions): Promise<string> => kit.mint(o);
const verifier = (extra: Partial<PermitVerifierOptions> = {}) => kit.verifier(extra);

describe('A permit is bound to one tool and one set of args (src/permit/binding.ts)', () => {
  it('accepts any spelling of the tool, reordered args and 129.0 for 129', async () => {
    const v = verifier();
    await expect(v.verify(await mint(), { tool: 'refundPayment', args: ARGS })).resolves.toBeDefined();
    await expect(
      v.verify(await mint(), { tool: TOOL, args: { amount: 129.0, orderId: 'ord_1842' } }),
    ).resolves.toBeDefined();
  });

  it('another tool: permit_tool_mismatch', async () => {
    const v = verifier();
    expect(await permitCodeOf(v.verify(await mint(), { tool: 'delete_account', args: ARGS }))).toBe(
      'permit_tool_mismatch',
    );
    expect(await permitCodeOf(v.verify(await mint(), { tool: 'refund_payments', args: ARGS }))).toBe(
      'permit_tool_mismatch',
    );
    // a tool claim that is not in normalized form matches nothing
    expect(
      await permitCodeOf(v.verify(await mint({ claims: { tool: 'refundPayment' } }), { tool: TOOL, args: ARGS })),
    ).toBe('permit_tool_mismatch');
    // an expected tool that normalizes to nothing
    expect(await permitCodeOf(v.verify(await mint(), { tool: '---', args: ARGS }))).toBe('permit_tool_mismatch');
  });

  it('args changed by one character: permit_args_mismatch', async () => {
    expect(
      await permitCodeOf(verifier().verify(await mint(), { tool: TOOL, args: { orderId: 'ord_1843', amount: 129 } })),
    ).toBe('permit_args_mismatch');
  });

  it('args changed by one type (129 vs "129"): permit_args_mismatch', async () => {
    expect(
      await permitCodeOf(verifier().verify(await mint(), { tool: TOOL, args: { orderId: 'ord_1842', amount: '129' } })),
    ).toBe('permit_args_mismatch');
  });

  it('an extra arg, or a missing one: permit_args_mismatch', async () => {
    const v = verifier();
    expect(await permitCodeOf(v.verify(await mint(), { tool: TOOL, args: { ...ARGS, currency: 'EUR' } }))).toBe(
      'permit_args_mismatch',
    );
    expect(await permitCodeOf(v.verify(await mint(), { tool: TOOL, args: { orderId: 'ord_1842' } }))).toBe(
      'permit_args_mismatch',
    );
  });

  it('args that are not JSON: permit_args_mismatch (a rejection, not a throw)', async () => {
    const v = verifier();
    const bad = [{ ...ARGS, at: new Date() }, { ...ARGS, n: Number.NaN }, null, 'x'];
    for (const args of bad) {
      expect(await permitCodeOf(v.verify(await mint(), { tool: TOOL, args: args as Record<string, unknown> }))).toBe(
        'permit_args_mismatch',
      );
    }
  });

  it('args are snapshotted when verify is called', async () => {
    const v = verifier();
    const args = { ...ARGS };
    const pending = v.verify(await mint(), { tool: TOOL, args });
    args.amount = 999_999;
    await expect(pending).resolves.toBeDefined();
  });
});

describe('permitBindingProblem: rule 5, the permit on an action decodes to what was asked (client side)', () => {
  const asked = { tool: TOOL, args: { ...ARGS }, agentId: 'support-ai', session: 'sess_demo' };

  it('a permit for the asked tool, args, agent and session: no problem', async () => {
    expect(permitBindingProblem(await mint(), asked)).toBeUndefined();
  });

  it('is decoded without trust: a permit signed by anyone binds the same way (the signature is guardTool’s)', async () => {
    const { privateKey } = await generateKeyPair('EdDSA');
    expect(permitBindingProblem(await mint({ key: privateKey }), asked)).toBeUndefined();
  });

  it.each([
    ['not three segments', 'abc.def'],
    ['no dot at all', 'abcdef'],
    ['four segments, the payload good', `${b64({ alg: 'EdDSA' })}.${b64({ tool: 'refund_payment' })}.sig.more`],
    ['an empty payload segment', `${b64({ alg: 'EdDSA' })}..sig`],
    ['a payload that is not base64url JSON', `${b64({ alg: 'EdDSA' })}.${b64('nope')}.sig`],
    ['a payload that is an array', `${b64({ alg: 'EdDSA' })}.${b64([1])}.sig`],
  ])('%s: the permit does not decode', (_label, permit) => {
    expect(permitBindingProblem(permit, asked)).toBe('the permit does not decode');
  });

  it('another tool, agent, session or args: each named', async () => {
    expect(permitBindingProblem(await mint({ claims: { tool: 'delete_account' } }), asked)).toBe(
      'the permit is for another tool',
    );
    expect(permitBindingProblem(await mint({ claims: { sub: 'other-agent' } }), asked)).toBe(
      'the permit is for another agent',
    );
    expect(permitBindingProblem(await mint({ claims: { sid: 'sess_other' } }), asked)).toBe(
      'the permit is for another session',
    );
    expect(permitBindingProblem(await mint(), { ...asked, args: { ...ARGS, amount: 130 } })).toBe(
      'the permit is for other args',
    );
  });
});
