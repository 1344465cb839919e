/**
 * The in-flight decisions of one client (and its `withSession` clients): added when an exchange
 * starts, deleted when it ends, all stopped by `close()`.
 *
 * An array with swap-removal, not a `Set`: every decision adds and deletes one entry, and a `Set`
 * churned that way made each young-generation GC about four times as costly on Node 20 at 64 decisions
 * in flight (about 15 microseconds of client CPU per decision, a fifth of it; BENCHMARKS.md). Add and
 * delete are O(1); the order of entries is not kept.
 */
export class Inflight {
    #entries = [];
    /** How many decisions are in flight. */
    get size() {
        return this.#entries.length;
    }
    /** Registers a decision; keep the entry to {@link Inflight.delete} it. */
    add(stop) {
        const entry = { stop, index: this.#entries.length };
        this.#entries.push(entry);
        return entry;
    }
    /** Removes an entry (the last one takes its place). A second delete of one entry does nothing. */
    delete(entry) {
        const i = entry.index;
        const entries = this.#entries;
        if (i < 0 || entries[i] !== entry)
            return;
        entry.index = -1;
        const last = entries.pop();
        if (last !== entry) {
            entries[i] = last;
            last.index = i;
        }
    }
    /**
     * Stops every decision in flight now with `cause`, each once; an entry added meanwhile is not
     * stopped. A `stop` that throws cannot keep the others from running.
     */
    stopAll(cause) {
        for (const entry of this.#entries.slice()) {
            if (entry.index < 0)
                continue;
            try {
                entry.stop(cause);
            }
            catch {
                // one decision cannot keep the others from being stopped
            }
        }
    }
}
