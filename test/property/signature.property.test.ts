/**
 * The signature check's `node:crypto` path (EdDSA on Ed25519, ES256 on P-256; src/permit/signature.ts)
 * against jose's `compactVerify`: for any permit that passes the decoding checks, mutated or signed by
 * another key, with the key as a KeyObject, a CryptoKey or from a JWKS, both accept or both refuse, with
 * the same code. Run at once and on the thread pool (with other verifications in flight).
 */
import { generateKeyPairSync, type KeyObject, webcrypto } from 'node:crypto';
import fc from 'fast-check';
import { CompactSign, exportJWK, importJWK } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodePermit } from '../../src/permit/decode.js';
import type { VerifyKey } from '../../src/permit/keys.js';
import { verifySignature } from '../../src/permit/signature.js';
import { verificationOutcome } from '../support/permits.js';

const ALGORITHMS = ['EdDSA', 'Ed25519', 'ES256'];
const ALLOWED = new Set(ALGORITHMS);

interface Signer {
  alg: 'EdDSA' | 'ES256';
  privateKey: KeyObject;
  /** The public key in each form a verifier may hold it. */
  publics: VerifyKey[];
}

let signers: Signer[];
/** A CryptoKey of the right curve imported for another use (ECDH): jose refuses it, so must we. */
let ecdhKey: VerifyKey;

async function signer(alg: 'EdDSA' | 'ES256'): Promise<Signer> {
  const pair = alg === 'EdDSA' ? generateKeyPairSync('ed25519') : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = await exportJWK(pair.publicKey);
  const crypto = (await importJWK({ ...jwk, alg }, alg)) as VerifyKey;
  return { alg, privateKey: pair.privateKey, publics: [pair.publicKey, crypto] };
}

beforeAll(async () => {
  signers = [await signer('EdDSA'), await signer('ES256'), await signer('EdDSA')];
  const ec = signers[1] as Signer;
  const jwk = await exportJWK(ec.publics[0] as KeyObject);
  ecdhKey = (await webcrypto.subtle.importKey(
    'jwk',
    jwk,
    { name: 'ECDH', namedCurve: 'P-256' },
    true,
    [],
  )) as VerifyKey;
});

async function sign(s: Signer, header: Record<string, unknown>, payload: string): Promise<string> {
  return new CompactSign(new TextEncoder().encode(payload))
    .setProtectedHeader({ alg: s.alg, kid: 'k1', typ: 'permit+jwt', ...header })
    .sign(s.privateKey);
}

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** One change to a permit's text. */
const mutation = fc.oneof(
  fc.constant({ kind: 'none' as const }),
  fc.record({
    kind: fc.constant('flip' as const),
    segment: fc.integer({ min: 0, max: 2 }),
    at: fc.nat(),
    to: fc.nat(63),
  }),
  fc.record({ kind: fc.constant('truncate' as const), by: fc.integer({ min: 1, max: 6 }) }),
  fc.record({ kind: fc.constant('extend' as const), with: fc.stringMatching(/^[A-Za-z0-9_-]{1,4}$/) }),
  fc.record({ kind: fc.constant('header-alg' as const), alg: fc.constantFrom('EdDSA', 'ES256', 'Ed25519') }),
);

function mutate(permit: string, m: Record<string, unknown>): string {
  const parts = permit.split('.') as [string, string, string];
  switch (m.kind) {
    case 'flip': {
      const i = m.segment as number;
      const seg = parts[i] as string;
      if (seg.length === 0) return permit;
      const at = (m.at as number) % seg.length;
      parts[i] = `${seg.slice(0, at)}${B64URL[m.to as number]}${seg.slice(at + 1)}`;
      return parts.join('.');
    }
    case 'truncate':
      parts[2] = parts[2].slice(0, Math.max(0, parts[2].length - (m.by as number)));
      return parts.join('.');
    case 'extend':
      parts[2] = `${parts[2]}${m.with as string}`;
      return parts.join('.');
    case 'header-alg': {
      const header = JSON.parse(Buffer.from(parts[0], 'base64url').toString()) as Record<string, unknown>;
      parts[0] = Buffer.from(JSON.stringify({ ...header, alg: m.alg })).toString('base64url');
      return parts.join('.');
    }
    default:
      return permit;
  }
}

describe('node:crypto and jose refuse the same permits (src/permit/signature.ts)', () => {
  it('any signer, any key form, any mutation: the same outcome, at once and on the thread pool', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat(2),
        fc.nat(2),
        fc.nat(1),
        fc.string({ maxLength: 40 }),
        mutation,
        fc.boolean(),
        async (by, against, form, text, m, busy) => {
          const s = signers[by] as Signer;
          const permit = mutate(await sign(s, {}, JSON.stringify({ text })), m as Record<string, unknown>);
          let alg: string;
          try {
            alg = decodePermit(permit, ALLOWED).header.alg;
          } catch {
            return; // refused before any key is touched: the signature check never runs
          }
          const key = (signers[against] as Signer).publics[form] as VerifyKey;
          // With another verification in flight, the node:crypto path takes the thread pool.
          const other = busy ? verifySignature(permit, [key], ALGORITHMS, alg).catch(() => undefined) : undefined;
          const fast = await verificationOutcome(verifySignature(permit, [key], ALGORITHMS, alg));
          await other;
          const jose = await verificationOutcome(verifySignature(permit, [key], ALGORITHMS));
          expect(fast).toBe(jose);
          if (m.kind === 'none' && by === against) expect(fast).toBe('ok');
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a CryptoKey imported for another use (ECDH on P-256) verifies nothing, as with jose', async () => {
    const s = signers[1] as Signer;
    const permit = await sign(s, {}, '{"a":1}');
    const alg = decodePermit(permit, ALLOWED).header.alg;
    expect(await verificationOutcome(verifySignature(permit, [ecdhKey], ALGORITHMS, alg))).toBe(
      await verificationOutcome(verifySignature(permit, [ecdhKey], ALGORITHMS)),
    );
    expect(await verificationOutcome(verifySignature(permit, [ecdhKey], ALGORITHMS, alg))).not.toBe('ok');
  });

  it('a good signature for one of several candidate keys (a JWKS with a repeated kid) is found', async () => {
    const [a, , b] = signers as [Signer, Signer, Signer];
    const permit = await sign(b, {}, '{"a":1}');
    const alg = decodePermit(permit, ALLOWED).header.alg;
    const keys = [a.publics[0], b.publics[1]] as VerifyKey[];
    expect(await verificationOutcome(verifySignature(permit, keys, ALGORITHMS, alg))).toBe('ok');
    expect(Buffer.from(await verifySignature(permit, keys, ALGORITHMS, alg)).toString()).toBe('{"a":1}');
  });

  it('an alg outside the allow-list never reaches node:crypto: jose refuses it', async () => {
    const s = signers[0] as Signer;
    const permit = await sign(s, {}, '{"a":1}');
    expect(await verificationOutcome(verifySignature(permit, [s.publics[0] as VerifyKey], ['ES256'], 'EdDSA'))).toBe(
      'permit_alg_not_allowed',
    );
  });
});
