/**
 * guardTool verifies the permit before execute runs (CONTRACT.md section 5), and rule 5 binds the
 * permit to what was asked. A fake PDP signs permits with keys made here, some of them wrong on purpose.
 */
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { actionHash, createPep, type Pep, PolicyBlockedError } from '../../../src/index.js';
import { answer, type FakePdp, startFakePdp } from '../../support/fake-pdp.js';

type Key = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
let pdp: FakePdp;
let pep: Pep;
let good: Key;
let foreign: Key;
const ISS = 'https://pdp.test';
const clients: Pep[] = [];

async function permit(
  claims: Partial<JWTPayload> & Record<string, unknown>,
  opts: { key?: Key; kid?: string; typ?: string } = {},
) {
  const now = Math.floor(Date.now() / 1000);
  const body = {
    iss: ISS,
    aud: 'agent-pep',
    sub: 'support-ai',
    sid: 'sess_1',
    jti: `jti_${Math.random()}`,
    iat: now,
    exp: now + 60,
    ...claims,
  };
  return new SignJWT(body)
    .setProtectedHeader({ alg: 'EdDSA', kid: opts.kid ?? 'k1', typ: opts.typ ?? 'permit+jwt' })
    .sign(opts.key ?? good);
}

beforeAll(async () => {
  const a = await generateKeyPair('EdDSA');
  const b = await generateKeyPair('EdDSA');
  good = a.privateKey;
  foreign = b.privateKey;
  const jwk = { ...(await exportJWK(a.publicKey)), kid: 'k1', alg: 'EdDSA' };
  pdp = await startFakePdp();
  pep = createPep({
    pdpUrl: pdp.url,
    agentId: 'support-ai',
    session: 'sess_1',
    permits: { keys: { keys: [jwk] }, issuer: ISS },
  });
  clients.push(pep);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await pdp.close();
});
afterEach(() => {
  pdp.received.length = 0;
});

const ARGS = { orderId: 'ord_1842', amount: 129 };
const bound = (args: Record<string, unknown> = ARGS) => ({
  tool: 'refund_payment',
  act_hash: actionHash('refund_payment', args),
});

function pdpSends(make: () => Promise<Record<string, unknown>>): void {
  pdp.handler = async (req, res) => answer(res, { requestId: req.body.requestId, ...(await make()) });
}

describe('guardTool', () => {
  it('executes exactly once with a valid permit bound to the args', async () => {
    pdpSends(async () => ({ verdict: 'ALLOW', permitId: await permit(bound()) }));
    const execute = vi.fn(() => 'ok');
    expect(await pep.guardTool('refundPayment', execute)({ amount: 129, orderId: 'ord_1842' })).toBe('ok');
    expect(execute).toHaveBeenCalledTimes(1);
  });

  it('executes with transformedArgs when the permit is bound to them', async () => {
    const changed = { orderId: 'ord_1842', amount: 100 };
    pdpSends(async () => ({ verdict: 'WARN', transformedArgs: changed, permitId: await permit(bound(changed)) }));
    const execute = vi.fn((args: Record<string, unknown>) => args.amount);
    expect(await pep.guardTool('refund_payment', execute)(ARGS)).toBe(100);
  });

  const refusedAtVerification: [string, () => Promise<string>][] = [
    ['signed by a foreign key with the same kid', () => permit(bound(), { key: foreign })],
    ['with an unknown kid', () => permit(bound(), { kid: 'k9' })],
    [
      'expired',
      () => permit({ ...bound(), iat: Math.floor(Date.now() / 1000) - 200, exp: Math.floor(Date.now() / 1000) - 100 }),
    ],
    ['from another issuer', () => permit({ ...bound(), iss: 'https://evil.test' })],
    ['with a wrong typ', () => permit(bound(), { typ: 'JWT' })],
    ['living longer than 300 s', () => permit({ ...bound(), exp: Math.floor(Date.now() / 1000) + 3600 })],
    [
      'with alg none',
      async () => {
        const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
        const now = Math.floor(Date.now() / 1000);
        return `${enc({ alg: 'none', kid: 'k1', typ: 'permit+jwt' })}.${enc({ iss: ISS, aud: 'agent-pep', sub: 'support-ai', sid: 'sess_1', jti: 'j', iat: now, exp: now + 60, ...bound() })}.`;
      },
    ],
  ];
  it.each(refusedAtVerification)('refuses a permit %s: permit_invalid, never executed', async (_l, make) => {
    pdpSends(async () => ({ verdict: 'ALLOW', permitId: await make() }));
    const execute = vi.fn();
    const err = await pep
      .guardTool(
        'refund_payment',
        execute,
      )(ARGS)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PolicyBlockedError);
    expect((err as PolicyBlockedError).code).toBe('permit_invalid');
    expect((err as PolicyBlockedError).decision.synthesized?.code).toBe('permit_invalid');
    expect((err as Error).cause).toBeDefined();
    expect((err as Error).message).not.toContain('eyJ');
    expect(execute).not.toHaveBeenCalled();
  });

  const unbound: [string, () => Promise<Record<string, unknown>>][] = [
    [
      'another tool',
      async () => ({ verdict: 'ALLOW', permitId: await permit({ ...bound(), tool: 'delete_account' }) }),
    ],
    ['other args', async () => ({ verdict: 'ALLOW', permitId: await permit(bound({ ...ARGS, amount: 1290 })) })],
    ['another agent', async () => ({ verdict: 'ALLOW', permitId: await permit({ ...bound(), sub: 'other-ai' }) })],
    ['another session', async () => ({ verdict: 'ALLOW', permitId: await permit({ ...bound(), sid: 'sess_x' }) })],
    [
      'the original args on a WARN that transforms them',
      async () => ({ verdict: 'WARN', transformedArgs: { ...ARGS, amount: 1 }, permitId: await permit(bound()) }),
    ],
    ['a permit that does not decode', async () => ({ verdict: 'ALLOW', permitId: 'not-a-jws' })],
  ];
  it.each(unbound)('rule 5: a permit for %s is ambiguous_decision, never executed', async (_l, make) => {
    pdpSends(make);
    const d = await pep.authorizeAction('refund_payment', ARGS);
    expect(d.synthesized?.code).toBe('ambiguous_decision');
    const execute = vi.fn();
    const err = await pep
      .guardTool(
        'refund_payment',
        execute,
      )(ARGS)
      .catch((e: unknown) => e);
    expect((err as PolicyBlockedError).code).toBe('ambiguous_decision');
    expect(execute).not.toHaveBeenCalled();
  });

  it('without permits configured, rule 5 is not applied (the permit is opaque)', async () => {
    const plain = createPep({ pdpUrl: pdp.url, agentId: 'support-ai', session: 'sess_1' });
    clients.push(plain);
    pdpSends(async () => ({ verdict: 'ALLOW', permitId: 'opaque' }));
    expect((await plain.authorizeAction('refund_payment', ARGS)).verdict).toBe('ALLOW');
  });

  it('the args the caller mutates after calling are not what runs', async () => {
    let release: () => void = () => {};
    pdp.handler = async (req, res) => {
      const p = await permit(bound());
      release = () => answer(res, { verdict: 'ALLOW', permitId: p, requestId: req.body.requestId });
    };
    const execute = vi.fn((args: Record<string, unknown>) => args.amount);
    const args = { ...ARGS };
    const pending = pep.guardTool('refund_payment', execute)(args);
    args.amount = 999_999;
    await vi.waitFor(() => expect(pdp.received).toHaveLength(1));
    await new Promise((r) => setTimeout(r, 20));
    release();
    expect(await pending).toBe(129);
  });
});

