/**
 * One audience per service (docs/dev-pdp.md, `toolAudiences`): two services, each with its own replay
 * store, verify permits for their own audience. A permit for one service's tool is accepted by that
 * service once, and by the other never, so a permit cannot be used once at each service.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPep, type Pep } from '../../../../src/index.js';
import { createPermitVerifier, type PermitVerifier } from '../../../../src/permit/verifier.js';
import { createMemoryReplayStore } from '../../../../src/replay/memory.js';
import { runInProcess } from '../../../../test/support/cli.js';
import { permitCodeOf } from '../../../../test/support/permits.js';
import { startDevPdp } from '../../src/index.js';

const POLICY = { agents: ['support-ai'], latches: [] };
let pdp: Awaited<ReturnType<typeof startDevPdp>>;
let pep: Pep;
let payments: PermitVerifier;
let mail: PermitVerifier;
let other: PermitVerifier;

beforeAll(async () => {
  pdp = await startDevPdp({
    policy: POLICY,
    log: false,
    audience: 'everything-else',
    toolAudiences: { 'refund_*': 'payments-service', send_email: 'mail-service' },
  });
  pep = createPep({ pdpUrl: pdp.url, agentId: 'support-ai', session: 's', permits: false });
  const service = (audience: string) =>
    createPermitVerifier({ keys: pdp.jwks, issuer: pdp.issuer, audience, replayStore: createMemoryReplayStore() });
  payments = service('payments-service');
  mail = service('mail-service');
  other = service('everything-else');
});
afterAll(async () => {
  await pep.close();
  await pdp.close();
});

async function permitFor(tool: string, args: Record<string, unknown>): Promise<string> {
  const d = await pep.authorizeAction(tool, args);
  expect(d.verdict).toBe('ALLOW');
  return d.permitId as string;
}

describe('dev PDP toolAudiences: one audience per service', () => {
  it('a refund permit is accepted once by the payments service and never by the mail service (with its own store)', async () => {
    const args = { orderId: 'ord_1', amount: 12 };
    const permit = await permitFor('refundPayment', args);
    expect(await permitCodeOf(mail.verify(permit, { tool: 'refund_payment', args }))).toBe('permit_claim_invalid');
    await expect(payments.verify(permit, { tool: 'refund_payment', args })).resolves.toMatchObject({
      aud: 'payments-service',
    });
    expect(await permitCodeOf(payments.verify(permit, { tool: 'refund_payment', args }))).toBe('permit_replayed');
    expect(await permitCodeOf(mail.verify(permit, { tool: 'refund_payment', args }))).toBe('permit_claim_invalid');
  });

  it('each tool gets its own audience; a tool no pattern matches gets audience', async () => {
    const mailArgs = { to: 'a@example.com' };
    const m = await permitFor('send_email', mailArgs);
    expect(await permitCodeOf(payments.verify(m, { tool: 'send_email', args: mailArgs }))).toBe('permit_claim_invalid');
    await expect(mail.verify(m, { tool: 'send_email', args: mailArgs })).resolves.toMatchObject({
      aud: 'mail-service',
    });
    const o = await permitFor('lookup_order', { id: 1 });
    await expect(other.verify(o, { tool: 'lookup_order', args: { id: 1 } })).resolves.toMatchObject({
      aud: 'everything-else',
    });
  });

  it('bad toolAudiences are a TypeError naming the path', async () => {
    // startDevPdp is async: the TypeError is its rejection
    const optionOfAsync = async (toolAudiences: unknown) =>
      startDevPdp({ policy: POLICY, log: false, toolAudiences } as never).then(
        async (p) => {
          await p.close();
          return 'started';
        },
        (e: unknown) => (e instanceof TypeError ? (e as { option?: unknown }).option : 'not a TypeError'),
      );
    expect(await optionOfAsync('payments')).toBe('toolAudiences');
    expect(await optionOfAsync(['a'])).toBe('toolAudiences');
    expect(await optionOfAsync({ 'Refund-Payment': 'p' })).toBe('toolAudiences.Refund-Payment');
    expect(await optionOfAsync({ refund_payment: '' })).toBe('toolAudiences.refund_payment');
    expect(await optionOfAsync({ refund_payment: 7 })).toBe('toolAudiences.refund_payment');
    expect(await optionOfAsync({ refund_payment: 'p' })).toBe('started');
    expect(await optionOfAsync(undefined)).toBe('started');
  });

  it('the CLI takes --tool-audience PATTERN=AUD, and refuses one without =', async () => {
    const r = await runInProcess(['dev-pdp', '--policy', 'x.json', '--tool-audience', 'refund_payment']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--tool-audience must be PATTERN=AUDIENCE/);
  });
});
