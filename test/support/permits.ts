/**
 * Keys and permits made in the test, as a PDP would mint them (CONTRACT.md section 4).
 */
import { randomUUID } from 'node:crypto';
import { type CryptoKey, exportJWK, generateKeyPair, type JSONWebKeySet, type JWTPayload, SignJWT } from 'jose';
import { actionHash } from '../../src/permit/hash.js';
import { normalizeToolName } from '../../src/permit/normalize.js';

export interface TestIssuer {
  issuer: string;
  kid: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  jwks: JSONWebKeySet;
  /** A permit for `tool` and `args`; `claims` override or add claims. */
  mint(tool: string, args: Record<string, unknown>, claims?: Record<string, unknown>): Promise<string>;
}

/** A fresh Ed25519 issuer with one key in its JWKS. */
export async function createTestIssuer(issuer = 'http://pdp.test', audience = 'payments-service'): Promise<TestIssuer> {
  const kid = `k-${randomUUID().slice(0, 8)}`;
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { extractable: true });
  const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid, alg: 'EdDSA', use: 'sig' }] };
  return {
    issuer,
    kid,
    privateKey,
    publicKey,
    jwks,
    mint(tool, args, claims = {}) {
      const t = Math.floor(Date.now() / 1000);
      const payload = {
        iss: issuer,
        aud: audience,
        sub: 'support-ai',
        sid: 'sess_demo',
        jti: randomUUID(),
        iat: t,
        exp: t + 60,
        tool: normalizeToolName(tool),
        act_hash: actionHash(tool, args),
        decision_id: `dec_${randomUUID().slice(0, 8)}`,
        ...claims,
      };
      return new SignJWT(payload as JWTPayload)
        .setProtectedHeader({ alg: 'EdDSA', kid, typ: 'permit+jwt' })
        .sign(privateKey);
    },
  };
}
