/**
 * Per-call options on every stage method, the `dispatcher` and `permits.algorithms` options, a DNS
 * failure, and what guardTool hands to `execute`.
 */
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { actionHash, createPep, type Pep, type PolicyBlockedError, type PolicyDecision } from '../../../src/index.js';
import { createClients } from '../../support/clients.js';
import { answer, type FakePdp, startFakePdp } from '../../support/fake-pdp.js';

let pdp: FakePdp;
beforeAll(async () => {
  pdp = await startFakePdp((req, res) => {
    const body: Record<string, unknown> = { verdict: 'ALLOW', requestId: req.body.requestId };
    if (req.body.stage === 'action' && req.body.simulated !== true) body.permitId = 'p';
    if (req.body.simulated === true) body.simulated = true;
    answer(res, body);
  });
});
afterAll(async () => {
  await clients.closeAll();
  await pdp.close();
});
const clients = createClients(() => ({ pdpUrl: pdp.url, agentId: 'a', session: 's_default' }));
const client = clients.client.bind(clients);

type Method = (pep: Pep, opts: Record<string, unknown>) => Promise<PolicyDecision>;
const METHODS: [string, Method][] = [
  ['authorizeAction', (pep, o) => pep.authorizeAction('t', { a: 1 }, o)],
  ['checkInput', (pep, o) => pep.checkInput('x', o)],
  ['checkContextEgress', (pep, o) => pep.checkContextEgress('x', o)],
  ['checkOutput', (pep, o) => pep.checkOutput('x', o)],
  ['checkDelivery', (pep, o) => pep.checkDelivery('x', o)],
];

describe.each(METHODS)('%s per-call options', (_name, call) => {
  it('sends the per-call session and simulated flag', async () => {
    const before = pdp.received.length;
    const d = await call(client(), { session: 's_call', simulated: true });
    const sent = pdp.received[before]?.body;
    expect(sent?.session).toBe('s_call');
    expect(sent?.simulated).toBe(true);
    expect(d.simulated).toBe(true);
  });

  it('a fired signal is BLOCK aborted with no request', async () => {
    const before = pdp.received.length;
    const d = await call(client(), { signal: AbortSignal.abort() });
    expect(d.synthesized?.code).toBe('aborted');
    expect(pdp.received.length).toBe(before);
  });
});

describe('dispatcher option', () => {
  it('sends through the given undici Dispatcher, and close() leaves it open', async () => {
    const agent = new Agent();
    const dispatch = vi.spyOn(agent, 'dispatch');
    const pep = createPep({ pdpUrl: pdp.url, agentId: 'a', session: 's', dispatcher: agent });
    expect((await pep.checkInput('x')).verdict).toBe('ALLOW');
    expect(dispatch).toHaveBeenCalled();
    await pep.close();
    expect(agent.destroyed).toBe(false);
    expect((await pep.checkInput('x')).synthesized?.code).toBe('pdp_unreachable');
    await agent.close();
  });

  it('a DNS failure (ENOTFOUND) is pdp_unreachable', async () => {
    const agent = new Agent({
      connect: {
        lookup: (_host: string, _opts: unknown, cb: (err: Error) => void) =>
          cb(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' })),
      } as never,
    });
    const pep = createPep({ pdpUrl: 'http://pdp.invalid', agentId: 'a', session: 's', dispatcher: agent, retries: 0 });
    expect((await pep.checkInput('x')).synthesized?.code).toBe('pdp_unreachable');
    await pep.close();
    await agent.close();
  });
});

describe('permits', () => {
  const ISS = 'https://pdp.test';
  async function keys() {
    const ed = await generateKeyPair('EdDSA');
    const jwk = { ...(await exportJWK(ed.publicKey)), kid: 'k1', alg: 'EdDSA' };
    const permit = async (claims: Record<string, unknown> = {}) => {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({
        sid: 's',
        tool: 't',
        act_hash: actionHash('t', { a: 1 }),
        ...claims,
      })
        .setProtectedHeader({ alg: 'EdDSA', kid: 'k1', typ: 'permit+jwt' })
        .setIssuer(ISS)
        .setAudience('svc')
        .setSubject('a')
        .setJti(`j${Math.random()}`)
        .setIssuedAt(now)
        .setExpirationTime(now + 60)
        .sign(ed.privateKey);
    };
    return { jwks: { keys: [jwk] }, permit };
  }

  it('permits.algorithms is honoured: an EdDSA permit with only ES256 allowed is permit_invalid', async () => {
    const { jwks, permit } = await keys();
    const p = await permit();
    const pep = client({ session: 's', permits: { keys: jwks, issuer: ISS, algorithms: ['ES256'] } });
    const saved = pdp.handler;
    pdp.handler = (req, res) => answer(res, { verdict: 'ALLOW', permitId: p, requestId: req.body.requestId });
    const execute = vi.fn();
    const err = await pep
      .guardTool(
        't',
        execute,
      )({ a: 1 })
      .catch((e: unknown) => e);
    pdp.handler = saved;
    expect((err as PolicyBlockedError).code).toBe('permit_invalid');
    expect(execute).not.toHaveBeenCalled();
  });

  it('guardTool does not consume the permit (the service does): the same permit executes twice', async () => {
    const { jwks, permit } = await keys();
    const p = await permit();
    const pep = client({ session: 's', permits: { keys: jwks, issuer: ISS } });
    const saved = pdp.handler;
    pdp.handler = (req, res) => answer(res, { verdict: 'ALLOW', permitId: p, requestId: req.body.requestId });
    const seen: { verdict: string; permitId: string | undefined; signal: AbortSignal | undefined }[] = [];
    const tool = pep.guardTool('t', (_args, ctx) => {
      seen.push({ verdict: ctx.decision.verdict, permitId: ctx.permitId, signal: ctx.signal });
      return 'ok';
    });
    const ctrl = new AbortController();
    expect(await tool({ a: 1 }, { signal: ctrl.signal })).toBe('ok');
    expect(await tool({ a: 1 })).toBe('ok');
    pdp.handler = saved;
    expect(seen).toHaveLength(2);
    expect(seen[0]?.verdict).toBe('ALLOW');
    expect(seen[0]?.permitId).toBe(p);
    expect(seen[0]?.signal).toBe(ctrl.signal);
    expect(seen[1]?.signal).toBeUndefined();
  });

  it('toolMessage carries the reason exactly, for tools and text stages', async () => {
    const saved = pdp.handler;
    pdp.handler = (req, res) =>
      answer(res, { verdict: 'BLOCK', reason: 'no refunds today', requestId: req.body.requestId });
    const pep = client({ permits: false });
    const err = await pep
      .guardTool(
        'refund_payment',
        () => 1,
      )({ a: 1 })
      .catch((e: unknown) => e);
    expect((err as PolicyBlockedError).toolMessage).toBe(
      "ERROR: Tool 'refund_payment' denied by policy: no refunds today",
    );
    pdp.handler = (req, res) => answer(res, { verdict: 'ESCALATE', reason: 'held', requestId: req.body.requestId });
    const err2 = await pep.guardText('output', 'x').catch((e: unknown) => e);
    expect((err2 as PolicyBlockedError).toolMessage).toBe('ERROR: output is held for human review: held');
    pdp.handler = saved;
  });

  it('observer events carry the requestId of the decision', async () => {
    const ids: string[] = [];
    const pep = client({ onDecision: (e: { requestId: string }) => ids.push(e.requestId) });
    const d = await pep.checkInput('x');
    expect(ids).toEqual([d.requestId]);
  });
});
