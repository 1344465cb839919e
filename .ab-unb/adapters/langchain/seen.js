/**
 * What the LangChain adapter remembers between model calls, without LangChain: which messages were
 * already checked and what to send in their place, per session, in a bounded map, and the session of
 * a run. Forgetting an entry only means the message is checked again (never that it passes unchecked).
 * @internal
 */
import { createHash } from 'node:crypto';
import { threadSession as hostThreadSession } from '../kit.js';
/** Most messages remembered by one middleware (oldest forgotten first). */
export const MAX_SEEN = 10_000;
/** A bounded insertion-ordered map of checked messages, keyed by session and message id. */
export class SeenMessages {
    #entries = new Map();
    #max;
    constructor(max = MAX_SEEN) {
        this.#max = max;
    }
    static key(session, id) {
        return typeof id === 'string' && id !== '' ? `${session}\u0000${id}` : undefined;
    }
    /** The digest a {@link Seen} entry keeps of the text it was decided for. */
    static digest(text) {
        return createHash('sha256').update(text).digest('base64url');
    }
    get(key) {
        return key === undefined ? undefined : this.#entries.get(key);
    }
    /**
     * The entry for `key` when it was decided for this very `text` (or `text` is its replacement already),
     * else undefined: the message is new, or was edited under the same id, and must be checked.
     */
    match(key, text) {
        const entry = this.get(key);
        if (entry?.text === undefined)
            return undefined;
        if (entry.text === SeenMessages.digest(text))
            return entry;
        return entry.kind === 'replace' && entry.content === text ? entry : undefined;
    }
    set(key, seen) {
        if (key === undefined)
            return;
        this.#entries.delete(key);
        this.#entries.set(key, seen);
        while (this.#entries.size > this.#max) {
            const oldest = this.#entries.keys().next();
            if (oldest.done)
                break;
            this.#entries.delete(oldest.value);
        }
    }
    get size() {
        return this.#entries.size;
    }
}
/**
 * The session of a run: LangGraph's `configurable.thread_id` (a non-empty string, or a finite number
 * as its decimal text), else `undefined` (the client's own session applies).
 */
export function threadSession(configurable) {
    try {
        if (typeof configurable !== 'object' || configurable === null)
            return undefined;
        return hostThreadSession(configurable.thread_id);
    }
    catch {
        return undefined;
    }
}
