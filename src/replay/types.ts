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
 * - A store that cannot know whether a permit was used (it lost its claims since the permit was
 *   issued) throws a {@link ReplayUnknownError}: the verifier refuses with `permit_replay_unknown`.
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
   * @param issuedAtMs - the permit's `iat`, in Unix epoch milliseconds (the verifier always passes it):
   *   a store that may have forgotten claims (the Redis store after Redis lost its data) refuses a permit
   *   issued before then with a {@link ReplayUnknownError}
   * @returns true only for the first claim of an unexpired key, as a value or a promise
   * @throws ReplayUnknownError (or rejects with it) when the store cannot know whether a permit issued
   *   at `issuedAtMs` was used; the verifier refuses with `permit_replay_unknown`
   * @throws anything else (or rejects) when the store cannot answer; the verifier refuses the permit
   */
  claim(key: string, expiresAtMs: number, issuedAtMs?: number): boolean | Promise<boolean>;
}

/** The code of a {@link ReplayUnknownError}, and of the verifier's refusal. */
export const REPLAY_UNKNOWN_CODE = 'permit_replay_unknown';

/**
 * Thrown (as a rejection) by a replay store's `claim` for a permit issued before the store lost its
 * memory of claims (the Redis store: before its epoch, less the clock tolerance), since such a permit
 * may have been used already. The verifier refuses it with `permit_replay_unknown`; the agent asks the
 * PDP again and gets a fresh permit (docs/permits.md).
 */
export class ReplayUnknownError extends Error {
  override readonly name = 'ReplayUnknownError';
  /** Always `'permit_replay_unknown'`. */
  readonly code = REPLAY_UNKNOWN_CODE;
}
