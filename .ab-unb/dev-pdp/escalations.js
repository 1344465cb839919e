/**
 * Escalations held for review: an ESCALATE opens one, a reviewer resolves it (or its time runs out), and
 * the next identical request (same agent, session, stage and subject) takes the resolution once, while
 * the resolution lasts (docs/dev-pdp.md).
 * @packageDocumentation
 */
import { canonicalJson } from '../permit/hash.js';
import { randomId } from './signing.js';
/** Thrown by `resolveEscalation` for an id that is unknown or already resolved. */
export class EscalationError extends Error {
    name = 'EscalationError';
    code;
    constructor(code, message) {
        super(message);
        this.code = code;
    }
}
/** How many resolved ids are remembered to answer `escalation_already_resolved`. */
const RESOLVED_IDS_KEPT = 10_000;
function subjectKey(subject) {
    return canonicalJson([subject.agentId, subject.session, subject.stage, subject.tool ?? null, subject.hash]);
}
function contained(callback, value) {
    try {
        callback?.(value);
    }
    catch {
        // an observer cannot change a review
    }
}
/** Open escalations and one-time resolutions waiting for their request. @internal */
export class EscalationBook {
    #open = new Map();
    #resolvedIds = new Set();
    #waiting = new Map();
    #options;
    #now;
    #timer;
    constructor(options) {
        this.#options = options;
        this.#now = options.now ?? Date.now;
    }
    /**
     * Opens a review for this subject and returns its fresh id (a simulated request opens one too: an
     * adapter asks first with a simulated request and resumes the call once it is approved).
     */
    open(subject, details) {
        const id = randomId('esc_');
        this.sweep();
        const escalation = { id, subject, openedAt: this.#now(), ...details };
        this.#open.set(id, escalation);
        contained(this.#options.onOpen, escalation);
        return id;
    }
    /** Records the session's labels on an open escalation (from its evidence record). */
    label(id, labels) {
        const escalation = this.#open.get(id);
        if (escalation !== undefined && Array.isArray(labels))
            escalation.labels = [...labels];
    }
    /**
     * Resolves an open escalation; the next identical request within the approval TTL takes the
     * resolution once.
     * @throws EscalationError `escalation_not_found` or `escalation_already_resolved`
     */
    resolve(id, resolution, by = 'process', note) {
        if (resolution !== 'approve' && resolution !== 'deny')
            throw new TypeError("resolution must be 'approve' or 'deny'");
        this.sweep();
        const escalation = typeof id === 'string' ? this.#open.get(id) : undefined;
        if (escalation === undefined) {
            if (typeof id === 'string' && this.#resolvedIds.has(id)) {
                throw new EscalationError('escalation_already_resolved', 'escalation already resolved');
            }
            throw new EscalationError('escalation_not_found', 'unknown escalation id');
        }
        this.#close(escalation, resolution, resolution, by, note);
    }
    /** The resolution waiting for this subject, if any and not expired; `consume` takes it (one use). */
    take(subject, consume) {
        const key = subjectKey(subject);
        const queue = this.#waiting.get(key);
        if (queue === undefined)
            return undefined;
        const now = this.#now();
        while (queue.length > 0 && queue[0].expiresAt <= now)
            queue.shift();
        const first = queue[0];
        if (first === undefined) {
            this.#waiting.delete(key);
            return undefined;
        }
        if (consume) {
            queue.shift();
            if (queue.length === 0)
                this.#waiting.delete(key);
        }
        return first.resolution;
    }
    /** The open escalations, newest first (expired ones are denied first). */
    pending() {
        this.sweep();
        return [...this.#open.values()].reverse();
    }
    /** Denies every escalation open longer than the escalation TTL and drops expired resolutions. */
    sweep() {
        const now = this.#now();
        for (const escalation of this.#open.values()) {
            // insertion order is opening order: the first one still in time ends the sweep
            if (now - escalation.openedAt < this.#options.escalationTtlMs)
                break;
            this.#close(escalation, 'deny', 'expired', 'ttl', undefined);
        }
        for (const [key, queue] of this.#waiting) {
            const live = queue.filter((w) => w.expiresAt > now);
            if (live.length === 0)
                this.#waiting.delete(key);
            else if (live.length !== queue.length)
                this.#waiting.set(key, live);
        }
    }
    /** Sweeps every `intervalMs` until {@link stop} (the timer does not keep the process alive). */
    start(intervalMs) {
        this.stop();
        this.#timer = setInterval(() => this.sweep(), intervalMs);
        this.#timer.unref();
    }
    /** Stops the sweep timer. */
    stop() {
        if (this.#timer !== undefined)
            clearInterval(this.#timer);
        this.#timer = undefined;
    }
    #close(escalation, resolution, outcome, by, note) {
        const at = this.#now();
        this.#open.delete(escalation.id);
        this.#resolvedIds.add(escalation.id);
        if (this.#resolvedIds.size > RESOLVED_IDS_KEPT) {
            const oldest = this.#resolvedIds.values().next().value;
            if (oldest !== undefined)
                this.#resolvedIds.delete(oldest);
        }
        const key = subjectKey(escalation.subject);
        const waiting = { resolution, expiresAt: at + this.#options.approvalTtlMs };
        const queue = this.#waiting.get(key);
        if (queue)
            queue.push(waiting);
        else
            this.#waiting.set(key, [waiting]);
        const resolved = { escalation, outcome, by, at };
        if (note !== undefined && note !== '')
            resolved.note = note;
        contained(this.#options.onResolve, resolved);
    }
}
