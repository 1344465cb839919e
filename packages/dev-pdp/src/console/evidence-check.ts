/**
 * The console's evidence view: verifies the `evidencePath` file, read afresh on every look, or else the
 * log in memory, with `verifyEvidence` and the PDP's own public key, and names the first broken record
 * (docs/dev-pdp.md, "The reviewer console").
 * @packageDocumentation
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { EvidenceRecord } from 'agent-pep/internal';
import { parseJsonLines, verifyEvidence } from 'agent-pep/internal';
import type { JSONWebKeySet } from 'jose';
import type { EvidenceLog } from '../evidence.js';

/** What the evidence view shows. @internal */
export interface EvidenceStatus {
  status: 'ok' | 'broken';
  /** What was verified: the evidence file, or the log in memory. */
  source: 'file' | 'memory';
  /** Records read. */
  count: number;
  /** Broken: the first broken record's `seq` (as written in it, else its line number). */
  seq?: number;
  /** Broken: why (a `verifyEvidence` reason, `missing_records` or `unreadable`). */
  reason?: string;
}

/** Verifies the evidence on demand, re-verifying only when what it reads has changed. @internal */
export class EvidenceCheck {
  readonly #log: EvidenceLog;
  readonly #keys: JSONWebKeySet;
  #last: { digest: string; result: EvidenceStatus } | undefined;

  constructor(log: EvidenceLog, keys: JSONWebKeySet) {
    this.#log = log;
    this.#keys = keys;
  }

  /** The current verification result. */
  async status(): Promise<EvidenceStatus> {
    const path = this.#log.path;
    // records the PDP has kept so far; the file may lag by the one being written
    const kept = this.#log.size;
    if (path === undefined) return this.#memory(kept);
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch {
      return { status: 'broken', source: 'file', count: 0, seq: 1, reason: 'unreadable' };
    }
    // a last line without its newline is a record being written, not yet part of the log
    const complete = text.endsWith('\n') ? text : text.slice(0, text.lastIndexOf('\n') + 1);
    const digest = `file:${kept}:${createHash('sha256').update(complete).digest('base64url')}`;
    if (this.#last?.digest === digest) return this.#last.result;
    const records = parseJsonLines(complete);
    let result = await this.#verify(records, 'file');
    if (result.status === 'ok' && records.length < kept - 1) {
      result = {
        status: 'broken',
        source: 'file',
        count: records.length,
        seq: records.length + 1,
        reason: 'missing_records',
      };
    }
    this.#last = { digest, result };
    return result;
  }

  async #memory(kept: number): Promise<EvidenceStatus> {
    const digest = `memory:${kept}`;
    if (this.#last?.digest === digest) return this.#last.result;
    const result = await this.#verify(this.#log.latest(() => true, Number.MAX_SAFE_INTEGER).reverse(), 'memory');
    this.#last = { digest, result };
    return result;
  }

  async #verify(records: unknown[], source: 'file' | 'memory'): Promise<EvidenceStatus> {
    const verdict = await verifyEvidence(records as EvidenceRecord[], { keys: this.#keys });
    if (verdict.ok) return { status: 'ok', source, count: verdict.count };
    const record = records[verdict.index] as { seq?: unknown } | undefined;
    const seq = Number.isSafeInteger(record?.seq) ? (record?.seq as number) : verdict.index + 1;
    return { status: 'broken', source, count: records.length, seq, reason: verdict.reason };
  }
}
