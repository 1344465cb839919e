/**
 * The evidence record (docs/dev-pdp.md) and its hash, shared by the dev PDP that writes the log
 * and `verifyEvidence` that checks it.
 * @packageDocumentation
 */
import { canonicalJson, sha256b64url } from '../permit/hash.js';
/**
 * Computes a record's `hash`: base64url (no padding) SHA-256 over the UTF-8 of the RFC 8785 canonical
 * JSON of every member of the record except `hash` and `sig` (so a member added later changes it too).
 *
 * @param record - a record, with or without `hash` and `sig`
 * @returns 43 base64url characters
 * @throws TypeError when the record holds something that is not JSON
 * @example
 * ```ts
 * const ok = evidenceRecordHash(record) === record.hash;
 * ```
 */
export function evidenceRecordHash(record) {
    const body = {};
    for (const key of Object.keys(record)) {
        if (key === 'hash' || key === 'sig')
            continue;
        Object.defineProperty(body, key, { value: record[key], enumerable: true, writable: true, configurable: true });
    }
    return sha256b64url(canonicalJson(body));
}
