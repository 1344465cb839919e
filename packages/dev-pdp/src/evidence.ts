/**
 * The dev PDP's evidence log: every decision appended as a hash-chained, signed record, kept in memory
 * and, with a path, written as JSON Lines (docs/dev-pdp.md).
 * @packageDocumentation
 */
import { createHmac, randomBytes } from 'node:crypto';
import { type FileHandle, open, readFile, unlink } from 'node:fs/promises';
import type { EvidenceRecord, UnsignedEvidenceRecord } from 'agent-pep/internal';
import { recordHash } from './evidence-hash.js';
import { randomId, type SigningKey, signText } from './signing.js';

/** What the server tells the log about one decision. @internal */
export type EvidenceEntry = Omit<
  UnsignedEvidenceRecord,
  'seq' | 'ts' | 'prevHash' | 'contentHash' | 'outcome' | 'by' | 'note'
> & {
  /** Text stages: the content, hashed with the secret evidence key and never stored. */
  content?: string;
};

/** What the log is told about one review. @internal */
export interface ReviewEntry {
  escalationId: string;
  outcome: 'approve' | 'deny' | 'expired';
  by: string;
  note?: string;
  requestId: string;
  agentId: string;
  session: string;
  latches: readonly string[];
  tool?: string;
  /** The pin of the tool definition the escalated call named (an MCP pin), when it named one. */
  toolPin?: string;
  argsHash?: string;
  contentHash?: string;
}

/** The append-only evidence log. @internal */
export class EvidenceLog {
  readonly #key: SigningKey;
  /** Secret HMAC key for content hashes; made at start, never leaves the process. */
  readonly #contentKey = randomBytes(32);
  readonly #records: EvidenceRecord[] = [];
  #file: FileHandle | undefined;
  #tail: Promise<unknown> = Promise.resolve();
  #lastHash: string | null = null;
  #seq = 0;
  #failure: unknown;

  /** The lock file that claims the evidence file for this log, removed on close. */
  #lock: { path: string; token: string } | undefined;
  readonly #path: string | undefined;

  private constructor(
    key: SigningKey,
    file: FileHandle | undefined,
    lock: { path: string; token: string } | undefined,
    path?: string,
  ) {
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
  static async open(key: SigningKey, path?: string): Promise<EvidenceLog> {
    if (path === undefined) return new EvidenceLog(key, undefined, undefined);
    const lock = await claim(`${path}.lock`);
    let file: FileHandle | undefined;
    try {
      file = await open(path, 'a');
      const { size } = await file.stat();
      if (size > 0)
        throw new Error('evidencePath already holds records; use a new or empty file (one file, one chain)');
    } catch (error) {
      await file?.close();
      await unlink(lock.path).catch(() => {});
      throw error;
    }
    return new EvidenceLog(key, file, lock, path);
  }

  /** base64url HMAC-SHA-256 of the content under the secret evidence key. */
  contentHash(content: string): string {
    return createHmac('sha256', this.#contentKey).update(content, 'utf8').digest('base64url');
  }

  /**
   * Appends one decision. Seq, chain and file order follow call order; the promise settles once the
   * record is signed, kept and (with a path) written.
   */
  append(entry: EvidenceEntry): Promise<EvidenceRecord> {
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
      ...(entry.grants !== undefined ? { grants: [...entry.grants] } : {}),
      ...(entry.audit !== undefined ? { audit: structuredClone(entry.audit) } : {}),
      ...(entry.reason !== undefined ? { reason: entry.reason } : {}),
      ...(entry.tool !== undefined ? { tool: entry.tool } : {}),
      ...(entry.argsHash !== undefined ? { argsHash: entry.argsHash } : {}),
      ...(entry.content !== undefined ? { contentHash: this.contentHash(entry.content) } : {}),
      ...(entry.visibility !== undefined ? { visibility: structuredClone(entry.visibility) } : {}),
      simulated: entry.simulated,
      // an ESCALATE names the review it is held for, so a log line leads to the approval endpoint
      ...(entry.escalationId !== undefined ? { escalationId: entry.escalationId } : {}),
    });
  }

