/**
 * The single-use store a permit verifier claims `jti`s in (docs/permits.md).
 * @packageDocumentation
 */

/**
 * A store that remembers claimed permit ids until they expire.
 *
 * @remarks
 * - `claim` must be atomic across every verifier sharing the store: for one key, exactly one
 *   concurrent caller gets `true`.
 * - It may answer synchronously (a `boolean`, as the memory store does: no timer, no extra tick) or
 *   with a `Promise<boolean>` (as the Redis store does); the verifier awaits only a promise, and bounds
 *   the wait by its `storeTimeoutMs`.
 * - A store that cannot answer must throw or reject: the verifier refuses with
 *   `permit_store_unavailable` either way, as for any answer that is not a boolean. It must never
 *   answer `true` when unsure.
 * @example
 * ```ts
 * const seen = new Set<string>();
 * const store: ReplayStore = { claim: (key) => !seen.has(key) && Boolean(seen.add(key)) }; // never expires: a sketch
 * ```
 */
export interface ReplayStore {
  /**
   * Claims `key` until `expiresAtMs` (Unix epoch milliseconds).
   * @param key - an opaque key (the verifier passes a hash of the issuer and the `jti`)
   * @param expiresAtMs - when the store may forget the key (the permit's `exp` + 360 s, from the verifier)
   * @returns true only for the first claim of an unexpired key, as a value or a promise
   * @throws anything (or rejects) when the store cannot answer; the verifier refuses the permit
   */
  claim(key: string, expiresAtMs: number): boolean | Promise<boolean>;
}
