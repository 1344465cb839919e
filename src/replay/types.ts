/**
 * The single-use store a permit verifier claims `jti`s in (CONTRACT.md section 4).
 * @packageDocumentation
 */

/**
 * A store that remembers claimed permit ids until they expire.
 *
 * @remarks `claim` must be atomic across every verifier sharing the store: for one key, exactly one
 * concurrent caller gets `true`. A store that cannot answer must reject (the verifier then refuses
 * with `permit_store_unavailable`); it must never resolve `true` when unsure.
 */
export interface ReplayStore {
  /**
   * Claims `key` until `expiresAtMs` (Unix epoch milliseconds).
   * @returns true only for the first claim of an unexpired key
   */
  claim(key: string, expiresAtMs: number): Promise<boolean>;
}
