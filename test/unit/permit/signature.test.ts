/**
 * The signature check (src/permit/signature.ts): a tampered payload or signature, an empty signature,
 * or an alg the key cannot verify is `permit_signature_invalid`.
 */
import { generateKeyPair } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { createPermitVerifier, type PermitVerifierOptions } from '../../../src/permit/verifier.js';
import {
  ARGS,
  AUDIENCE,
  b64,
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

describe('The signature verifies with the issuer key, or the permit is refused (src/permit/signature.ts)', () => {
  it('a tampered payload or signature, or an empty signature: permit_signature_invalid', async () => {
    const v = verifier();
    const [h, p, s] = (await mint()).split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    const tampered = `${h}.${b64({ ...claims, exp: claims.exp + 1 })}.${s}`;
    expect(await permitCodeOf(v.verify(tampered, { tool: TOOL, args: ARGS }))).toBe('permit_signature_invalid');
    const flipped = `${h}.${p}.${s.startsWith('A') ? 'B' : 'A'}${s.slice(1)}`;
    expect(await permitCodeOf(v.verify(flipped, { tool: TOOL, args: ARGS }))).toBe('permit_signature_invalid');
    expect(await permitCodeOf(v.verify(`${h}.${p}.`, { tool: TOOL, args: ARGS }))).toBe('permit_signature_invalid');
  });

  it('an ES256 header on an Ed25519 key with that kid: permit_signature_invalid', async () => {
    const es = await generateKeyPair('ES256');
    const permit = await mint({ header: { alg: 'ES256' }, key: es.privateKey });
    const single = createPermitVerifier({ keys: kit.publicKey, issuer: ISSUER, audience: AUDIENCE });
    expect(await permitCodeOf(single.verify(permit, { tool: TOOL, args: ARGS }))).toBe('permit_signature_invalid');
    expect(await permitCodeOf(verifier().verify(permit, { tool: TOOL, args: ARGS }))).toBe('permit_signature_invalid');
  });
});
