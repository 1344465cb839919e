/**
 * verifyEvidence takes its keys from the permit key sources (src/permit/keys.ts): public keys only,
 * refused at the call with a TypeError naming `keys`; the chain, hashes and signatures are checked.
 */
import { createSecretKey, generateKeyPairSync, KeyObject } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { verifyEvidence } from '../../../src/evidence/verify.js';
import { createEvidenceSigner, type EvidenceSigner } from '../../support/evidence.js';

let signer: EvidenceSigner;
beforeAll(async () => {
  signer = await createEvidenceSigner();
});

/** The `err.option` of the TypeError `verifyEvidence` rejects with. */
async function optionOfRejection(p: Promise<unknown>): Promise<unknown> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(TypeError);
  return (e as { option?: unknown }).option;
}

describe('verifyEvidence: key sources are the permit verifier’s', () => {
  it('a log signed by the key verifies with its JWKS, its public CryptoKey and its public KeyObject', async () => {
    const log = await signer.log(3);
    await expect(verifyEvidence(log, { keys: signer.jwks })).resolves.toEqual({ ok: true, count: 3 });
    await expect(verifyEvidence(log, { keys: signer.publicKey })).resolves.toEqual({ ok: true, count: 3 });
    const keyObject = KeyObject.from(signer.publicKey as Parameters<typeof KeyObject.from>[0]);
    await expect(verifyEvidence(log, { keys: keyObject })).resolves.toEqual({ ok: true, count: 3 });
  });

  it('a private CryptoKey is refused (TypeError, option keys), not used to verify', async () => {
    expect(await optionOfRejection(verifyEvidence(await signer.log(1), { keys: signer.privateKey }))).toBe('keys');
  });

  it('a private KeyObject or a secret key is refused (TypeError, option keys)', async () => {
    const log = await signer.log(1);
    expect(await optionOfRejection(verifyEvidence(log, { keys: generateKeyPairSync('ed25519').privateKey }))).toBe(
      'keys',
    );
    expect(await optionOfRejection(verifyEvidence(log, { keys: createSecretKey(Buffer.alloc(32)) }))).toBe('keys');
  });

  it('a JWKS holding a private key is refused (TypeError, option keys)', async () => {
    const jwk = { ...signer.jwks.keys[0], d: 'AAAA' };
    expect(await optionOfRejection(verifyEvidence(await signer.log(1), { keys: { keys: [jwk] } }))).toBe('keys');
  });

  it('a keys URL that is not http(s) is refused (TypeError, option keys)', async () => {
    expect(await optionOfRejection(verifyEvidence(await signer.log(1), { keys: 'file:///etc/jwks.json' }))).toBe(
      'keys',
    );
  });

  it('another key: signature_invalid at the first record', async () => {
    const other = await createEvidenceSigner();
    await expect(verifyEvidence(await signer.log(2), { keys: other.jwks })).resolves.toEqual({
      ok: false,
      index: 0,
      reason: 'signature_invalid',
    });
  });
});
