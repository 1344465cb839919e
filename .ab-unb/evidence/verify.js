/**
 * Verification of a PDP's evidence log (docs/dev-pdp.md).
 * @packageDocumentation
 */
import { decodeJsonObject } from '../permit/decode.js';
import { createKeyResolver } from '../permit/keys.js';
import { verifySignature } from '../permit/signature.js';
import { evidenceRecordHash } from './record.js';
/** Evidence signatures are EdDSA only. */
const EVIDENCE_ALGORITHMS = ['EdDSA'];
function isWellTyped(value) {
    if (typeof value !== 'object' || value === null || Array.isArray(value))
        return false;
    const r = value;
    return (Number.isSafeInteger(r.seq) &&
        typeof r.hash === 'string' &&
        typeof r.sig === 'string' &&
        (r.prevHash === null || typeof r.prevHash === 'string'));
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
 * @throws TypeError when `records` is not an array, or `keys` is not a public key source (`err.option` is
 *   `'keys'`: a private or secret key, a JWKS with one, a URL that is not http(s), ...)
 * @remarks A log verifies only as a whole, from its first record: a truncated tail cannot be told from
 * a shorter log, so compare `count` with what you expect. A JWKS URL that cannot be fetched resolves
 * `keys_unavailable` rather than passing anything; the key sources are the permit verifier's
(`src/permit/keys.ts`: fetch deadline, cooldown, one fetch a second after a failure).
 * @example
 * ```ts
 * const result = await verifyEvidence(pdp.evidence(), { keys: pdp.jwksUrl });
 * if (!result.ok) console.error(`evidence record ${result.index}: ${result.reason}`);
 * ```
 */
export async function verifyEvidence(records, options) {
    if (!Array.isArray(records))
        throw new TypeError('records must be an array of evidence records');
    if (typeof options !== 'object' || options === null)
        throw new TypeError('options.keys is required');
    const resolve = createKeyResolver(options.keys, { scope: 'verifyEvidence', path: 'keys' });
    let previous;
    for (let index = 0; index < records.length; index++) {
        const record = records[index];
        if (!isWellTyped(record))
            return { ok: false, index, reason: 'malformed' };
        if (record.seq !== (previous ? previous.seq + 1 : 1))
            return { ok: false, index, reason: 'seq_mismatch' };
        if (record.prevHash !== (previous ? previous.hash : null))
            return { ok: false, index, reason: 'prev_hash_mismatch' };
        let hash;
        try {
            hash = evidenceRecordHash(record);
        }
        catch {
            return { ok: false, index, reason: 'malformed' };
        }
        if (hash !== record.hash)
            return { ok: false, index, reason: 'hash_mismatch' };
        try {
            const [h = '', p = '', sig = ''] = record.sig.split('.');
            const header = decodeJsonObject(h);
            // not a JWS, or not EdDSA: no key can make it valid (and no key source is asked)
            if (header === undefined || !EVIDENCE_ALGORITHMS.includes(header.alg)) {
                return { ok: false, index, reason: 'signature_invalid' };
            }
            const keys = await resolve(header, { protected: h, payload: p, signature: sig });
            const payload = await verifySignature(record.sig, keys, EVIDENCE_ALGORITHMS);
            if (decoder.decode(payload) !== record.hash)
                return { ok: false, index, reason: 'signature_invalid' };
        }
        catch (error) {
            // a key set that cannot be had is never a pass: keys_unavailable; anything else is the signature's
            const code = error?.code;
            return {
                ok: false,
                index,
                reason: code === 'permit_keys_unavailable' ? 'keys_unavailable' : 'signature_invalid',
            };
        }
        previous = record;
    }
    return { ok: true, count: records.length };
}
