/**
 * The signature check of a compact JWS against candidate keys (jose `compactVerify`, RFC 7515).
 * @internal
 */
import { compactVerify } from 'jose/jws/compact/verify';
import type { VerifyKey } from './keys.js';
import { joseCode, refuse } from './refuse.js';

/**
 * Verifies `jws` with the first of `keys` that accepts it.
 * @returns the verified payload bytes
 * @throws PermitVerificationError `permit_alg_not_allowed` (alg outside `algorithms`), `permit_malformed`
 *   (not a JWS jose accepts) or `permit_signature_invalid` (no key verifies it)
 */
export async function verifySignature(jws: string, keys: VerifyKey[], algorithms: string[]): Promise<Uint8Array> {
  let first: unknown;
  for (const key of keys) {
    try {
      return (await compactVerify(jws, key, { algorithms })).payload;
    } catch (e) {
      first ??= e;
    }
  }
  const code = joseCode(first);
  if (code === 'ERR_JOSE_ALG_NOT_ALLOWED')
    throw refuse('permit_alg_not_allowed', 'the alg is not in the allow-list', first);
  if (code === 'ERR_JWS_INVALID') throw refuse('permit_malformed', 'not a valid JWS', first);
  // ERR_JWS_SIGNATURE_VERIFICATION_FAILED, or a key that cannot verify this alg (TypeError): not ours
  throw refuse('permit_signature_invalid', 'the signature does not verify with the issuer keys', first);
}
