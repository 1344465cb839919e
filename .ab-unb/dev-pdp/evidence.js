/**
 * The dev PDP's evidence log: every decision appended as a hash-chained, signed record, kept in memory
 * and, with a path, written as JSON Lines (docs/dev-pdp.md).
 * @packageDocumentation
 */
import { createHmac, randomBytes } from 'node:crypto';
import { open, readFile, unlink } from 'node:fs/promises';
import { evidenceRecordHash } from '../evidence/record.js';
import { randomId, signText } from './signing.js';
/** The append-only evidence log. @internal */
export class EvidenceLog {
    #key;
    /** Secret HMAC key for content hashes; made at start, never leaves the process. */
    #contentKey = randomBytes(32);
    #records = [];
    #file;
    #tail = Promise.resolve();
    #lastHash = null;
    #seq = 0;
    #failure;
    /** The lock file that claims the evidence file for this log, removed on close. */
    #lock;
    #path;
    constructor(key, file, lock, path) {
        this.#key = key;
        this.#file = file;
        this.#lock = lock;
        this.#path = path;
    }
    /**
     * Opens a log. With `path`, the file must be new or empty: one file holds one chain. The file is
     * claimed with `<path>.lock` (created exclusively, holding this process's pid) until `close()`: a
     * second log on the same file, in this process or another, is refused while the first runs, since
     * two chains in one file read as tampered; so is a lock left by a log that never closed.
     * @throws Error when the file cannot be opened, already holds records, or is held by a running log
     */
    static async open(key, path) {
        if (path === undefined)
            return new EvidenceLog(key, undefined, undefined);
        const lock = await claim(`${path}.lock`);
        let file;
        try {
            file = await open(path, 'a');
            const { size } = await file.stat();
            if (size > 0)
                throw new Error('evidencePath already holds records; use a new or empty file (one file, one chain)');
        }
        catch (error) {
            await file?.close();
            await unlink(lock.path).catch(() => { });
            throw error;
        }
        return new EvidenceLog(key, file, lock, path);
    }
    /** base64url HMAC-SHA-256 of the content under the secret evidence key. */
    contentHash(content) {
        return createHmac('sha256', this.#contentKey).update(content, 'utf8').digest('base64url');
    }
    /**
     * Appends one decision. Seq, chain and file order follow call order; the promise settles once the
     * record is signed, kept and (with a path) written.
     */
    append(entry) {
        // members in the contract's order (the hash does not depend on it: RFC 8785 sorts them)
        return this.#chain({
            decisionId: entry.decisionId,
            requestId: entry.requestId,
            agentId: entry.agentId,
            session: entry.session,
            stage: entry.stage,
            verdict: entry.verdict,
            latches: [...entry.latches],
            ...(entry.labels !== undefined ? { labels: [...entry.labels] } : {}),
            ...(entry.reason !== undefined ? { reason: entry.reason } : {}),
            ...(entry.tool !== undefined ? { tool: entry.tool } : {}),
            ...(entry.argsHash !== undefined ? { argsHash: entry.argsHash } : {}),
            ...(entry.content !== undefined ? { contentHash: this.contentHash(entry.content) } : {}),
            ...(entry.visibility !== undefined ? { visibility: structuredClone(entry.visibility) } : {}),
            simulated: entry.simulated,
        });
    }
    /**
     * Appends the record of a review (`stage: "review"`): who resolved an escalation, how and when,
     * chained like a decision. `entry.contentHash` is already keyed (the escalation's subject).
     */
    appendReview(entry) {
        return this.#chain({
            decisionId: randomId('rev_'),
            requestId: entry.requestId,
            agentId: entry.agentId,
            session: entry.session,
            stage: 'review',
            verdict: entry.outcome === 'approve' ? 'ALLOW' : 'BLOCK',
            latches: [...entry.latches],
            ...(entry.tool !== undefined ? { tool: entry.tool } : {}),
            ...(entry.argsHash !== undefined ? { argsHash: entry.argsHash } : {}),
            ...(entry.contentHash !== undefined ? { contentHash: entry.contentHash } : {}),
            simulated: false,
            escalationId: entry.escalationId,
            outcome: entry.outcome,
            by: entry.by,
            ...(entry.note !== undefined ? { note: entry.note } : {}),
        });
    }
    #chain(body) {
        const unsigned = { seq: this.#seq + 1, ts: new Date().toISOString(), ...body, prevHash: this.#lastHash };
        // Hash first: a record that cannot be hashed must not leave a gap in seq or the chain.
        const hash = evidenceRecordHash(unsigned);
        this.#seq = unsigned.seq;
        this.#lastHash = hash;
        const run = this.#tail.then(async () => {
            if (this.#failure !== undefined)
                throw new Error('the evidence log failed earlier', { cause: this.#failure });
            const record = { ...unsigned, hash, sig: await signText(this.#key, hash) };
            this.#records.push(record);
            if (this.#file) {
                try {
                    await this.#file.appendFile(`${JSON.stringify(record)}\n`, 'utf8');
                }
                catch (error) {
                    this.#failure = error;
                    throw new Error('cannot write the evidence file', { cause: error });
                }
            }
            return record;
        });
        this.#tail = run.catch(() => undefined);
        return run;
    }
    /** Copies of the last `limit` records that `keep` selects, newest first (a scan from the end). */
    latest(keep, limit) {
        const out = [];
        for (let i = this.#records.length - 1; i >= 0 && out.length < limit; i--) {
            const record = this.#records[i];
            if (keep(record))
                out.push(structuredClone(record));
        }
        return out;
    }
    /** How many records are kept (signed and written) so far. */
    get size() {
        return this.#records.length;
    }
    /** The path of the evidence file, if any. */
    get path() {
        return this.#path;
    }
    /** Deep copies of the records so far, in order. */
    records() {
        return structuredClone(this.#records);
    }
    /** Waits for pending appends, then closes the file and releases its lock. Idempotent. */
    async close() {
        await this.#tail;
        const file = this.#file;
        this.#file = undefined;
        if (file)
            await file.close();
        const lock = this.#lock;
        this.#lock = undefined;
        // only our own lock (one an operator replaced is theirs)
        if (lock !== undefined && (await readFile(lock.path, 'utf8').catch(() => '')) === lock.token) {
            await unlink(lock.path).catch(() => { });
        }
    }
}
/** Whether process `pid` runs (one we may not signal runs too). */
function running(pid) {
    try {
        process.kill(pid, 0);
        return true;
    }
    catch (error) {
        return error.code === 'EPERM';
    }
}
/**
 * Creates `lock` exclusively, holding this process's pid and a token of this log (what `close()`
 * checks before removing it). A lock already there is never taken over, even one whose process is
 * gone (after a crash): two PDPs taking a stale lock at once could both get the file. The operator
 * removes it.
 * @returns the lock's path and token
 * @throws Error naming the lock and whether its process runs, or why it cannot be created
 */
async function claim(lock) {
    const token = `${process.pid} ${randomBytes(12).toString('hex')}`;
    let handle;
    try {
        handle = await open(lock, 'wx');
    }
    catch (error) {
        if (error.code !== 'EEXIST')
            throw error;
        const pid = Number.parseInt(await readFile(lock, 'utf8').catch(() => ''), 10);
        if (Number.isInteger(pid) && pid > 0 && running(pid)) {
            throw new Error(`evidencePath is held by a running dev PDP (pid ${pid}): one file, one chain`);
        }
        throw new Error(`evidencePath has a lock, ${lock}, whose dev PDP is not running (it stopped without closing): remove the lock if no dev PDP writes the file`);
    }
    try {
        await handle.writeFile(token);
    }
    catch (error) {
        // a lock we made but could not fill is not left behind
        await unlink(lock).catch(() => { });
        throw error;
    }
    finally {
        await handle.close();
    }
    return { path: lock, token };
}
