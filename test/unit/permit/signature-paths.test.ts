/**
 * The signature check's node:crypto path against jose (src/permit/signature.ts), for keys and
 * algorithms beyond the property test (test/property/signature.property.test.ts): the `Ed25519` alg, a
 * private key, P-384 keys, non-extractable CryptoKeys, CryptoKeys without `verify` usage, a key from a
 * JWKS, a DER signature. Both paths give the same outcome and the same refusal code, at once and on the
 * thread pool.
 */
import { generateKeyPairSync, sign as nodeSign, webcrypto } from 'node:crypto';
import { CompactSign, createLocalJWKSet, exportJWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { decodePermit } from '../../../src/permit/decode.js';
import type { VerifyKey } from '../../../src/permit/keys.js';
import { verifySignature } from '../../../src/permit/signature.js';
import { verificationOutcome } from '../../support/permits.js';

const ALGS = ['EdDSA', 'Ed25519', 'ES256', 'ES384'];

/** Both paths, the node:crypto one at once and on the thread pool. */
async function paths(permit: string, keys: VerifyKey[]): Promise<string[]> {
  const alg = decodePermit(permit, new Set(ALGS)).header.alg;
  const now = await verificationOutcome(verifySignature(permit, keys, ALGS, alg));
  const busy = verifySignature(permit, keys, ALGS, alg).catch(() => undefined);
  const pool = await verificationOutcome(verifySignature(permit, keys, ALGS, alg));
  await busy;
  const jose = await verificationOutcome(verifySignature(permit, keys, ALGS));
  return [now, pool, jose];
}

describe('node:crypto and jose agree on every key form and algorithm', async () => {
  const ed = generateKeyPairSync('ed25519');
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const ec384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
  const sign = (alg: string, key: unknown) =>
    new CompactSign(new TextEncoder().encode('{"a":1}')).setProtectedHeader({ alg, kid: 'k' }).sign(key as never);
  const edJwk = await exportJWK(ed.publicKey);
  const ecJwk = await exportJWK(ec.publicKey);
  const subtle = webcrypto.subtle;
  const keys = {
    edKO: ed.publicKey,
    ecKO: ec.publicKey,
    ec384KO: ec384.publicKey,
    ecPrivate: ec.privateKey,
    edPrivate: ed.privateKey,
    edCK: (await subtle.importKey('jwk', edJwk, { name: 'Ed25519' }, false, ['verify'])) as VerifyKey,
    edCKnoVerify: (await subtle.importKey('jwk', edJwk, { name: 'Ed25519' }, true, [])) as VerifyKey,
    ecCK: (await subtle.importKey('jwk', ecJwk, { name: 'ECDSA', namedCurve: 'P-256' }, false, [
      'verify',
    ])) as VerifyKey,
    ecCKnoVerify: (await subtle.importKey('jwk', ecJwk, { name: 'ECDSA', namedCurve: 'P-256' }, true, [])) as VerifyKey,
    ec384CK: (await subtle.importKey(
      'jwk',
      await exportJWK(ec384.publicKey),
      { name: 'ECDSA', namedCurve: 'P-384' },
      false,
      ['verify'],
    )) as VerifyKey,
    edJwks: (await createLocalJWKSet({ keys: [{ ...edJwk, kid: 'k', alg: 'EdDSA' }] })(
      { alg: 'EdDSA', kid: 'k' },
      {} as never,
    )) as VerifyKey,
  };
  const permits = {
    EdDSA: await sign('EdDSA', ed.privateKey),
    Ed25519: await sign('Ed25519', ed.privateKey),
    ES256: await sign('ES256', ec.privateKey),
  };
  // An ES256 permit whose signature is DER (as crypto.sign writes by default), not R || S.
  const [h, p] = permits.ES256.split('.') as [string, string];
  const der = nodeSign('sha256', Buffer.from(`${h}.${p}`), ec.privateKey).toString('base64url');
  const esDer = `${h}.${p}.${der}`;

  it.each<[string, string, keyof typeof keys, string]>([
    ['EdDSA', permits.EdDSA, 'edKO', 'ok'],
    ['Ed25519 alg', permits.Ed25519, 'edKO', 'ok'],
    ['Ed25519 alg', permits.Ed25519, 'edCK', 'ok'],
    ['EdDSA', permits.EdDSA, 'edCK', 'ok'],
    ['EdDSA', permits.EdDSA, 'edJwks', 'ok'],
    ['EdDSA', permits.EdDSA, 'edCKnoVerify', 'permit_signature_invalid'],
    ['EdDSA', permits.EdDSA, 'edPrivate', 'permit_signature_invalid'],
    ['EdDSA', permits.EdDSA, 'ecKO', 'permit_signature_invalid'],
    ['ES256', permits.ES256, 'ecKO', 'ok'],
    ['ES256', permits.ES256, 'ecCK', 'ok'],
    ['ES256', permits.ES256, 'ecCKnoVerify', 'permit_signature_invalid'],
    ['ES256', permits.ES256, 'ecPrivate', 'permit_signature_invalid'],
    ['ES256', permits.ES256, 'ec384KO', 'permit_signature_invalid'],
    ['ES256', permits.ES256, 'ec384CK', 'permit_signature_invalid'],
    ['ES256', permits.ES256, 'edKO', 'permit_signature_invalid'],
    ['ES256 DER', esDer, 'ecKO', 'permit_signature_invalid'],
    ['ES256 DER', esDer, 'ecCK', 'permit_signature_invalid'],
  ])('%s with %#: the same outcome at once, on the pool and with jose', async (_alg, permit, key, expected) => {
    expect(await paths(permit, [keys[key]])).toEqual([expected, expected, expected]);
  });
});
