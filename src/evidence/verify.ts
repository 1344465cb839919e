/**
 * Verification of a PDP's evidence log (CONTRACT.md section 6).
 * @packageDocumentation
 */
import type { KeyObject } from 'node:crypto';
import {
  type CryptoKey,
  compactVerify,
  createLocalJWKSet,
  createRemoteJWKSet,
  type FlattenedJWSInput,
  type JSONWebKeySet,
  type JWSHeaderParameters,
} from 'jose';
import { type EvidenceRecord, evidenceRecordHash } from './record.js';

export type { EvidenceRecord } from './record.js';

/**
 * Why a record failed:
 * - `malformed`: not an object with the record's members of the right types
 * - `seq_mismatch`: `seq` is not the previous record's plus one (the first is 1): a record is missing or out of order
 * - `prev_hash_mismatch`: `prevHash` is not the previous record's `hash` (`null` for the first)
 * - `hash_mismatch`: the record was edited (its `hash` does not match its members)
 * - `signature_invalid`: `sig` is not a valid EdDSA JWS over `hash` by one of the given keys
 * - `keys_unavailable`: the key source could not be read (e.g. the JWKS URL is down)
 */
export type EvidenceFailureReason =
  | 'malformed'
  | 'seq_mismatch'
  | 'prev_hash_mismatch'
  | 'hash_mismatch'
  | 'signature_invalid'
  | 'keys_unavailable';

/** The result of {@link verifyEvidence}. */
export type EvidenceVerification =
  | { ok: true; count: number }
  | { ok: false; index: number; reason: EvidenceFailureReason };

/** Options of {@link verifyEvidence}. */
export interface VerifyEvidenceOptions {
  /** The PDP's public keys: a JWKS object, the URL of a JWKS, or one public `KeyObject`/`CryptoKey`. */
  keys: string | URL | JSONWebKeySet | KeyObject | CryptoKey;
}

type KeyInput = CryptoKey | KeyObject | ((header: JWSHeaderParameters, token: FlattenedJWSInput) => Promise<CryptoKey>);

function keyInput(keys: VerifyEvidenceOptions['keys']): KeyInput {
  if (typeof keys === 'string' || keys instanceof URL) {
    let url: URL;
    try {
      url = new URL(keys);
    } catch (cause) {
      throw new TypeError('keys: not a valid URL', { cause });
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new TypeError('keys: the JWKS URL must be http(s)');
    return createRemoteJWKSet(url);
  }
  if (typeof keys === 'object' && keys !== null && 'keys' in keys && Array.isArray(keys.keys)) {
    return createLocalJWKSet(keys);
  }
  if (typeof keys === 'object' && keys !== null && 'type' in keys) return keys as CryptoKey | KeyObject;
  throw new TypeError('keys: expected a JWKS, a JWKS URL, or a KeyObject/CryptoKey');
}

function isWellTyped(value: unknown): value is EvidenceRecord {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const r = value as Record<string, unknown>;
  return (
    Number.isSafeInteger(r.seq) &&
    typeof r.hash === 'string' &&
    typeof r.sig === 'string' &&
    (r.prevHash === null || typeof r.prevHash === 'string')
  );
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Checks a PDP's evidence log: the chain (`seq` from 1 without gaps, each `prevHash` the previous
 * `hash`), each record's `hash` (RFC 8785 canonical JSON, SHA-256) and each `sig` (a compact EdDSA
 * JWS over the `hash`, by one of `keys`).
 *
 * @param records - the whole log, in order, as `pdp.evidence()` returns it or as parsed from its JSON Lines
 * @param options - `{ keys }`: a JWKS, a JWKS URL, or a public key
 * @returns `{ ok: true, count }`, or `{ ok: false, index, reason }` for the first record (0-based index)
 *   that is malformed, edited, missing or out of order, or signed by another key
 * @throws TypeError when `records` is not an array or `keys` is not a key source
 * @remarks A log verifies only as a whole, from its first record: a truncated tail cannot be told from
 * a shorter log, so compare `count` with what you expect. A JWKS URL that cannot be fetched resolves
 * `keys_unavailable` rather than passing anything.
 * @example
 * ```ts
 * const result = await verifyEvidence(pdp.evidence(), { keys: pdp.jwksUrl });
 * if (!result.ok) console.error(`evidence record ${result.index}: ${result.reason}`);
 * ```
 */
export async function verifyEvidence(
  records: readonly EvidenceRecord[],
  options: VerifyEvidenceOptions,
): Promise<EvidenceVerification> {
  if (!Array.isArray(records)) throw new TypeError('records must be an array of evidence records');
  if (typeof options !== 'object' || options === null) throw new TypeError('options.keys is required');
  const key = keyInput(options.keys);
  let previous: EvidenceRecord | undefined;
  for (let index = 0; index < records.length; index++) {
    const record: unknown = records[index];
    if (!isWellTyped(record)) return { ok: false, index, reason: 'malformed' };
    if (record.seq !== (previous ? previous.seq + 1 : 1)) return { ok: false, index, reason: 'seq_mismatch' };
    if (record.prevHash !== (previous ? previous.hash : null))
      return { ok: false, index, reason: 'prev_hash_mismatch' };
    let hash: string;
    try {
      hash = evidenceRecordHash(record as unknown as Record<string, unknown>);
    } catch {
      return { ok: false, index, reason: 'malformed' };
    }
    if (hash !== record.hash) return { ok: false, index, reason: 'hash_mismatch' };
    try {
      const { payload } = await compactVerify(record.sig, key as CryptoKey, { algorithms: ['EdDSA'] });
      if (decoder.decode(payload) !== record.hash) return { ok: false, index, reason: 'signature_invalid' };
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      if (
        code === 'ERR_JWKS_TIMEOUT' ||
        code === 'ERR_JOSE_GENERIC' ||
        (error instanceof TypeError && code === undefined)
      ) {
        // fetch failures surface as TypeError (undici) or a JOSE generic error; never a pass
        if (typeof options.keys === 'string' || options.keys instanceof URL) {
          return { ok: false, index, reason: 'keys_unavailable' };
        }
      }
      return { ok: false, index, reason: 'signature_invalid' };
    }
    previous = record;
  }
  return { ok: true, count: records.length };
}
