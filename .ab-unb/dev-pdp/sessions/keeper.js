/**
 * One decision at a time per session, in the order this PDP received them (docs/dev-pdp.md): each
 * decision reads the state as it was before its step, then its labels and step are committed before
 * the next decision of the session reads. Every wait on the store is bounded by
 * `sessionStoreTimeoutMs` from the request's arrival; past it the request is answered 503
 * `session_store_unavailable`, never decided on a missing state.
 * @packageDocumentation
 */
import { HttpError } from '../http.js';
import { EMPTY_SESSION } from './state.js';
/** The 503 of a store that could not answer in time. @internal */
export function storeUnavailable() {
    return new HttpError(503, 'session_store_unavailable', 'the session store did not answer in time');
}
/** Rejects with the 503 when `promise` has not settled by `deadline` (epoch ms), or rejects. */
function by(promise, deadline) {
    let timer;
    const late = new Promise((_, reject) => {
        timer = setTimeout(() => reject(storeUnavailable()), Math.max(0, deadline - Date.now()));
    });
    return Promise.race([promise.catch(() => Promise.reject(storeUnavailable())), late]).finally(() => clearTimeout(timer));
}
/** Serializes the decisions of each session and bounds their waits on the store. @internal */
export class SessionKeeper {
    #store;
    #timeoutMs;
    /** Per session key: settles when the last queued decision of that session is done. */
    #tails = new Map();
    constructor(store, timeoutMs) {
        this.#store = store;
        this.#timeoutMs = timeoutMs;
    }
    /**
     * Runs one decision of session `key` (none: an empty state, nothing written).
     * @throws HttpError 503 `session_store_unavailable` when the store (or the decisions queued before
     *   this one) did not answer within the timeout; whatever `plan` or `finish` throws
     */
    async run(key, simulated, plan) {
        if (key === undefined)
            return (await plan(EMPTY_SESSION)).finish();
        const deadline = Date.now() + this.#timeoutMs;
        const previous = this.#tails.get(key) ?? Promise.resolve();
        let done;
        const mine = new Promise((resolve) => {
            done = resolve;
        });
        // the next decision waits for this one and for every one before it, even if this one gives up early
        const tail = previous.then(() => mine);
        this.#tails.set(key, tail);
        try {
            await by(previous, deadline);
            return simulated ? await this.#simulated(key, deadline, plan) : await this.#decided(key, deadline, plan);
        }
        finally {
            done();
            if (this.#tails.get(key) === tail)
                this.#tails.delete(key);
        }
    }
    async #simulated(key, deadline, plan) {
        const view = await by(this.#store.read(key), deadline);
        return (await plan(view)).finish();
    }
    async #decided(key, deadline, plan) {
        const acquiring = this.#store.acquire(key);
        let lease;
        try {
            lease = await by(acquiring, deadline);
        }
        catch (error) {
            // a lease that comes after the deadline is given up at once, so it holds up nobody
            acquiring.then((late) => late.release()).catch(() => { });
            throw error;
        }
        let planned;
        try {
            planned = await plan(lease.view);
        }
        catch (error) {
            lease.release();
            throw error;
        }
        if (planned.update !== undefined)
            await by(lease.commit(planned.update), deadline);
        else
            lease.release();
        return planned.finish();
    }
    /** Closes the store. */
    close() {
        return this.#store.close();
    }
}
