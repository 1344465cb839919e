/**
 * Keys and permits made in the test, as a PDP would mint them (CONTRACT.md section 4).
 */
import { type KeyObject, randomUUID } from 'node:crypto';
import {
  type CryptoKey,
  exportJWK,
  generateKeyPair,
  type JSONWebKeySet,
  type JWK,
  type JWTPayload,
  SignJWT,
} from 'jose';
import { expect } from 'vitest';
import { PermitVerificationError } from '../../src/errors.js';
import { normalizeToolName } from '../../src/internal/tool-name.js';
import { actionHash } from '../../src/permit/hash.js';
import { createPermitVerifier, type PermitVerifier, type PermitVerifierOptions } from '../../src/permit/verifier.js';

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

/** The issuer, audience and action the permit unit tests use. */
export const ISSUER = 'http://pdp.test';
export const AUDIENCE = 'payments-service';
export const TOOL = 'refund_payment';
export const ARGS: Readonly<Record<string, unknown>> = Object.freeze({ orderId: 'ord_1842', amount: 129 });

/** Overrides of a minted permit: claims added/replaced/removed, header members, the signing key. */
export interface MintOptions {
  claims?: Record<string, unknown>;
  omit?: string[];
  header?: Record<string, unknown>;
  omitHeader?: string[];
  key?: CryptoKey | KeyObject | Uint8Array;
}

/** One Ed25519 key (kid `k1`) in a JWKS, and permits minted with it as a PDP would, with overrides. */
export interface PermitKit {
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  publicJwk: JWK;
  jwks: JSONWebKeySet;
  /** A permit for TOOL and ARGS from ISSUER to AUDIENCE, agent `support-ai`, session `sess_demo`, 60 s. */
  mint(o?: MintOptions): Promise<string>;
  /** A verifier of the kit's JWKS for ISSUER and AUDIENCE, with `extra` options. */
  verifier(extra?: Partial<PermitVerifierOptions>): PermitVerifier;
}

/** Seconds since the Unix epoch, now. */
export const nowSec = (): number => Math.floor(Date.now() / 1000);

/** base64url of a string, or of the JSON of a value. */
export const b64 = (v: unknown): string =>
  Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

/** Makes a {@link PermitKit} with a fresh key. */
export async function createPermitKit(): Promise<PermitKit> {
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { extractable: true });
  const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'EdDSA', use: 'sig' };
  const jwks: JSONWebKeySet = { keys: [publicJwk] };
  return {
    privateKey,
    publicKey,
    publicJwk,
    jwks,
    mint(o = {}) {
      const t = nowSec();
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
    },
    verifier(extra = {}) {
      return createPermitVerifier({ keys: jwks, issuer: ISSUER, audience: AUDIENCE, ...extra });
    },
  };
}

/** The `code` of a `PermitVerificationError` rejection (fails the test when it resolves or rejects otherwise). */
export async function permitCodeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(PermitVerificationError);
    return (e as PermitVerificationError).code;
  }
  throw new Error('expected a rejection');
}

/** What a verification came to: `'ok'`, or the `PermitVerificationError` code it was refused with. */
export async function verificationOutcome(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    expect(e).toBeInstanceOf(PermitVerificationError);
    return (e as PermitVerificationError).code;
  }
}
