/**
 * createPermitVerifier validates its options synchronously: every bad option is a TypeError whose
 * `err.option` names its path, and unknown keys are refused (CONTRACT.md section 2), so a misspelt
 * `replayStore` can never fall back silently to a per-process store. One rule, one case: each case
 * trips exactly one check, so deleting that check fails its case.
 */
import { createSecretKey, generateKeyPairSync } from 'node:crypto';
import { generateKeyPair } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { createPermitChecker, createPermitVerifier, type PermitVerifierOptions } from '../../../src/permit/verifier.js';
import { createMemoryReplayStore } from '../../../src/replay/memory.js';
import { optionOf } from '../../support/options.js';
import { AUDIENCE, createPermitKit, ISSUER, type PermitKit } from '../../support/permits.js';

let kit: PermitKit;
beforeAll(async () => {
  kit = await createPermitKit();
});
const base = (): PermitVerifierOptions => ({ keys: kit.jwks, issuer: ISSUER, audience: AUDIENCE });
const optionFor = (patch: Record<string, unknown>): unknown =>
  optionOf(() => createPermitVerifier({ ...base(), ...patch } as PermitVerifierOptions));

describe('createPermitVerifier: each option rule names its path in err.option', () => {
  it('valid options build a verifier (the base of every case below is valid)', () => {
    expect(typeof createPermitVerifier({ ...base(), replayStore: createMemoryReplayStore() }).verify).toBe('function');
  });

  it('options that are not an object: (options)', () => {
    expect(optionOf(() => createPermitVerifier(undefined as never))).toBe('(options)');
  });

  it('an unknown key (replayStor, a typo of replayStore): replayStor, never a silent memory store', () => {
    expect(optionFor({ replayStor: createMemoryReplayStore() })).toBe('replayStor');
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['not a string', 42],
  ])('issuer %s: issuer', (_label, issuer) => {
    expect(optionFor({ issuer })).toBe('issuer');
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['an empty list', []],
    ['a list with an empty name', ['payments', '']],
  ])('audience %s: audience', (_label, audience) => {
    expect(optionFor({ audience })).toBe('audience');
  });

  it.each([['none'], ['None'], ['HS256'], ['hs512']])("'none' and HMAC (%s) are never allowed: algorithms", (alg) => {
    expect(optionFor({ algorithms: ['EdDSA', alg] })).toBe('algorithms');
  });

  it.each([
    ['an empty list', []],
    ['not a list', 'EdDSA'],
  ])('algorithms %s: algorithms', (_label, algorithms) => {
    expect(optionFor({ algorithms })).toBe('algorithms');
  });

  it('an algorithm this verifier does not support names its index: algorithms.1', () => {
    expect(optionFor({ algorithms: ['EdDSA', 'XY123'] })).toBe('algorithms.1');
  });

  it('an algorithm that is not a string names its index: algorithms.0', () => {
    expect(optionFor({ algorithms: [1] })).toBe('algorithms.0');
  });

  it.each([-1, 301, Number.NaN, '5'])('clockToleranceSec %j (seconds, 0 to 300): clockToleranceSec', (v) => {
    expect(optionFor({ clockToleranceSec: v })).toBe('clockToleranceSec');
  });

  it.each(['jwksTimeoutMs', 'jwksCooldownMs', 'storeTimeoutMs'])('%s 0, 1.5, NaN or past 600000: itself', (key) => {
    for (const v of [0, 1.5, Number.NaN, 600_001, '100']) expect(optionFor({ [key]: v }), String(v)).toBe(key);
  });

  it.each([
    ['without claim', {}],
    ['a string', 'redis://127.0.0.1'],
    ['claim not a function', { claim: true }],
  ])('replayStore %s: replayStore', (_label, replayStore) => {
    expect(optionFor({ replayStore })).toBe('replayStore');
  });
});

describe('createPermitVerifier: each key source rule names keys', () => {
  it.each([
    ['missing', undefined],
    ['a number', 42],
    ['a single JWK, not a JWKS', { kty: 'OKP', crv: 'Ed25519', x: 'AAAA' }],
  ])('keys %s: keys', (_label, keys) => {
    expect(optionFor({ keys })).toBe('keys');
  });

  it.each([
    ['not a URL', 'not a url'],
    ['an ftp URL', 'ftp://pdp.test/jwks.json'],
    ['a URL with credentials', 'https://user:pw@pdp.test/jwks.json'],
  ])('a keys URL that is %s: keys', (_label, keys) => {
    expect(optionFor({ keys })).toBe('keys');
  });

  it('a secret KeyObject: keys', () => {
    expect(optionFor({ keys: createSecretKey(Buffer.alloc(32)) })).toBe('keys');
  });

  it('a private KeyObject: keys', () => {
    expect(optionFor({ keys: generateKeyPairSync('ed25519').privateKey })).toBe('keys');
  });

  it('a secret (HMAC) CryptoKey, even one with verify usage: keys', async () => {
    const hmac = await crypto.subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, true, ['sign', 'verify']);
    expect(optionFor({ keys: hmac })).toBe('keys');
  });

  it('a private CryptoKey: keys', () => {
    expect(optionFor({ keys: kit.privateKey })).toBe('keys');
  });

  it('a public CryptoKey without verify usage: keys', async () => {
    const { publicKey } = await generateKeyPair('ES256');
    const noVerify = await crypto.subtle.importKey(
      'jwk',
      await crypto.subtle.exportKey('jwk', publicKey as never),
      { name: 'ECDSA', namedCurve: 'P-256' },
      true,
      [],
    );
    expect(optionFor({ keys: noVerify })).toBe('keys');
  });

  it('a JWKS member that is not an object: keys', () => {
    expect(optionFor({ keys: { keys: [null] } })).toBe('keys');
  });

  it('a JWKS with a symmetric (oct) key, even one without k: keys', () => {
    expect(optionFor({ keys: { keys: [{ kty: 'oct', kid: 'x' }] } })).toBe('keys');
  });

  it('a JWKS with a private member (d): keys', () => {
    expect(optionFor({ keys: { keys: [{ ...kit.publicJwk, d: 'AAAA' }] } })).toBe('keys');
  });
});

describe('createPermitChecker (the client side): the same rules under permits.', () => {
  const checkerOptionFor = (patch: Record<string, unknown>): unknown =>
    optionOf(() => createPermitChecker({ keys: kit.jwks, issuer: ISSUER, ...patch } as never));

  it.each([
    ['no issuer', { issuer: '' }, 'permits.issuer'],
    ['none allowed', { algorithms: ['none'] }, 'permits.algorithms'],
    ['an unsupported algorithm', { algorithms: ['XY123'] }, 'permits.algorithms.0'],
    ['an unknown key (audience belongs to the verifier)', { audience: AUDIENCE }, 'permits.audience'],
  ])('%s: %s', (_label, patch, option) => {
    expect(checkerOptionFor(patch)).toBe(option);
  });

  it('a private key: permits.keys', () => {
    expect(checkerOptionFor({ keys: kit.privateKey })).toBe('permits.keys');
  });
});
