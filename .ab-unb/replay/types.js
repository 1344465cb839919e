/**
 * The single-use store a permit verifier claims `jti`s in (docs/permits.md).
 * @packageDocumentation
 */
/** The code of a {@link ReplayUnknownError}, and of the verifier's refusal. */
export const REPLAY_UNKNOWN_CODE = 'permit_replay_unknown';
/**
 * Thrown (as a rejection) by a replay store's `claim` for a permit issued before the store lost its
 * memory of claims (the Redis store: before its epoch, less the clock tolerance), since such a permit
 * may have been used already. The verifier refuses it with `permit_replay_unknown`; the agent asks the
 * PDP again and gets a fresh permit (docs/permits.md).
 */
export class ReplayUnknownError extends Error {
    name = 'ReplayUnknownError';
    /** Always `'permit_replay_unknown'`. */
    code = REPLAY_UNKNOWN_CODE;
}
