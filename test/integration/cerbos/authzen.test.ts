/**
 * A real Cerbos PDP over AuthZEN 1.0 (CONTRACT.md section 9), beyond the shared contract suite: what
 * Cerbos does with several items that look alike in one `evaluations` request, and why the PEP never
 * lets that decide a call; its discovery document; `guardTool` with `permits: false`.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createPep, type Pep } from '../../../src/index.js';
import { type CerbosHandle, cerbosPolicies, cerbosUnavailableReason, startCerbos } from '../../support/cerbos.js';

// In CI this throws when Cerbos cannot run: these tests are never skipped there.
const noCerbos = cerbosUnavailableReason();

describe.skipIf(noCerbos !== undefined)('Cerbos over AuthZEN', () => {
  let cerbos: CerbosHandle;
  let pep: Pep;
  beforeAll(async () => {
    cerbos = await startCerbos(cerbosPolicies('contract'));
    pep = createPep({ pdpUrl: cerbos.url, agentId: 'support-ai', session: 's', protocol: 'authzen', permits: false });
  });
  afterAll(async () => {
    await pep?.close();
    await cerbos?.stop();
  });

  const refund = (amount: number, requestId: string) => ({
    subject: { type: 'agent', id: 'support-ai' },
    action: { name: 'call' },
    resource: { type: 'tool', id: 'refund_payment', properties: { args: { amount } } },
    context: { session: 's', requestId },
  });
  const evaluate = async (body: unknown): Promise<unknown> => {
    const res = await fetch(`${cerbos.url}/access/v1/evaluations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(5_000),
    });
    return res.json();
  };

  it('items that look alike (one tool, other args) in one evaluations request: each alone is decided on its own args', async () => {
    // The property, asked of the real PDP: alone, a 5 refund is allowed and a 900 refund is not.
    expect(await evaluate({ evaluations: [refund(5, 'r1')] })).toEqual({ evaluations: [{ decision: true }] });
    expect(await evaluate({ evaluations: [refund(900, 'r2')] })).toEqual({ evaluations: [{ decision: false }] });
    // Together, Cerbos 0.55 answers them as one (the first item's args decide both). Whatever it does,
    // the PEP never puts two calls to one tool in one request:
    const together = (await evaluate({
      options: { evaluations_semantic: 'execute_all' },
      evaluations: [refund(5, 'r1'), refund(900, 'r2')],
    })) as { evaluations: { decision: boolean }[] };
    expect(together.evaluations).toHaveLength(2);
    const ds = await pep.authorizeActions([
      { tool: 'refund_payment', args: { amount: 5 } },
      { tool: 'refund_payment', args: { amount: 900 } },
      { tool: 'lookup_order', args: {} },
      { tool: 'refund_payment', args: { amount: 6 } },
      { tool: 'refund_payment', args: { amount: 901 } },
    ]);
    expect(ds.map((d) => d.verdict)).toEqual(['ALLOW', 'BLOCK', 'ALLOW', 'ALLOW', 'BLOCK']);
  });

  it('its discovery document names the pdpUrl, so discover: true keeps it', async () => {
    const doc = (await (await fetch(`${cerbos.url}/.well-known/authzen-configuration`)).json()) as Record<
      string,
      string
    >;
    expect(doc.policy_decision_point).toBe(cerbos.url);
    const discovering = createPep({
      pdpUrl: cerbos.url,
      agentId: 'support-ai',
      session: 's',
      protocol: 'authzen',
      discover: true,
      permits: false,
    });
    expect((await discovering.checkInput('hello')).verdict).toBe('ALLOW');
    await discovering.close();
  });

  it('guardTool with permits: false runs on an ALLOW with permitId undefined, and never on a deny', async () => {
    const execute = vi.fn((_args: Record<string, unknown>, ctx: { permitId: string | undefined }) => ctx.permitId);
    expect(await pep.guardTool('refund_payment', execute)({ amount: 5 })).toBeUndefined();
    await expect(pep.guardTool('refund_payment', execute)({ amount: 900 })).rejects.toMatchObject({ code: 'blocked' });
    expect(execute).toHaveBeenCalledTimes(1);
  });
});