describe('observers see the guard helpers own BLOCKs', () => {
  it('a permit that fails verification is reported as BLOCK permit_invalid, after the PDP ALLOW', async () => {
    const events: { verdict: string; code: string | undefined }[] = [];
    const observed = createPep({
      pdpUrl: pdp.url,
      agentId: 'support-ai',
      session: 'sess_1',
      permits: { keys: { keys: [] }, issuer: ISS },
      onDecision: (e) => events.push({ verdict: e.decision.verdict, code: e.decision.synthesized?.code }),
    });
    clients.push(observed);
    pdpSends(async () => ({ verdict: 'ALLOW', permitId: await permit(bound()) }));
    const err = await observed
      .guardTool(
        'refund_payment',
        () => 'ran',
      )(ARGS)
      .catch((e: unknown) => e);
    expect((err as PolicyBlockedError).code).toBe('permit_invalid');
    expect(events).toEqual([
      { verdict: 'ALLOW', code: undefined },
      { verdict: 'BLOCK', code: 'permit_invalid' },
    ]);
  });

  it('a simulated decision refused by guardText is reported as BLOCK simulated', async () => {
    const events: (string | undefined)[] = [];
    const observed = createPep({
      pdpUrl: pdp.url,
      agentId: 'support-ai',
      session: 'sess_1',
      onDecision: (e) => events.push(e.decision.synthesized?.code),
    });
    clients.push(observed);
    pdpSends(async () => ({ verdict: 'ALLOW', simulated: true }));
    await expect(observed.guardText('input', 'x', { simulated: true })).rejects.toBeInstanceOf(PolicyBlockedError);
    expect(events).toEqual([undefined, 'simulated']);
  });
});

describe('guardTool and the caller signal during permit verification', () => {
  it('a signal that fires while the JWKS hangs ends the call at once with aborted; execute never runs', async () => {
    const hung = await startFakePdp(() => undefined);
    const pep2 = createPep({
      pdpUrl: pdp.url,
      agentId: 'support-ai',
      session: 'sess_1',
      permits: { keys: `${hung.url}/.well-known/jwks.json`, issuer: ISS },
    });
    clients.push(pep2);
    pdpSends(async () => ({ verdict: 'ALLOW', permitId: await permit(bound()) }));
    const execute = vi.fn();
    const ctrl = new AbortController();
    const t0 = performance.now();
    setTimeout(() => ctrl.abort(), 150);
    const err = await pep2
      .guardTool('refund_payment', execute)(ARGS, { signal: ctrl.signal })
      .catch((e: unknown) => e);
    expect((err as PolicyBlockedError).code).toBe('aborted');
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(execute).not.toHaveBeenCalled();
    await hung.close();
  });
});
