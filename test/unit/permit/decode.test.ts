/**
 * Checks 1 to 4 of the verifier (src/permit/decode.ts): a permit that is missing, not a compact JWS,
 * has an alg outside the allow-list (never `none` or HMAC, refused before any key lookup) or no kid is
 * refused with its code; keys made in the test.
 */
import { createSecretKey, generateKeyPairSync } from 'node:crypto';
import { exportSPKI, generateKeyPair } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { actionHash } from '../../../src/permit/hash.js';
import { createPermitVerifier, type PermitVerifierOptions } from '../../../src/permit/verifier.js';
import {
  ARGS,
  AUDIENCE,
  b64,
  createPermitKit,
  ISSUER,
  type MintOptions,
  nowSec,
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

describe('Decoding a permit before any key is touched: shape, alg allow-list, kid, payload (src/permit/decode.ts)', () => {
  it('missing permit: permit_missing', async () => {
    const v = verifier();
    for (const p of [undefined, null, '', '   ', 42, {}]) {
      expect(await permitCodeOf(v.verify(p as unknown as string, { tool: TOOL, args: ARGS }))).toBe('permit_missing');
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
      expect(await permitCodeOf(v.verify(permit, { tool: TOOL, args: ARGS })), permit.slice(0, 40)).toBe(
        'permit_malformed',
      );
    }
  });

  it('missing kid: permit_malformed', async () => {
    expect(await permitCodeOf(verifier().verify(await mint({ omitHeader: ['kid'] }), { tool: TOOL, args: ARGS }))).toBe(
      'permit_malformed',
    );
  });

  it('a crit header: permit_malformed', async () => {
    const [h0, p, s] = (await mint()).split('.') as [string, string, string];
    const header = { ...JSON.parse(Buffer.from(h0, 'base64url').toString()), crit: ['x'], x: 1 };
    expect(await permitCodeOf(verifier().verify(`${b64(header)}.${p}.${s}`, { tool: TOOL, args: ARGS }))).toBe(
      'permit_malformed',
    );
  });

  it.each([
    ['crit', { alg: 'none', kid: 'k1', typ: 'permit+jwt', crit: ['x'], x: 1 }],
    ['b64', { alg: 'HS256', kid: 'k1', typ: 'permit+jwt', b64: false }],
    ['zip', { alg: 'RS256', kid: 'k1', typ: 'permit+jwt', zip: 'DEF' }],
  ])(
    'a header with %s and an alg outside the allow-list: permit_malformed (check 2 comes before check 3)',
    async (_n, header) => {
      const [, p, s] = (await mint()).split('.') as [string, string, string];
      expect(await permitCodeOf(verifier().verify(`${b64(header)}.${p}.${s}`, { tool: TOOL, args: ARGS }))).toBe(
        'permit_malformed',
      );
    },
  );

  it("alg 'none' (with and without kid): permit_alg_not_allowed", async () => {
    const payload = b64({
      iss: ISSUER,
      aud: AUDIENCE,
      sub: 'a',
      sid: 's',
      jti: 'j',
      iat: nowSec(),
      exp: nowSec() + 60,
      tool: TOOL,
      act_hash: actionHash(TOOL, ARGS),
    });
    const v = verifier();
    for (const header of [{ alg: 'none' }, { alg: 'none', kid: 'k1', typ: 'permit+jwt' }, { alg: 'None', kid: 'k1' }]) {
      expect(await permitCodeOf(v.verify(`${b64(header)}.${payload}.`, { tool: TOOL, args: ARGS }))).toBe(
        'permit_alg_not_allowed',
      );
    }
  });

  it('HS256 signed with the public key bytes: permit_alg_not_allowed', async () => {
    const pem = await exportSPKI(kit.publicKey);
    const v = verifier();
    for (const secret of [pem, JSON.stringify(kit.publicJwk), kit.publicJwk.x as string]) {
      const permit = await mint({ header: { alg: 'HS256' }, key: new TextEncoder().encode(secret) });
      expect(await permitCodeOf(v.verify(permit, { tool: TOOL, args: ARGS }))).toBe('permit_alg_not_allowed');
    }
    // also against a verifier holding one KeyObject, and with HS512
    const v2 = createPermitVerifier({
      keys: generateKeyPairSync('ed25519').publicKey,
      issuer: ISSUER,
      audience: AUDIENCE,
    });
    const permit = await mint({ header: { alg: 'HS512' }, key: createSecretKey(Buffer.from(pem)) as never });
    expect(await permitCodeOf(v2.verify(permit, { tool: TOOL, args: ARGS }))).toBe('permit_alg_not_allowed');
  });

  it('an algorithm outside the allow-list (RS256, ES384, ES256 when only EdDSA): permit_alg_not_allowed', async () => {
    const rs = await generateKeyPair('RS256');
    const es384 = await generateKeyPair('ES384');
    const es256 = await generateKeyPair('ES256');
    expect(
      await permitCodeOf(
        verifier().verify(await mint({ header: { alg: 'RS256' }, key: rs.privateKey }), { tool: TOOL, args: ARGS }),
      ),
    ).toBe('permit_alg_not_allowed');
    expect(
      await permitCodeOf(
        verifier().verify(await mint({ header: { alg: 'ES384' }, key: es384.privateKey }), { tool: TOOL, args: ARGS }),
      ),
    ).toBe('permit_alg_not_allowed');
    const onlyEd = verifier({ algorithms: ['EdDSA'] });
    expect(
      await permitCodeOf(
        onlyEd.verify(await mint({ header: { alg: 'ES256' }, key: es256.privateKey }), { tool: TOOL, args: ARGS }),
      ),
    ).toBe('permit_alg_not_allowed');
  });
});
