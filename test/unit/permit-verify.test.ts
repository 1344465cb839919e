import { createSecretKey, generateKeyPairSync, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type CryptoKey,
  exportJWK,
  exportSPKI,
  generateKeyPair,
  type JSONWebKeySet,
  type JWK,
  type JWTPayload,
  SignJWT,
} from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PermitVerificationError } from '../../src/errors.js';
import { actionHash } from '../../src/permit/hash.js';
import { createPermitChecker, createPermitVerifier, type PermitVerifierOptions } from '../../src/permit/verify.js';
import { createMemoryReplayStore } from '../../src/replay/memory.js';
import type { ReplayStore } from '../../src/replay/types.js';

const ISSUER = 'http://pdp.test';
const AUDIENCE = 'payments-service';
const TOOL = 'refund_payment';
const ARGS = { orderId: 'ord_1842', amount: 129 };

let privateKey: CryptoKey;
let publicKey: CryptoKey;
let publicJwk: JWK;
let jwks: JSONWebKeySet;

beforeAll(async () => {
  ({ privateKey, publicKey } = await generateKeyPair('EdDSA', { extractable: true }));
  publicJwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'EdDSA', use: 'sig' };
  jwks = { keys: [publicJwk] };
});

const now = (): number => Math.floor(Date.now() / 1000);

interface MintOptions {
  claims?: Record<string, unknown>;
  omit?: string[];
  header?: Record<string, unknown>;
  omitHeader?: string[];
  key?: CryptoKey | Uint8Array;
}

/** A permit as the PDP mints it, with overrides. */
async function mint(o: MintOptions = {}): Promise<string> {
  const t = now();
  const claims: Record<string, unknown> = {
    iss: ISSUER,
    aud: AUDIENCE,
    sub: 'support-ai',
    sid: 'sess_demo',
    jti: randomUUID(),
    iat: t,
    exp: t + 60,
    tool: TOOL,
    act_hash: actionHash(TOOL, ARGS),
    decision_id: 'dec_1',
    ...o.claims,
  };
  for (const k of o.omit ?? []) delete claims[k];
  const header: Record<string, unknown> = { alg: 'EdDSA', kid: 'k1', typ: 'permit+jwt', ...o.header };
  for (const k of o.omitHeader ?? []) delete header[k];
  return new SignJWT(claims as JWTPayload).setProtectedHeader(header as { alg: string }).sign(o.key ?? privateKey);
}

const b64 = (v: unknown): string => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

function verifier(extra: Partial<PermitVerifierOptions> = {}) {
  return createPermitVerifier({ keys: jwks, issuer: ISSUER, audience: AUDIENCE, ...extra });
}

/** The code a rejection carries (fails the test when it resolves or throws something else). */
async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(PermitVerificationError);
    return (e as PermitVerificationError).code;
  }
  throw new Error('expected a rejection');
}

