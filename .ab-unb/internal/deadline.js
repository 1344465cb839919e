/**
 * THE deadline helper: one clock (`performance.now()`, monotonic, in milliseconds: a wall clock that
 * steps would move every deadline) and one settle-once race of a piece of work against a deadline and
 * a caller's signal. Every wait of the package that has a deadline goes through here. Not public.
 * @internal
 */
import { isThenable } from './thenable.js';
/** The one clock of every deadline: milliseconds on the monotonic clock. */
export const now = () => performance.now();
/** The deadline `ms` milliseconds from now, on {@link now}'s clock. */
export const deadlineIn = (ms) => now() + ms;
/** Milliseconds left until `deadlineAt` (a {@link now} value), never below 0. */
export const remainingMs = (deadlineAt) => Math.max(0, deadlineAt - now());
/** What {@link race} resolves with when the deadline came first. */
export const LATE = Symbol('late');
/** What {@link race} resolves with when the caller's signal aborted first. */
export const ABORTED = Symbol('aborted');
/**
 * Races `work` against `deadlineAt` (a {@link now} value) and, when given, the caller's `signal`.
 * Settles once; clears its timer and listener whichever comes first; a rejection of `work` after the
 * race is handled (never unhandled). A value that is not a promise is answered at once.
 * @returns the value of `work`, {@link LATE} or {@link ABORTED}; rejects when `work` rejects first
 */
export function race(work, deadlineAt, signal) {
    if (!isThenable(work))
        return Promise.resolve(work);
    const settledWork = Promise.resolve(work);
    const left = deadlineAt - now();
    if (left <= 0) {
        settledWork.catch(() => undefined);
        return Promise.resolve(LATE);
    }
    return new Promise((resolve, reject) => {
        let done = false;
        const settle = (f) => {
            if (done)
                return;
            done = true;
            clearTimeout(timer);
            try {
                signal?.removeEventListener('abort', onAbort);
            }
            catch {
                // a caller's signal that throws here changes nothing
            }
            f();
        };
        const timer = setTimeout(() => settle(() => resolve(LATE)), left);
        const onAbort = () => settle(() => resolve(ABORTED));
        try {
            signal?.addEventListener('abort', onAbort, { once: true });
        }
        catch {
            // an unusable signal was refused earlier; nothing to listen to
        }
        settledWork.then((v) => settle(() => resolve(v)), (e) => settle(() => reject(e)));
    });
}
/**
 * `work`, or a rejection with `late()` when it has not settled by `deadlineAt` (a {@link now} value).
 * @throws whatever `late()` makes, or what `work` rejects with
 */
export async function beforeDeadline(work, deadlineAt, late) {
    const r = await race(work, deadlineAt);
    if (r === LATE || r === ABORTED)
        throw late();
    return r;
}
