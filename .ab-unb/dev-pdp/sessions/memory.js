/**
 * The default session store: this process's memory (docs/dev-pdp.md). One PDP process only; use the
 * Redis store for replicas.
 * @packageDocumentation
 */
import { EMPTY_SESSION } from './state.js';
/** Commits between two sweeps of expired sessions. */
const SWEEP_EVERY = 1024;
/**
 * Creates the memory store. Its callers (the session keeper) hand it one decision per session at a
 * time, so a lease needs no lock here.
 * @internal
 */
export function createMemorySessionStore(limits, now = Date.now) {
    const sessions = new Map();
    let commits = 0;
    function live(key) {
        const entry = sessions.get(key);
        if (entry !== undefined && entry.expiresAt <= now()) {
            sessions.delete(key);
            return undefined;
        }
        return entry;
    }
    function sweep() {
        const t = now();
        for (const [key, entry] of sessions)
            if (entry.expiresAt <= t)
                sessions.delete(key);
    }
    function viewOf(entry) {
        return entry === undefined ? EMPTY_SESSION : { labels: entry.labels, history: entry.history };
    }
    function commit(key, update) {
        let entry = live(key);
        if (entry === undefined) {
            entry = { labels: new Set(), history: [], expiresAt: 0 };
            sessions.set(key, entry);
        }
        for (const label of update.labels)
            entry.labels.add(label);
        entry.history.push(update.step);
        if (entry.history.length > limits.maxHistory)
            entry.history.splice(0, entry.history.length - limits.maxHistory);
        entry.expiresAt = now() + limits.sessionTtlSec * 1000;
        if (++commits % SWEEP_EVERY === 0)
            sweep();
    }
    return {
        async acquire(key) {
            // no copy: nothing changes the entry until this lease commits (one decision per session at a time)
            return {
                view: viewOf(live(key)),
                async commit(update) {
                    commit(key, update);
                },
                release() { },
            };
        },
        async read(key) {
            return viewOf(live(key));
        },
        async close() {
            sessions.clear();
        },
    };
}
