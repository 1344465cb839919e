/**
 * A policy's `default: { action: "BLOCK" }` through the SDK: a tool no latch names is blocked (the
 * `delete_files` typo no longer lets `delete_file` run), an approved escalation still runs (its latch
 * engaged: the default does not decide it), and visibility hides only the tools no action latch could
 * match.
 */
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { createPep, type Pep, type PolicyEscalatedError } from '../../../../src/index.js';
import { type DevPdp, startDevPdp } from '../../src/index.js';

const POLICY = {
  agents: ['ops-ai'],
  default: { action: 'BLOCK' },
  latches: [
    { id: 'reads', stage: 'action', tool: 'read_*', verdict: 'ALLOW' },
    { id: 'no-delete', stage: 'action', tool: 'delete_files', verdict: 'BLOCK' },
    {
      id: 'small-refunds',
      stage: 'action',
      tool: 'refund_payment',
      when: { 'args.amount': { lte: 100 } },
      verdict: 'ALLOW',
    },
    {
      id: 'big-refunds',
      stage: 'action',
      tool: 'refund_payment',
      when: { 'args.amount': { gt: 100 } },
      verdict: 'ESCALATE',
    },
  ],
};

let pdp: DevPdp;
let pep: Pep;
beforeAll(async () => {
  pdp = await startDevPdp({ policy: POLICY, log: false });
  pep = createPep({
    pdpUrl: pdp.url,
    agentId: 'ops-ai',
    session: 'defaults-1',
    permits: { keys: pdp.jwksUrl, issuer: pdp.issuer },
  });
});
afterAll(async () => {
  await pep.close();
  await pdp.close();
});

describe('default: { action: "BLOCK" }', () => {
  test('a tool no latch names is blocked, never run; a listed one runs', async () => {
    const remove = vi.fn(async () => 'deleted');
    await expect(pep.guardTool('delete_file', remove)({ path: '/' })).rejects.toMatchObject({ code: 'blocked' });
    expect(remove).not.toHaveBeenCalled();
    const d = await pep.authorizeAction('delete_file', {});
    expect(d).toMatchObject({ verdict: 'BLOCK', latches: [] });
    expect(d.synthesized).toBeUndefined();
    await expect(pep.guardTool('read_file', async () => 'text')({})).resolves.toBe('text');
  });

  test('an approved escalation runs: the default does not decide a request whose latch engaged', async () => {
    const refund = vi.fn(async () => 'refunded');
    const guarded = pep.guardTool('refund_payment', refund);
    const held = await guarded({ amount: 500 }).then(
      () => undefined,
      (e: PolicyEscalatedError) => e,
    );
    expect(held?.decision.verdict).toBe('ESCALATE');
    await pdp.resolveEscalation(held?.decision.escalationId as string, 'approve');
    await expect(guarded({ amount: 500 })).resolves.toBe('refunded');
  });

  test('visibility hides a tool no action latch could match, and keeps one a conditioned latch names', async () => {
    expect(await pep.visibleTools(['read_file', 'delete_file', 'refund_payment', 'delete_files'])).toEqual([
      'read_file',
      'refund_payment',
    ]);
  });
});
