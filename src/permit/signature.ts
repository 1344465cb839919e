/**
 * The signature check of a compact JWS against candidate keys (RFC 7515).
 *
 * The two algorithms permits are minted with by default, EdDSA with an Ed25519 key (RFC 8037) and
 * ES256 with a P-256 key (RFC 7518 section 3.4), are verified with `node:crypto` (OpenSSL): at once on
 * the calling thread when no other verification is in flight, on libuv's thread pool otherwise. Any
 * other algorithm or key, and every key on a runtime without `node:crypto` (workerd, Vercel Edge), goes
 * to jose's `compactVerify` (WebCrypto, always the thread pool on Node). Both ways
 * refuse the same permits; `test/property/signature.property.test.ts` holds them to that.
 * @internal
 */
import type { KeyObject, webcrypto } from 'node:crypto';
import { nodeCrypto } from '../internal/runtime.js';
import { loadJose } from './jose.js';
import type { VerifyKey } from './keys.js';
import { joseCode, refuse } from './refuse.js';

/** What `node:crypto.verify` needs for one (alg, key) pair. */
interface NodeForm {
  readonly key: KeyObject;
  /** The digest named to `crypto.verify`: none for Ed25519 (the algorithm hashes), SHA-256 for ES256. */
  readonly digest: 'sha256' | null;
  /** ES256 signatures are R || S, 32 bytes each (RFC 7518 section 3.4), not DER. */
  readonly dsaEncoding: 'ieee-p1363' | undefined;
}

/** A CryptoKey as a KeyObject (made once per key); null when it cannot be one. */
const asKeyObjects = new WeakMap<object, KeyObject | null>();

/** `node:crypto`'s `KeyObject` and `verify`, where the runtime has them (not on workerd or Vercel Edge). */
const KeyObjectClass = nodeCrypto?.KeyObject;
const cryptoVerify = nodeCrypto?.verify;

function keyObjectOf(key: VerifyKey): KeyObject | undefined {
  if (KeyObjectClass === undefined) return undefined;
  if (key instanceof KeyObjectClass) return key;
  let k = asKeyObjects.get(key);
  if (k === undefined) {
    try {
      k = KeyObjectClass.from(key as webcrypto.CryptoKey);
    } catch {
      k = null;
    }
    asKeyObjects.set(key, k);
  }
  return k ?? undefined;
}

/** The WebCrypto algorithm a CryptoKey must have been imported for, to verify `alg`. */
function cryptoKeyFits(key: webcrypto.CryptoKey, alg: string): boolean {
  if (!key.usages.includes('verify')) return false;
  const a = key.algorithm as { name?: unknown; namedCurve?: unknown };
  return alg === 'ES256' ? a.name === 'ECDSA' && a.namedCurve === 'P-256' : a.name === 'Ed25519';
}

/**
 * The `node:crypto` form of `alg` with `key`: EdDSA or Ed25519 with an Ed25519 public key, ES256 with
 * a P-256 public key (a CryptoKey only when imported for that algorithm, with `verify` usage); else
 * undefined, and jose decides.
 */
function nodeFormOf(alg: string, key: VerifyKey): NodeForm | undefined {
  const ed = alg === 'EdDSA' || alg === 'Ed25519';
  if ((!ed && alg !== 'ES256') || KeyObjectClass === undefined || cryptoVerify === undefined) return undefined;
  if (!(key instanceof KeyObjectClass) && !cryptoKeyFits(key as webcrypto.CryptoKey, alg)) return undefined;
  const k = keyObjectOf(key);
  if (k === undefined || k.type !== 'public') return undefined;
  if (ed) return k.asymmetricKeyType === 'ed25519' ? { key: k, digest: null, dsaEncoding: undefined } : undefined;
  return k.asymmetricKeyType === 'ec' && k.asymmetricKeyDetails?.namedCurve === 'prime256v1'
    ? { key: k, digest: 'sha256', dsaEncoding: 'ieee-p1363' }
    : undefined;
}

/** Verifications in flight in this process: a verification that starts while none is runs at once. */
let inFlight = 0;

/** One `node:crypto` verification: false for a signature that does not verify or cannot be read. */
function nodeVerify(form: NodeForm, data: Buffer, signature: Buffer, now: boolean): boolean | Promise<boolean> {
  // Both algorithms sign with 64 bytes; anything else is refused before OpenSSL reads it.
  if (signature.length !== 64) return false;
  const key = form.dsaEncoding ? { key: form.key, dsaEncoding: form.dsaEncoding } : form.key;
  const verify = cryptoVerify as NonNullable<typeof cryptoVerify>;
  if (now) {
    try {
      return verify(form.digest, data, key, signature);
    } catch {
      return false;
    }
  }
  return new Promise<boolean>((resolve) => {
    try {
      verify(form.digest, data, key, signature, (err, ok) => resolve(err === null && ok === true));
    } catch {
      resolve(false);
    }
  });
}

/**
 * Verifies `jws` with the first of `keys` that accepts it.
 * @param alg - the protected header's `alg` when the caller already decoded and checked the header
 *   (shape, base64url segments, `alg` in `algorithms`, no `crit` or `b64`: `decodePermit`); only then
 *   may `node:crypto` verify, else jose does every check
 * @returns the verified payload bytes
 * @throws PermitVerificationError `permit_alg_not_allowed` (alg outside `algorithms`), `permit_malformed`
 *   (not a JWS jose accepts) or `permit_signature_invalid` (no key verifies it)
 */
export async function verifySignature(
  jws: string,
  keys: VerifyKey[],
  algorithms: string[],
  alg?: string,
): Promise<Uint8Array> {
  let first: unknown;
  const now = inFlight === 0;
  inFlight++;
  try {
    for (const key of keys) {
      const form = alg !== undefined && algorithms.includes(alg) ? nodeFormOf(alg, key) : undefined;
      if (form) {
        const dot = jws.lastIndexOf('.');
        const ok = await nodeVerify(
          form,
          Buffer.from(jws.slice(0, dot), 'latin1'),
          Buffer.from(jws.slice(dot + 1), 'base64url'),
          now,
        );
        if (ok) return Buffer.from(jws.slice(jws.indexOf('.') + 1, dot), 'base64url');
        first ??= new Error('signature verification failed');
        continue;
      }
      try {
        return (await (await loadJose()).compactVerify(jws, key, { algorithms })).payload;
      } catch (e) {
        first ??= e;
      }
    }
  } finally {
    inFlight--;
  }
  const code = joseCode(first);
  if (code === 'ERR_JOSE_ALG_NOT_ALLOWED')
    throw refuse('permit_alg_not_allowed', 'the alg is not in the allow-list', first);
  if (code === 'ERR_JWS_INVALID') throw refuse('permit_malformed', 'not a valid JWS', first);
  // ERR_JWS_SIGNATURE_VERIFICATION_FAILED, or a key that cannot verify this alg (TypeError): not ours
  throw refuse('permit_signature_invalid', 'the signature does not verify with the issuer keys', first);
}
