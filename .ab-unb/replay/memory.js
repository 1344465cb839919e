/**
 * The in-process replay store: the default of `createPermitVerifier`, right for one process.
 * @packageDocumentation
 */
import { optionError, refuseUnknownKeys } from '../internal/option-kit.js';
/** Defaults of the memory store. @internal */
export const MEMORY_STORE_DEFAULTS = Object.freeze({
    /** 100000 ids / (300 s + 360 s) = about 150 permits a second sustained at the longest lifetime. */
    maxEntries: 100_000,
    /** Entries examined (oldest first) for expiry on every claim. */
    sweepStep: 16,
    /** A full sweep runs on a claim at most this often, in milliseconds (and always when full). */
    fullSweepIntervalMs: 10_000,
});
/** Thrown by `claim` of a full memory store; the verifier answers `permit_store_unavailable`. */
export class ReplayStoreFullError extends Error {
    name = 'ReplayStoreFullError';
}
const SCOPE = 'createMemoryReplayStore';
const KNOWN_OPTIONS = new Set(['maxEntries']);
/**
 * Creates a bounded, in-memory {@link ReplayStore}.
 *
 * @param options - `maxEntries?`: most unexpired entries held (a positive integer; default 100000)
 * @returns a store whose `claim(key, expiresAtMs)` answers, synchronously, true for the first claim of
 *   a key until `expiresAtMs` (Unix epoch milliseconds), false afterwards
 * @throws TypeError synchronously, for bad options, with `err.option` naming it (`'maxEntries'`, or the
 *   unknown key: a misspelt option is never ignored)
 * @throws ReplayStoreFullError (from `claim`, synchronously) when `maxEntries` unexpired entries are held
 * @throws TypeError (from `claim`, synchronously) for a key that is not a string or an `expiresAtMs`
 *   that is not a finite number
 * @remarks
 * - Only for a single process: replicas of a service each holding their own memory store would each
 *   accept a permit once. Share `createRedisReplayStore` between replicas.
 * - Remembers claims for its process's life only: a restarted service forgets them, and a permit used
 *   before the restart can be used once more until it expires (docs/permits.md). `issuedAtMs` is
 *   ignored.
 * - Bounded: expired entries are swept a few at a time on every claim, fully every 10 s, and fully
 *   when the store is full. When it is full of unexpired entries it refuses (throws, so the verifier
 *   says `permit_store_unavailable`) rather than evict a live entry, which would let that permit be
 *   replayed. The verifier holds each id until `exp` + 360 s (past any verifier's clock tolerance),
 *   so size `maxEntries` for your permit rate times (the permit lifetime + 360 s); the default,
 *   100000, sustains about 150 permits a second at the longest lifetime (300 s).
 * - A claim whose `expiresAtMs` is already past resolves false and stores nothing: an expired key
 *   protects nothing, and refusing it means no expired permit ever counts as a first use. (The
 *   verifier never asks for such a key: it checks `exp` before it claims.) The Redis store does the same.
 * - No timers: the store never keeps the process alive.
 * @example
 * ```ts
 * const verifier = createPermitVerifier({ keys, issuer, audience: 'payments', replayStore: createMemoryReplayStore({ maxEntries: 10_000 }) });
 * ```
 */
export function createMemoryReplayStore(options = {}) {
    if (typeof options !== 'object' || options === null)
        optionError(SCOPE, '(options)', 'expected an object');
    refuseUnknownKeys(SCOPE, options, KNOWN_OPTIONS);
    const maxEntries = options.maxEntries ?? MEMORY_STORE_DEFAULTS.maxEntries;
    if (typeof maxEntries !== 'number' || !Number.isSafeInteger(maxEntries) || maxEntries <= 0) {
        optionError(SCOPE, 'maxEntries', 'expected a positive integer');
    }
    /** key -> expiresAtMs, in insertion order (roughly expiry order, as lifetimes are similar). */
    const entries = new Map();
    let lastFullSweep = Date.now();
    function sweepSome(now) {
        let n = 0;
        for (const [key, exp] of entries) {
            if (n++ >= MEMORY_STORE_DEFAULTS.sweepStep)
                break;
            if (exp <= now)
                entries.delete(key);
        }
    }
    function sweepAll(now) {
        for (const [key, exp] of entries)
            if (exp <= now)
                entries.delete(key);
        lastFullSweep = now;
    }
    function claim(key, expiresAtMs) {
        if (typeof key !== 'string')
            throw new TypeError('replay key must be a string');
        if (typeof expiresAtMs !== 'number' || !Number.isFinite(expiresAtMs)) {
            throw new TypeError('expiresAtMs must be a finite number');
        }
        const now = Date.now();
        const held = entries.get(key);
        if (held !== undefined) {
            if (held > now)
                return false;
            entries.delete(key);
        }
        if (expiresAtMs <= now)
            return false;
        sweepSome(now);
        if (now - lastFullSweep >= MEMORY_STORE_DEFAULTS.fullSweepIntervalMs)
            sweepAll(now);
        if (entries.size >= maxEntries) {
            sweepAll(now);
            if (entries.size >= maxEntries)
                throw new ReplayStoreFullError('replay store is full of unexpired entries');
        }
        entries.set(key, expiresAtMs);
        return true;
    }
    return { claim };
}
