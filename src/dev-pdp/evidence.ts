/**
 * The dev PDP's evidence log: every decision appended as a hash-chained, signed record, kept in memory
 * and, with a path, written as JSON Lines (docs/dev-pdp.md).
 * @packageDocumentation
 */
import { createHmac, randomBytes } from 'node:crypto';
import { type FileHandle, open } from 'node:fs/promises';
import { type EvidenceRecord, evidenceRecordHash, type UnsignedEvidenceRecord } from '../evidence/record.js';
import { type SigningKey, signText } from './signing.js';

/** What the server tells the log about one decision. @internal */
export type EvidenceEntry = Omit<UnsignedEvidenceRecord, 'seq' | 'ts' | 'prevHash' | 'contentHash'> & {
  /** Text stages: the content, hashed with the secret evidence key and never stored. */
  content?: string;
};

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

  private constructor(key: SigningKey, file: FileHandle | undefined) {
    this.#key = key;
    this.#file = file;
  }

  /**
   * Opens a log. With `path`, the file must be new or empty: one file holds one chain.
   * @throws Error when the file cannot be opened or already holds records
   */
  static async open(key: SigningKey, path?: string): Promise<EvidenceLog> {
    if (path === undefined) return new EvidenceLog(key, undefined);
    const file = await open(path, 'a');
    try {
      const { size } = await file.stat();
      if (size > 0)
        throw new Error('evidencePath already holds records; use a new or empty file (one file, one chain)');
    } catch (error) {
      await file.close();
      throw error;
    }
    return new EvidenceLog(key, file);
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
    const unsigned: UnsignedEvidenceRecord = {
      seq: this.#seq + 1,
      ts: new Date().toISOString(),
      decisionId: entry.decisionId,
      requestId: entry.requestId,
      agentId: entry.agentId,
      session: entry.session,
      stage: entry.stage,
      verdict: entry.verdict,
      latches: [...entry.latches],
      ...(entry.reason !== undefined ? { reason: entry.reason } : {}),
      ...(entry.tool !== undefined ? { tool: entry.tool } : {}),
      ...(entry.argsHash !== undefined ? { argsHash: entry.argsHash } : {}),
      ...(entry.content !== undefined ? { contentHash: this.contentHash(entry.content) } : {}),
      simulated: entry.simulated,
      prevHash: this.#lastHash,
    };
    // Hash first: a record that cannot be hashed must not leave a gap in seq or the chain.
    const hash = evidenceRecordHash(unsigned as unknown as Record<string, unknown>);
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

  /** Deep copies of the records so far, in order. */
  records(): EvidenceRecord[] {
    return structuredClone(this.#records);
  }

  /** Waits for pending appends, then closes the file. Idempotent. */
  async close(): Promise<void> {
    await this.#tail;
    const file = this.#file;
    this.#file = undefined;
    if (file) await file.close();
  }
}