  /**
   * Appends the record of a review (`stage: "review"`): who resolved an escalation, how and when,
   * chained like a decision. `entry.contentHash` is already keyed (the escalation's subject).
   */
  appendReview(entry: ReviewEntry): Promise<EvidenceRecord> {
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
      ...(entry.toolPin !== undefined ? { toolPin: entry.toolPin } : {}),
      ...(entry.contentHash !== undefined ? { contentHash: entry.contentHash } : {}),
      simulated: false,
      escalationId: entry.escalationId,
      outcome: entry.outcome,
      by: entry.by,
      ...(entry.note !== undefined ? { note: entry.note } : {}),
    });
  }

  #chain(body: Omit<UnsignedEvidenceRecord, 'seq' | 'ts' | 'prevHash'>): Promise<EvidenceRecord> {
    const unsigned = { seq: this.#seq + 1, ts: new Date().toISOString(), ...body, prevHash: this.#lastHash };
    // Hash first: a record that cannot be hashed must not leave a gap in seq or the chain.
    const hash = recordHash(unsigned as unknown as Record<string, unknown>);
    this.#seq = unsigned.seq;
    this.#lastHash = hash;
    const run = this.#tail.then(async () => {
      if (this.#failure !== undefined) throw new Error('the evidence log failed earlier', { cause: this.#failure });
      const record: EvidenceRecord = { ...unsigned, hash, sig: await signText(this.#key, hash) };
      this.#records.push(record);
      if (this.#file) {
        try {
          await this.#file.appendFile(`${JSON.stringify(record)}\n`, 'utf8');
        } catch (error) {
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
  latest(keep: (record: Readonly<EvidenceRecord>) => boolean, limit: number): EvidenceRecord[] {
    const out: EvidenceRecord[] = [];
    for (let i = this.#records.length - 1; i >= 0 && out.length < limit; i--) {
      const record = this.#records[i] as EvidenceRecord;
      if (keep(record)) out.push(structuredClone(record));
    }
    return out;
  }

  /** How many records are kept (signed and written) so far. */
  get size(): number {
    return this.#records.length;
  }

  /** The path of the evidence file, if any. */
  get path(): string | undefined {
    return this.#path;
  }

  /** Deep copies of the records so far, in order. */
  records(): EvidenceRecord[] {
    return structuredClone(this.#records);
  }

  /** Waits for pending appends, then closes the file and releases its lock. Idempotent. */
  async close(): Promise<void> {
    await this.#tail;
    const file = this.#file;
    this.#file = undefined;
    if (file) await file.close();
    const lock = this.#lock;
    this.#lock = undefined;
    // only our own lock (one an operator replaced is theirs)
    if (lock !== undefined && (await readFile(lock.path, 'utf8').catch(() => '')) === lock.token) {
      await unlink(lock.path).catch(() => {});
    }
  }
}

/** Whether process `pid` runs (one we may not signal runs too). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: unknown }).code === 'EPERM';
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
async function claim(lock: string): Promise<{ path: string; token: string }> {
  const token = `${process.pid} ${randomBytes(12).toString('hex')}`;
  let handle: FileHandle;
  try {
    handle = await open(lock, 'wx');
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'EEXIST') throw error;
    const pid = Number.parseInt(await readFile(lock, 'utf8').catch(() => ''), 10);
    if (Number.isInteger(pid) && pid > 0 && running(pid)) {
      throw new Error(`evidencePath is held by a running dev PDP (pid ${pid}): one file, one chain`);
    }
    throw new Error(
      `evidencePath has a lock, ${lock}, whose dev PDP is not running (it stopped without closing): remove the lock if no dev PDP writes the file`,
    );
  }
  try {
    await handle.writeFile(token);
  } catch (error) {
    // a lock we made but could not fill is not left behind
    await unlink(lock).catch(() => {});
    throw error;
  } finally {
    await handle.close();
  }
  return { path: lock, token };
}
