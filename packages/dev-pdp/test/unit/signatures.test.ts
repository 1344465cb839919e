/**
 * Permits and evidence signatures are signed with node:crypto, synchronously (issue 41: WebCrypto cost
 * the PDP about twice the CPU a signature). They must stay the very compact JWS jose makes: the same
 * header, the same claims, the same Ed25519 signature, verifiable against the JWKS.
 */
import { referenceActionHash } from 'agent-pep/internal';
import { CompactSign, compactVerify, createLocalJWKSet, jwtVerify, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { createSigningKey, signPermit, signText } from '../../src/signing.js';

describe('signatures made with node:crypto', () => {
  it('a permit is the compact JWS jose SignJWT makes of the same claims, and verifies against the JWKS', async () => {
    const key = await createSigningKey();
    const args = { amount: 12, to: 'GB00' };
    const permit = await signPermit(key, {
      issuer: 'http://pdp',
      audience: 'payments',
      agentId: 'support-ai',
      session: 's-1',
      tool: 'send_money',
      args,
      decisionId: 'dec_1',
      ttlSec: 60,
      labels: ['read:web'],
      nowSec: 1_800_000_000,
    });
    const [header, payload] = permit.split('.');
    const claims = JSON.parse(Buffer.from(payload as string, 'base64url').toString('utf8'));
    const fromJose = await new SignJWT({
      sid: 's-1',
      tool: 'send_money',
      act_hash: referenceActionHash('send_money', args),
      decision_id: 'dec_1',
      labels: ['read:web'],
    })
      .setProtectedHeader({ alg: 'EdDSA', kid: key.kid, typ: 'permit+jwt' })
      .setIssuer('http://pdp')
      .setAudience('payments')
      .setSubject('support-ai')
      .setJti(claims.jti)
      .setIssuedAt(1_800_000_000)
      .setNotBefore(1_800_000_000)
      .setExpirationTime(1_800_000_060)
      .sign(key.privateKey);
    expect(permit).toBe(fromJose);
    expect(JSON.parse(Buffer.from(header as string, 'base64url').toString('utf8'))).toEqual({
      alg: 'EdDSA',
      kid: key.kid,
      typ: 'permit+jwt',
    });
    const verified = await jwtVerify(permit, createLocalJWKSet(key.jwks), {
      currentDate: new Date(1_800_000_001_000),
      audience: 'payments',
      issuer: 'http://pdp',
    });
    expect(verified.payload.sub).toBe('support-ai');
  });

  it('an evidence signature is the compact JWS jose CompactSign makes, and verifies against the JWKS', async () => {
    const key = await createSigningKey();
    const text = 'hash-of-a-record-é';
    const jws = await signText(key, text);
    const fromJose = await new CompactSign(new TextEncoder().encode(text))
      .setProtectedHeader({ alg: 'EdDSA', kid: key.kid })
      .sign(key.privateKey);
    expect(jws).toBe(fromJose);
    const { payload } = await compactVerify(jws, createLocalJWKSet(key.jwks));
    expect(new TextDecoder().decode(payload)).toBe(text);
  });
});