describe('createPermitVerifier: a valid permit', () => {
  it('resolves the claims, once', async () => {
    const v = verifier();
    const permit = await mint();
    const claims = await v.verify(permit, { tool: TOOL, args: ARGS });
    expect(claims.tool).toBe(TOOL);
    expect(claims.sub).toBe('support-ai');
    expect(claims.act_hash).toBe(actionHash(TOOL, ARGS));
  });

  it('accepts any spelling of the tool, reordered args and 129.0 for 129', async () => {
    const v = verifier();
    await expect(v.verify(await mint(), { tool: 'refundPayment', args: ARGS })).resolves.toBeDefined();
    await expect(
      v.verify(await mint(), { tool: TOOL, args: { amount: 129.0, orderId: 'ord_1842' } }),
    ).resolves.toBeDefined();
  });

  it('accepts an aud array containing the audience, and an audience list', async () => {
    await expect(
      verifier().verify(await mint({ claims: { aud: ['other', AUDIENCE] } }), { tool: TOOL, args: ARGS }),
    ).resolves.toBeDefined();
    const v = verifier({ audience: ['x', AUDIENCE] });
    await expect(v.verify(await mint(), { tool: TOOL, args: ARGS })).resolves.toBeDefined();
  });

  it('accepts a lifetime of exactly 300 s, an nbf in the past, and no nbf / decision_id', async () => {
    const t = now();
    const v = verifier();
    await expect(
      v.verify(await mint({ claims: { iat: t, exp: t + 300 } }), { tool: TOOL, args: ARGS }),
    ).resolves.toBeDefined();
    await expect(v.verify(await mint({ claims: { nbf: t - 10 } }), { tool: TOOL, args: ARGS })).resolves.toBeDefined();
    await expect(v.verify(await mint({ omit: ['decision_id'] }), { tool: TOOL, args: ARGS })).resolves.toBeDefined();
  });

  it('works with a public KeyObject, a CryptoKey, and ES256 in a JWKS', async () => {
    const pair = generateKeyPairSync('ed25519');
    const v1 = createPermitVerifier({ keys: pair.publicKey, issuer: ISSUER, audience: AUDIENCE });
    await expect(
      v1.verify(await mint({ key: pair.privateKey as never }), { tool: TOOL, args: ARGS }),
    ).resolves.toBeDefined();
    const v2 = createPermitVerifier({ keys: publicKey, issuer: ISSUER, audience: AUDIENCE });
    await expect(v2.verify(await mint(), { tool: TOOL, args: ARGS })).resolves.toBeDefined();
    const es = await generateKeyPair('ES256', { extractable: true });
    const esJwks = { keys: [{ ...(await exportJWK(es.publicKey)), kid: 'e1' }] };
    const v3 = createPermitVerifier({ keys: esJwks, issuer: ISSUER, audience: AUDIENCE });
    const permit = await mint({ key: es.privateKey, header: { alg: 'ES256', kid: 'e1' } });
    await expect(v3.verify(permit, { tool: TOOL, args: ARGS })).resolves.toBeDefined();
  });

  it('tolerates a clock skew within clockToleranceSec', async () => {
    const t = now();
    const v = verifier({ clockToleranceSec: 30 });
    await expect(
      v.verify(await mint({ claims: { iat: t - 60, exp: t - 10 } }), { tool: TOOL, args: ARGS }),
    ).resolves.toBeDefined();
    await expect(
      v.verify(await mint({ claims: { iat: t + 10, exp: t + 60, nbf: t + 10 } }), { tool: TOOL, args: ARGS }),
    ).resolves.toBeDefined();
  });
});

