/**
 * CONTRACT.md section 18 on Cloudflare Workers: real workerd (from miniflare), the Worker bundled with
 * the `workerd` export condition and no `nodejs_compat` (so `process` is undefined and no Node
 * built-in exists). It keeps every fail-closed rule on the fetch transport (chosen there on its own),
 * uses a permit once with the Durable Object replay store, runs the AI SDK adapter end to end, and
 * two Workers (two isolates) sharing one Durable Object accept one permit once between them.
 */
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionHash, createPep } from '../../../src/index.js';
import { bundleFor, WORKERD_CONDITIONS } from '../../support/runtime-bundle.js';
import { expectSuite, type SuiteResult } from '../../support/runtime-expect.js';
import { type RuntimePdps, startRuntimePdps } from '../../support/runtime-pdps.js';
import { ROOT } from '../../support/runtime-process.js';

let pdps: RuntimePdps;
let mf: Miniflare;

/** A Worker of the bundle, bound to the replay Durable Object hosted by the Worker `store`. */
function verifierWorker(name: string, script: string) {
  return {
    name,
    modules: true,
    script,
    compatibilityDate: '2026-07-01',
    durableObjects: { PERMIT_REPLAY: { className: 'PermitReplayDurableObject', scriptName: 'store' } },
  };
}

beforeAll(async () => {
  pdps = await startRuntimePdps();
  const { code, nodeImports } = await bundleFor('./test/fixtures/runtimes/worker.js', WORKERD_CONDITIONS, ROOT);
  expect(nodeImports).toEqual([]);
  mf = new Miniflare({
    workers: [
      verifierWorker('a', code),
      verifierWorker('b', code),
      {
        name: 'store',
        modules: true,
        script: code,
        compatibilityDate: '2026-07-01',
        durableObjects: { PERMIT_REPLAY: 'PermitReplayDurableObject' },
      },
    ],
  });
  await mf.ready;
}, 120_000);
afterAll(async () => {
  await mf?.dispose();
  await pdps?.close();
});

async function ask(worker: 'a' | 'b', action: string, config: object): Promise<unknown> {
  const fetcher = (await mf.getWorker(worker)) as unknown as { fetch: typeof fetch };
  const res = await fetcher.fetch('http://worker.test/', { method: 'POST', body: JSON.stringify({ action, config }) });
  expect(res.status).toBe(200);
  return res.json();
}

/** A fresh permit from the dev PDP, minted for the Node client (the runtimes only verify it). */
async function mintPermit(args: Record<string, unknown>): Promise<string> {
  const pep = createPep({ pdpUrl: pdps.devPdp.url, agentId: 'support-ai', session: 'sess_workerd' });
  const d = await pep.authorizeAction('refund_payment', args);
  await pep.close();
  expect(d.verdict).toBe('ALLOW');
  return d.permitId as string;
}

describe('workerd', () => {
  it('keeps every fail-closed rule, uses a permit once with the Durable Object store, and runs the AI SDK adapter', async () => {
    const r = (await ask('a', 'suite', pdps.config)) as SuiteResult & { undici: string; process: string };
    expectSuite(r, 'TypeError:replayStore');
    expect(r.undici).toBe('TypeError:transport');
    expect(r.process).toBe('undefined');
  });

  it('a permit is used once across two isolates sharing one Durable Object', async () => {
    const args = { orderId: 'ord_2001', amount: 40 };
    const config = { ...pdps.config, permit: await mintPermit(args), args };
    expect(await ask('a', 'verify', config)).toEqual({ result: 'verified' });
    expect(await ask('b', 'verify', config)).toEqual({ result: 'permit_replayed' });
    expect(await ask('a', 'verify', config)).toEqual({ result: 'permit_replayed' });
  });

  it('of two isolates verifying one permit at once, exactly one accepts it', async () => {
    const args = { orderId: 'ord_2002', amount: 41 };
    const config = { ...pdps.config, permit: await mintPermit(args), args };
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => ask(i % 2 === 0 ? 'a' : 'b', 'verify', config)),
    );
    const outcomes = results.map((r) => (r as { result: string }).result).sort();
    expect(outcomes).toEqual([
      'permit_replayed',
      'permit_replayed',
      'permit_replayed',
      'permit_replayed',
      'permit_replayed',
      'verified',
    ]);
  });

  it('verifies an ES256 permit with WebCrypto (no node:crypto in workerd), once', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'es-1', alg: 'ES256', use: 'sig' }] };
    const args = { orderId: 'ord_2003', amount: 42 };
    const issuer = 'http://issuer.test';
    const now = Math.floor(Date.now() / 1000);
    const permit = await new SignJWT({
      sid: 'sess_es',
      tool: 'refund_payment',
      act_hash: actionHash('refund_payment', args),
    })
      .setProtectedHeader({ alg: 'ES256', kid: 'es-1', typ: 'permit+jwt' })
      .setIssuer(issuer)
      .setAudience('agent-pep')
      .setSubject('support-ai')
      .setJti(`jti-es-${now}`)
      .setIssuedAt(now)
      .setExpirationTime(now + 60)
      .sign(privateKey);
    const config = { ...pdps.config, issuer, jwks, permit, args };
    expect(await ask('a', 'verify', config)).toEqual({ result: 'verified' });
    expect(await ask('b', 'verify', config)).toEqual({ result: 'permit_replayed' });
    const tampered = { ...config, args: { ...args, amount: 4200 } };
    expect(await ask('b', 'verify', tampered)).toEqual({ result: 'permit_args_mismatch' });
  });
});
