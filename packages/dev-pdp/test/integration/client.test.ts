// The SDK client against the dev PDP: every decision the dev PDP gives must be enforceable (CONTRACT.md section 3).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  createMemoryReplayStore,
  createPep,
  createPermitVerifier,
  PolicyEscalatedError,
} from '../../../../src/index.js';
import { type DevPdp, startDevPdp } from '../../src/index.js';

describe('createPep against the dev PDP', () => {
  let pdp: DevPdp;
  beforeAll(async () => {
    pdp = await startDevPdp({
      policy: readFileSync(new URL('../../../../demo/policy.json', import.meta.url), 'utf8'),
      apiKey: 'client-key',
      audience: 'payments-service',
      log: false,
    });
  });
  afterAll(() => pdp.close());

  const pepOf = () =>
    createPep({
      pdpUrl: pdp.url,
      agentId: 'support-ai',
      session: 'sess_demo',
      apiKey: 'client-key',
      permits: { keys: pdp.jwksUrl, issuer: pdp.issuer },
    });

  test('decisions come back unsynthesized; permits verify at the service', async () => {
    const pep = pepOf();
    const args = { orderId: 'ord_1842', amount: 129 };
    const allow = await pep.authorizeAction('refund_payment', args);
    expect(allow.synthesized).toBeUndefined();
    expect(allow.verdict).toBe('ALLOW');
    const verifier = createPermitVerifier({
      keys: pdp.jwksUrl,
      issuer: pdp.issuer,
      audience: 'payments-service',
      replayStore: createMemoryReplayStore(),
    });
    await expect(verifier.verify(allow.permitId!, { tool: 'refundPayment', args })).resolves.toMatchObject({
      sub: 'support-ai',
    });

    const escalate = await pep.authorizeAction('refund_payment', { orderId: 'ord_1', amount: 900 });
    expect(escalate).toMatchObject({ verdict: 'ESCALATE', escalationId: expect.any(String) });
    expect(escalate.synthesized).toBeUndefined();

    const block = await pep.authorizeAction('bank_transfer', {});
    expect(block.verdict).toBe('BLOCK');
    expect(block.synthesized).toBeUndefined();

    const warn = await pep.checkOutput('call me at 555-123-4567 or a@b.example');
    expect(warn.synthesized).toBeUndefined();
    expect(warn.transformedContent).toBe('call me at [phone] or [email]');

    // The demo policy remembers the session by labels, not by history: the BLOCK above holds nothing
    // later, but once the session read content someone else wrote, a side effect outside a grant is held.
    const after = await pep.authorizeAction('refund_payment', args, { simulated: true });
    expect(after).toMatchObject({ verdict: 'ALLOW', simulated: true });
    await pep.checkContextEgress('Hi, please refund order ord_1842.', { tool: 'read_email' });
    const watched = await pep.authorizeAction('refund_payment', args, { simulated: true });
    expect(watched).toMatchObject({ verdict: 'ESCALATE', simulated: true });
    expect(watched.latches).toContain('untrusted-side-effect-review');
    const simulated = await pep.withSession('sess_demo_clean').authorizeAction('refund_payment', args, {
      simulated: true,
    });
    expect(simulated).toMatchObject({ verdict: 'ALLOW', simulated: true });
    expect(simulated.synthesized).toBeUndefined();
    await pep.close();
  });

  test('guardTool runs only after approval, exactly once', async () => {
    const pep = pepOf();
    let runs = 0;
    const refund = pep.guardTool('refund_payment', async () => ++runs);
    const args = { orderId: 'ord_2', amount: 700 };
    const error = await refund(args).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PolicyEscalatedError);
    pdp.resolveEscalation((error as PolicyEscalatedError).decision.escalationId!, 'approve');
    await expect(refund(args)).resolves.toBe(1);
    await expect(refund(args)).rejects.toBeInstanceOf(PolicyEscalatedError);
    expect(runs).toBe(1);
    await pep.close();
  });

  test('faults become synthesized BLOCKs', async () => {
    const pep = createPep({
      pdpUrl: pdp.url,
      agentId: 'support-ai',
      session: 's',
      apiKey: 'client-key',
      timeoutMs: 500,
      retries: 0,
      permits: false,
    });
    const cases: [Parameters<DevPdp['setFault']>[0], string][] = [
      [{ kind: 'hang' }, 'pdp_timeout'],
      [{ kind: 'reset' }, 'pdp_unreachable'],
      [{ kind: 'status', status: 503 }, 'pdp_status'],
      [{ kind: 'garbage' }, 'invalid_response'],
      [{ kind: 'slow', bytesPerSecond: 20 }, 'pdp_timeout'],
    ];
    for (const [fault, code] of cases) {
      pdp.setFault(fault);
      const d = await pep.checkInput('hello');
      expect(d.synthesized?.code, fault?.kind).toBe(code);
    }
    pdp.setFault(null);
    expect((await pep.checkInput('hello')).verdict).toBe('ALLOW');
    await pep.close();
  });
});