describe('createPermitVerifier: every attack has its code', () => {
  it('missing permit: permit_missing', async () => {
    const v = verifier();
    for (const p of [undefined, null, '', '   ', 42, {}]) {
      expect(await codeOf(v.verify(p as unknown as string, { tool: TOOL, args: ARGS }))).toBe('permit_missing');
    }
  });

  it('malformed permit: permit_malformed', async () => {
    const v = verifier();
    const good = await mint();
    const [h, p, s] = good.split('.') as [string, string, string];
    const malformed = [
      'abc',
      'a.b',
      `${good}.x`,
      `${good}.x.y`,
      `${b64('not json')}.${p}.${s}`,
      `${b64([1, 2])}.${p}.${s}`,
      `${h}.${b64('not json')}.${s}`,
      `${h}.${b64('"a string"')}.${s}`,
      `${h}.${p}.${s}*`,
      `${h}!.${p}.${s}`,
      `.${p}.${s}`,
      `${h}..${s}`,
      `${b64({ kid: 'k1', typ: 'permit+jwt' })}.${p}.${s}`, // no alg
      `${h}.${p}.${s}${'A'.repeat(20_000)}`, // too long
    ];
    for (const permit of malformed) {
      expect(await codeOf(v.verify(permit, { tool: TOOL, args: ARGS })), permit.slice(0, 40)).toBe('permit_malformed');
    }
  });

  it('missing kid: permit_malformed', async () => {
    expect(await codeOf(verifier().verify(await mint({ omitHeader: ['kid'] }), { tool: TOOL, args: ARGS }))).toBe(
      'permit_malformed',
    );
  });

  it('a crit header: permit_malformed', async () => {
    const [h0, p, s] = (await mint()).split('.') as [string, string, string];
    const header = { ...JSON.parse(Buffer.from(h0, 'base64url').toString()), crit: ['x'], x: 1 };
    expect(await codeOf(verifier().verify(`${b64(header)}.${p}.${s}`, { tool: TOOL, args: ARGS }))).toBe(
      'permit_malformed',
    );
  });

  it("alg 'none' (with and without kid): permit_alg_not_allowed", async () => {
    const payload = b64({
      iss: ISSUER,
      aud: AUDIENCE,
      sub: 'a',
      sid: 's',
      jti: 'j',
      iat: now(),
      exp: now() + 60,
      tool: TOOL,
      act_hash: actionHash(TOOL, ARGS),
    });
    const v = verifier();
    for (const header of [{ alg: 'none' }, { alg: 'none', kid: 'k1', typ: 'permit+jwt' }, { alg: 'None', kid: 'k1' }]) {
      expect(await codeOf(v.verify(`${b64(header)}.${payload}.`, { tool: TOOL, args: ARGS }))).toBe(
        'permit_alg_not_allowed',
      );
    }
  });

  it('HS256 signed with the public key bytes: permit_alg_not_allowed', async () => {
    const pem = await exportSPKI(publicKey);
    const v = verifier();
    for (const secret of [pem, JSON.stringify(publicJwk), publicJwk.x as string]) {
      const permit = await mint({ header: { alg: 'HS256' }, key: new TextEncoder().encode(secret) });
      expect(await codeOf(v.verify(permit, { tool: TOOL, args: ARGS }))).toBe('permit_alg_not_allowed');
    }
    // also against a verifier holding one KeyObject, and with HS512
    const v2 = createPermitVerifier({
      keys: generateKeyPairSync('ed25519').publicKey,
      issuer: ISSUER,
      audience: AUDIENCE,
    });
    const permit = await mint({ header: { alg: 'HS512' }, key: createSecretKey(Buffer.from(pem)) as never });
    expect(await codeOf(v2.verify(permit, { tool: TOOL, args: ARGS }))).toBe('permit_alg_not_allowed');
  });

  it('an algorithm outside the allow-list (RS256, ES384, ES256 when only EdDSA): permit_alg_not_allowed', async () => {
    const rs = await generateKeyPair('RS256');
    const es384 = await generateKeyPair('ES384');
    const es256 = await generateKeyPair('ES256');
    expect(
      await codeOf(
        verifier().verify(await mint({ header: { alg: 'RS256' }, key: rs.privateKey }), { tool: TOOL, args: ARGS }),
      ),
    ).toBe('permit_alg_not_allowed');
    expect(
      await codeOf(
        verifier().verify(await mint({ header: { alg: 'ES384' }, key: es384.privateKey }), { tool: TOOL, args: ARGS }),
      ),
    ).toBe('permit_alg_not_allowed');
    const onlyEd = verifier({ algorithms: ['EdDSA'] });
    expect(
      await codeOf(
        onlyEd.verify(await mint({ header: { alg: 'ES256' }, key: es256.privateKey }), { tool: TOOL, args: ARGS }),
      ),
    ).toBe('permit_alg_not_allowed');
  });

  it('the alg is refused before any key lookup', async () => {
    let fetched = 0;
    const server = createServer((_req, res) => {
      fetched++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks));
    });
    const url = await listen(server);
    try {
      const v = verifier({ keys: `${url}/jwks.json` });
      const permit = await mint({
        header: { alg: 'HS256' },
        key: new TextEncoder().encode('secret-secret-secret-secret-32b!'),
      });
      expect(await codeOf(v.verify(permit, { tool: TOOL, args: ARGS }))).toBe('permit_alg_not_allowed');
      expect(fetched).toBe(0);
    } finally {
      await close(server);
    }
  });

  it('a foreign key with the same kid: permit_signature_invalid', async () => {
    const foreign = await generateKeyPair('EdDSA');
    expect(await codeOf(verifier().verify(await mint({ key: foreign.privateKey }), { tool: TOOL, args: ARGS }))).toBe(
      'permit_signature_invalid',
    );
    const single = createPermitVerifier({ keys: publicKey, issuer: ISSUER, audience: AUDIENCE });
    expect(await codeOf(single.verify(await mint({ key: foreign.privateKey }), { tool: TOOL, args: ARGS }))).toBe(
      'permit_signature_invalid',
    );
  });

  it('an unknown kid: permit_signature_invalid', async () => {
    expect(await codeOf(verifier().verify(await mint({ header: { kid: 'k2' } }), { tool: TOOL, args: ARGS }))).toBe(
      'permit_signature_invalid',
    );
  });

  it('a tampered payload or signature, or an empty signature: permit_signature_invalid', async () => {
    const v = verifier();
    const [h, p, s] = (await mint()).split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    const tampered = `${h}.${b64({ ...claims, exp: claims.exp + 1 })}.${s}`;
    expect(await codeOf(v.verify(tampered, { tool: TOOL, args: ARGS }))).toBe('permit_signature_invalid');
    const flipped = `${h}.${p}.${s.startsWith('A') ? 'B' : 'A'}${s.slice(1)}`;
    expect(await codeOf(v.verify(flipped, { tool: TOOL, args: ARGS }))).toBe('permit_signature_invalid');
    expect(await codeOf(v.verify(`${h}.${p}.`, { tool: TOOL, args: ARGS }))).toBe('permit_signature_invalid');
  });

  it('an ES256 header on an Ed25519 key with that kid: permit_signature_invalid', async () => {
    const es = await generateKeyPair('ES256');
    const permit = await mint({ header: { alg: 'ES256' }, key: es.privateKey });
    const single = createPermitVerifier({ keys: publicKey, issuer: ISSUER, audience: AUDIENCE });
    expect(await codeOf(single.verify(permit, { tool: TOOL, args: ARGS }))).toBe('permit_signature_invalid');
    expect(await codeOf(verifier().verify(permit, { tool: TOOL, args: ARGS }))).toBe('permit_signature_invalid');
  });

  it('expired: permit_expired', async () => {
    const t = now();
    expect(
      await codeOf(
        verifier().verify(await mint({ claims: { iat: t - 120, exp: t - 60 } }), { tool: TOOL, args: ARGS }),
      ),
    ).toBe('permit_expired');
    // expired with exp before iat is still "expired" (time is checked before the lifetime)
    expect(await codeOf(verifier().verify(await mint({ claims: { exp: t - 60 } }), { tool: TOOL, args: ARGS }))).toBe(
      'permit_expired',
    );
  });

  it('nbf in the future: permit_not_yet_valid', async () => {
    expect(
      await codeOf(verifier().verify(await mint({ claims: { nbf: now() + 120 } }), { tool: TOOL, args: ARGS })),
    ).toBe('permit_not_yet_valid');
  });

  it('iat in the future: permit_claim_invalid', async () => {
    const t = now();
    expect(
      await codeOf(
        verifier().verify(await mint({ claims: { iat: t + 120, exp: t + 180 } }), { tool: TOOL, args: ARGS }),
      ),
    ).toBe('permit_claim_invalid');
  });

  it('lifetime over 300 s, or not positive: permit_claim_invalid', async () => {
    const t = now();
    const v = verifier();
    expect(await codeOf(v.verify(await mint({ claims: { iat: t, exp: t + 301 } }), { tool: TOOL, args: ARGS }))).toBe(
      'permit_claim_invalid',
    );
    expect(await codeOf(v.verify(await mint({ claims: { iat: t, exp: t + 3600 } }), { tool: TOOL, args: ARGS }))).toBe(
      'permit_claim_invalid',
    );
    expect(await codeOf(v.verify(await mint({ claims: { iat: t, exp: t } }), { tool: TOOL, args: ARGS }))).toBe(
      'permit_claim_invalid',
    );
  });

  it('wrong iss: permit_claim_invalid', async () => {
    expect(
      await codeOf(verifier().verify(await mint({ claims: { iss: 'http://evil.test' } }), { tool: TOOL, args: ARGS })),
    ).toBe('permit_claim_invalid');
    expect(
      await codeOf(verifier().verify(await mint({ claims: { iss: `${ISSUER}/` } }), { tool: TOOL, args: ARGS })),
    ).toBe('permit_claim_invalid');
  });

  it('wrong aud: permit_claim_invalid', async () => {
    const v = verifier();
    for (const aud of ['email-service', ['a', 'b'], 'payments-service ', 'Payments-Service']) {
      expect(await codeOf(v.verify(await mint({ claims: { aud } }), { tool: TOOL, args: ARGS }))).toBe(
        'permit_claim_invalid',
      );
    }
  });

  it('wrong or missing typ: permit_claim_invalid', async () => {
    const v = verifier();
    for (const typ of ['JWT', 'jwt', 'application/permit+jwt', 'PERMIT+JWT', 'at+jwt']) {
      expect(await codeOf(v.verify(await mint({ header: { typ } }), { tool: TOOL, args: ARGS })), typ).toBe(
        'permit_claim_invalid',
      );
    }
    expect(await codeOf(v.verify(await mint({ omitHeader: ['typ'] }), { tool: TOOL, args: ARGS }))).toBe(
      'permit_claim_invalid',
    );
  });

  it.each(['jti', 'exp', 'iat', 'iss', 'aud', 'sub', 'sid', 'tool', 'act_hash'])(
    'no %s: permit_claim_invalid',
    async (claim) => {
      expect(await codeOf(verifier().verify(await mint({ omit: [claim] }), { tool: TOOL, args: ARGS }))).toBe(
        'permit_claim_invalid',
      );
    },
  );

  it.each([
    ['exp', String(now() + 60)],
    ['iat', 'yesterday'],
    ['nbf', '0'],
    ['jti', 42],
    ['jti', ''],
    ['sub', null],
    ['aud', []],
    ['aud', [1]],
    ['tool', ['refund_payment']],
    ['act_hash', 1],
    ['decision_id', 7],
  ])('claim %s of the wrong type (%j): permit_claim_invalid', async (claim, value) => {
    expect(
      await codeOf(verifier().verify(await mint({ claims: { [claim]: value } }), { tool: TOOL, args: ARGS })),
    ).toBe('permit_claim_invalid');
  });

  it('another tool: permit_tool_mismatch', async () => {
    const v = verifier();
    expect(await codeOf(v.verify(await mint(), { tool: 'delete_account', args: ARGS }))).toBe('permit_tool_mismatch');
    expect(await codeOf(v.verify(await mint(), { tool: 'refund_payments', args: ARGS }))).toBe('permit_tool_mismatch');
    // a tool claim that is not in normalized form matches nothing
    expect(await codeOf(v.verify(await mint({ claims: { tool: 'refundPayment' } }), { tool: TOOL, args: ARGS }))).toBe(
      'permit_tool_mismatch',
    );
    // an expected tool that normalizes to nothing
    expect(await codeOf(v.verify(await mint(), { tool: '---', args: ARGS }))).toBe('permit_tool_mismatch');
  });

  it('args changed by one character: permit_args_mismatch', async () => {
    expect(
      await codeOf(verifier().verify(await mint(), { tool: TOOL, args: { orderId: 'ord_1843', amount: 129 } })),
    ).toBe('permit_args_mismatch');
  });

  it('args changed by one type (129 vs "129"): permit_args_mismatch', async () => {
    expect(
      await codeOf(verifier().verify(await mint(), { tool: TOOL, args: { orderId: 'ord_1842', amount: '129' } })),
    ).toBe('permit_args_mismatch');
  });

  it('an extra arg, or a missing one: permit_args_mismatch', async () => {
    const v = verifier();
    expect(await codeOf(v.verify(await mint(), { tool: TOOL, args: { ...ARGS, currency: 'EUR' } }))).toBe(
      'permit_args_mismatch',
    );
    expect(await codeOf(v.verify(await mint(), { tool: TOOL, args: { orderId: 'ord_1842' } }))).toBe(
      'permit_args_mismatch',
    );
  });

  it('args that are not JSON: permit_args_mismatch (a rejection, not a throw)', async () => {
    const v = verifier();
    const bad = [{ ...ARGS, at: new Date() }, { ...ARGS, n: Number.NaN }, null, 'x'];
    for (const args of bad) {
      expect(await codeOf(v.verify(await mint(), { tool: TOOL, args: args as Record<string, unknown> }))).toBe(
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

  it('replay: the second verify is permit_replayed, even through another spelling', async () => {
    const v = verifier();
    const permit = await mint();
    await v.verify(permit, { tool: TOOL, args: ARGS });
    expect(await codeOf(v.verify(permit, { tool: TOOL, args: ARGS }))).toBe('permit_replayed');
    expect(await codeOf(v.verify(permit, { tool: 'refundPayment', args: { amount: 129, orderId: 'ord_1842' } }))).toBe(
      'permit_replayed',
    );
  });

  it('parallel uses of one permit on one verifier: exactly one succeeds', async () => {
    const v = verifier();
    const permit = await mint();
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, () => v.verify(permit, { tool: TOOL, args: ARGS })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results)
      if (r.status === 'rejected') expect((r.reason as PermitVerificationError).code).toBe('permit_replayed');
  });

  it('a failed check does not burn the jti', async () => {
    const claim = vi.fn(createMemoryReplayStore().claim);
    const v = verifier({ replayStore: { claim } });
    const permit = await mint();
    expect(await codeOf(v.verify(permit, { tool: TOOL, args: { ...ARGS, amount: 130 } }))).toBe('permit_args_mismatch');
    expect(await codeOf(v.verify(permit, { tool: 'delete_account', args: ARGS }))).toBe('permit_tool_mismatch');
    expect(claim).not.toHaveBeenCalled();
    await expect(v.verify(permit, { tool: TOOL, args: ARGS })).resolves.toBeDefined();
    expect(claim).toHaveBeenCalledTimes(1);
  });

  it('claims a key scoped by issuer, held until exp + 360 s (past any verifier tolerance), whatever this verifier tolerates', async () => {
    const calls: [string, number][] = [];
    const store: ReplayStore = {
      claim: async (k, e) => {
        calls.push([k, e]);
        return true;
      },
    };
    const permit = await mint({ claims: { jti: 'jti-1', exp: now() + 60 } });
    const claims = await verifier({ replayStore: store }).verify(permit, { tool: TOOL, args: ARGS });
    expect(calls).toHaveLength(1);
    const [key, expiresAtMs] = calls[0]!;
    expect(expiresAtMs).toBe((claims.exp + 360) * 1000);
    expect(key).not.toContain('jti-1'); // hashed: bounded length, no raw ids
    // the same jti from another issuer is another key
    const shared = createMemoryReplayStore();
    const other = 'http://other-pdp.test';
    const vA = verifier({ replayStore: shared });
    const vB = verifier({ replayStore: shared, issuer: other });
    await expect(vA.verify(await mint({ claims: { jti: 'same' } }), { tool: TOOL, args: ARGS })).resolves.toBeDefined();
    await expect(
      vB.verify(await mint({ claims: { jti: 'same', iss: other } }), { tool: TOOL, args: ARGS }),
    ).resolves.toBeDefined();
    expect(await codeOf(vA.verify(await mint({ claims: { jti: 'same' } }), { tool: TOOL, args: ARGS }))).toBe(
      'permit_replayed',
    );
  });

  it('a store that rejects, throws, hangs or answers a non-boolean: permit_store_unavailable', async () => {
    const stores: ReplayStore[] = [
      { claim: () => Promise.reject(new Error('down')) },
      {
        claim: () => {
          throw new Error('sync throw');
        },
      },
      { claim: () => Promise.resolve('OK' as unknown as boolean) },
      { claim: () => Promise.resolve(undefined as unknown as boolean) },
    ];
    for (const replayStore of stores) {
      expect(await codeOf(verifier({ replayStore }).verify(await mint(), { tool: TOOL, args: ARGS }))).toBe(
        'permit_store_unavailable',
      );
    }
    const hung = verifier({ replayStore: { claim: () => new Promise<boolean>(() => {}) }, storeTimeoutMs: 200 });
    const started = Date.now();
    expect(await codeOf(hung.verify(await mint(), { tool: TOOL, args: ARGS }))).toBe('permit_store_unavailable');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('a full memory store refuses: permit_store_unavailable', async () => {
    const v = verifier({ replayStore: createMemoryReplayStore({ maxEntries: 2 }) });
    await v.verify(await mint(), { tool: TOOL, args: ARGS });
    await v.verify(await mint(), { tool: TOOL, args: ARGS });
    expect(await codeOf(v.verify(await mint(), { tool: TOOL, args: ARGS }))).toBe('permit_store_unavailable');
  });

  it('messages never contain the permit or the args', async () => {
    const permit = await mint();
    const secretArgs = { orderId: 'ord_SECRET_9', amount: 1 };
    try {
      await verifier().verify(permit, { tool: TOOL, args: secretArgs });
      expect.unreachable();
    } catch (e) {
      const msg = String((e as Error).message);
      expect(msg).not.toContain(permit.split('.')[1]);
      expect(msg).not.toContain('ord_SECRET_9');
      expect((e as PermitVerificationError).code).toBe('permit_args_mismatch');
    }
  });
});

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

describe('createPermitVerifier: keys from a JWKS URL', () => {
  let server: Server;
  let base: string;
  let fetches = 0;
  let mode: 'ok' | 'hang' | 'status' | 'garbage' | 'trickle' = 'ok';

  beforeAll(async () => {
    server = createServer((req, res) => {
      fetches++;
      if (req.url !== '/.well-known/jwks.json') return void res.writeHead(404).end();
      if (mode === 'hang') return; // never answers
      if (mode === 'status') return void res.writeHead(500).end();
      if (mode === 'garbage')
        return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"keys": nope');
      if (mode === 'trickle') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"keys":[');
        return; // the body never ends
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks));
    });
    base = await listen(server);
  });
  afterAll(() => close(server));

  it('verifies with keys fetched from the URL (string or URL), cached across verifies', async () => {
    mode = 'ok';
    fetches = 0;
    const v = verifier({ keys: `${base}/.well-known/jwks.json` });
    await expect(v.verify(await mint(), { tool: TOOL, args: ARGS })).resolves.toBeDefined();
    await expect(v.verify(await mint(), { tool: TOOL, args: ARGS })).resolves.toBeDefined();
    expect(fetches).toBe(1);
    const v2 = verifier({ keys: new URL(`${base}/.well-known/jwks.json`) });
    await expect(v2.verify(await mint(), { tool: TOOL, args: ARGS })).resolves.toBeDefined();
  });

  it('an unknown kid from a URL: permit_signature_invalid (cooldown: no refetch storm)', async () => {
    mode = 'ok';
    const v = verifier({ keys: `${base}/.well-known/jwks.json` });
    await v.verify(await mint(), { tool: TOOL, args: ARGS });
    fetches = 0;
    for (let i = 0; i < 3; i++) {
      expect(await codeOf(v.verify(await mint({ header: { kid: 'nope' } }), { tool: TOOL, args: ARGS }))).toBe(
        'permit_signature_invalid',
      );
    }
    expect(fetches).toBe(0);
  });

  it.each(['hang', 'trickle'] as const)('JWKS URL %s: permit_keys_unavailable within a bounded time', async (m) => {
    mode = m;
    const v = verifier({ keys: `${base}/.well-known/jwks.json` }); // default jwksTimeoutMs (1500)
    const started = Date.now();
    expect(await codeOf(v.verify(await mint(), { tool: TOOL, args: ARGS }))).toBe('permit_keys_unavailable');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it.each(['status', 'garbage'] as const)('JWKS URL answering %s: permit_keys_unavailable', async (m) => {
    mode = m;
    const v = verifier({ keys: `${base}/.well-known/jwks.json` });
    expect(await codeOf(v.verify(await mint(), { tool: TOOL, args: ARGS }))).toBe('permit_keys_unavailable');
  });

  it('a wrong path (404): permit_keys_unavailable', async () => {
    mode = 'ok';
    const v = verifier({ keys: `${base}/nope.json` });
    expect(await codeOf(v.verify(await mint(), { tool: TOOL, args: ARGS }))).toBe('permit_keys_unavailable');
  });

  it('JWKS URL down (closed port): permit_keys_unavailable within a bounded time', async () => {
    const s = createServer();
    const url = await listen(s);
    await close(s);
    const v = verifier({ keys: `${url}/.well-known/jwks.json` });
    const started = Date.now();
    expect(await codeOf(v.verify(await mint(), { tool: TOOL, args: ARGS }))).toBe('permit_keys_unavailable');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('a failed key fetch does not burn the jti', async () => {
    const claim = vi.fn(async () => true);
    mode = 'status';
    const v = verifier({ keys: `${base}/.well-known/jwks.json`, replayStore: { claim } });
    expect(await codeOf(v.verify(await mint(), { tool: TOOL, args: ARGS }))).toBe('permit_keys_unavailable');
    expect(claim).not.toHaveBeenCalled();
  });
});

describe('createPermitVerifier: options are validated synchronously (TypeError)', () => {
  const base = (): PermitVerifierOptions => ({ keys: jwks, issuer: ISSUER, audience: AUDIENCE });
  it.each([
    ['no options', undefined],
    ['algorithms none', { algorithms: ['none'] }],
    ['algorithms HS256', { algorithms: ['EdDSA', 'HS256'] }],
    ['algorithms empty', { algorithms: [] }],
    ['algorithms unknown', { algorithms: ['XY123'] }],
    ['no issuer', { issuer: '' }],
    ['no audience', { audience: undefined }],
    ['empty audience list', { audience: [] }],
    ['keys missing', { keys: undefined }],
    ['keys ftp URL', { keys: 'ftp://pdp.test/jwks.json' }],
    ['keys not a URL', { keys: 'not a url' }],
    ['keys a secret KeyObject', { keys: createSecretKey(Buffer.alloc(32)) }],
    ['keys a private KeyObject', { keys: generateKeyPairSync('ed25519').privateKey }],
    ['keys a single JWK', { keys: { kty: 'OKP', crv: 'Ed25519', x: 'AAAA' } }],
    ['keys a JWKS with an oct key', { keys: { keys: [{ kty: 'oct', k: 'AAAA' }] } }],
    ['keys a JWKS with a private key', { keys: { keys: [{ kty: 'OKP', crv: 'Ed25519', x: 'AAAA', d: 'AAAA' }] } }],
    ['clockToleranceSec negative', { clockToleranceSec: -1 }],
    ['clockToleranceSec huge', { clockToleranceSec: 3600 }],
    ['jwksTimeoutMs zero', { jwksTimeoutMs: 0 }],
    ['storeTimeoutMs NaN', { storeTimeoutMs: Number.NaN }],
    ['replayStore without claim', { replayStore: {} }],
  ])('%s', (_name, patch) => {
    const opts = patch === undefined ? undefined : { ...base(), ...patch };
    expect(() => createPermitVerifier(opts as unknown as PermitVerifierOptions)).toThrow(TypeError);
  });

  it('a private CryptoKey is refused', async () => {
    expect(() => createPermitVerifier({ ...base(), keys: privateKey })).toThrow(TypeError);
  });
});

describe('createPermitChecker (the client side: no replay claim)', () => {
  it('checks everything but the replay claim; aud only when given; sub and sid when given', async () => {
    const checker = createPermitChecker({ keys: jwks, issuer: ISSUER });
    const permit = await mint({ claims: { aud: 'whatever-service' } });
    const expected = { tool: TOOL, args: ARGS, subject: 'support-ai', session: 'sess_demo' };
    await expect(checker.check(permit, expected)).resolves.toBeDefined();
    await expect(checker.check(permit, expected)).resolves.toBeDefined(); // not consumed
    expect(await codeOf(checker.check(permit, { ...expected, audience: AUDIENCE }))).toBe('permit_claim_invalid');
    expect(await codeOf(checker.check(permit, { ...expected, subject: 'other-agent' }))).toBe('permit_claim_invalid');
    expect(await codeOf(checker.check(permit, { ...expected, session: 'sess_other' }))).toBe('permit_claim_invalid');
    expect(await codeOf(checker.check(permit, { ...expected, tool: 'other' }))).toBe('permit_tool_mismatch');
    expect(await codeOf(checker.check(permit, { ...expected, args: { ...ARGS, amount: 1 } }))).toBe(
      'permit_args_mismatch',
    );
  });

  it('refuses bad options with TypeError', () => {
    expect(() => createPermitChecker({ keys: jwks, issuer: '' })).toThrow(TypeError);
    expect(() => createPermitChecker({ keys: jwks, issuer: ISSUER, algorithms: ['none'] })).toThrow(TypeError);
  });
});
