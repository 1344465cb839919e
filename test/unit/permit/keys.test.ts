/**
 * Key sources made in the test (src/permit/keys.ts): a JWKS object, a public KeyObject, a public
 * CryptoKey; a kid selects the key, and a foreign or unknown key is `permit_signature_invalid`. (JWKS
 * URLs: test/integration/permit/jwks.test.ts; key source option errors: verifier-options.test.ts.)
 */
import { generateKeyPairSync } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { createPermitVerifier, type PermitVerifierOptions } from '../../../src/permit/verifier.js';
import {
  ARGS,
  AUDIENCE,
  createPermitKit,
  ISSUER,
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

describe('Key sources made in the test: JWKS objects, KeyObject, CryptoKey; a kid selects a key (src/permit/keys.ts)', () => {
  it('works with a public KeyObject, a CryptoKey, and ES256 in a JWKS', async () => {
    const pair = generateKeyPairSync('ed25519');
    const v1 = createPermitVerifier({ keys: pair.publicKey, issuer: ISSUER, audience: AUDIENCE });
    await expect(
      v1.verify(await mint({ key: pair.privateKey as never }), { tool: TOOL, args: ARGS }),
    ).resolves.toBeDefined();
    const v2 = createPermitVerifier({ keys: kit.publicKey, issuer: ISSUER, audience: AUDIENCE });
    await expect(v2.verify(await mint(), { tool: TOOL, args: ARGS })).resolves.toBeDefined();
    const es = await generateKeyPair('ES256', { extractable: true });
    const esJwks = { keys: [{ ...(await exportJWK(es.publicKey)), kid: 'e1' }] };
    const v3 = createPermitVerifier({ keys: esJwks, issuer: ISSUER, audience: AUDIENCE });
    const permit = await mint({ key: es.privateKey, header: { alg: 'ES256', kid: 'e1' } });
    await expect(v3.verify(permit, { tool: TOOL, args: ARGS })).resolves.toBeDefined();
  });

  it('a foreign key with the same kid: permit_signature_invalid', async () => {
    const foreign = await generateKeyPair('EdDSA');
    expect(
      await permitCodeOf(verifier().verify(await mint({ key: foreign.privateKey }), { tool: TOOL, args: ARGS })),
    ).toBe('permit_signature_invalid');
    const single = createPermitVerifier({ keys: kit.publicKey, issuer: ISSUER, audience: AUDIENCE });
    expect(await permitCodeOf(single.verify(await mint({ key: foreign.privateKey }), { tool: TOOL, args: ARGS }))).toBe(
      'permit_signature_invalid',
    );
  });

  it('an unknown kid: permit_signature_invalid', async () => {
    expect(
      await permitCodeOf(verifier().verify(await mint({ header: { kid: 'k2' } }), { tool: TOOL, args: ARGS })),
    ).toBe('permit_signature_invalid');
  });
});
