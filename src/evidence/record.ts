/**
 * The evidence record (docs/dev-pdp.md) and its hash, shared by the dev PDP that writes the log
 * and `verifyEvidence` that checks it.
 * @packageDocumentation
 */
import { canonicalJson, sha256b64url } from '../permit/hash.js';

/**
 * One entry of a PDP's hash-chained, signed evidence log: a decision, or (`stage: "review"`) the
 * resolution of an escalation, whose `verdict` is what it grants the next identical request (ALLOW for
 * `approve`, BLOCK for `deny` and `expired`) and whose `requestId` is that of the escalated request.
 *
 * @remarks Raw content and args never appear: `argsHash` is the `act_hash` and `contentHash` a keyed
 * HMAC-SHA-256 of the content under a secret evidence key, so short personal data cannot be guessed back.
 */
export interface EvidenceRecord {
  /** Position in the log, counting from 1. */
  seq: number;
  /** When the decision was made, RFC 3339. */
  ts: string;
  /** The PDP's id of the decision. */
  decisionId: string;
  /** The PEP's request id. */
  requestId: string;
  agentId: string;
  session: string;
  stage: string;
  verdict: string;
  /** Every engaged latch id, in policy order. */
  latches: string[];
  /** The session's labels after the step, sorted (`[]` when none). Absent in logs written before sessions. */
  labels?: string[];
  /**
   * Intent grants (docs/dev-pdp.md): on an action, the ids of the grants the call was inside; on an input
   * step, the ids of the grants it made. Absent in logs written before grants.
   */
  grants?: string[];
  /** The `mode: "audit"` latches that engaged, with their verdicts: recorded, never enforced. */
  audit?: { latch: string; verdict: string }[];
  reason?: string;
  /** Action: the normalized tool name. */
  tool?: string;
  /** Action: the `act_hash` of the args the decision was about. */
  argsHash?: string;
  /** A review of an action whose request named the pin of the tool's definition: that pin (an MCP pin). */
  toolPin?: string;
  /** Text stages: base64url HMAC-SHA-256 of the content under the PDP's secret evidence key. */
  contentHash?: string;
  /**
   * A visibility batch (docs/visibility.md), recorded as one record: how many requests the batch
   * declared (`size`), how many were decided (`decided`), and the normalized names of the tools hidden.
   */
  visibility?: { size: number; decided: number; hidden: string[] };
  /** True for a simulated (dry-run) request. */
  simulated: boolean;
  /** Review records (`stage: "review"`): the escalation resolved; an ESCALATE decision: the escalation it opened (or joined). */
  escalationId?: string;
  /** Review records: `approve`, `deny`, or `expired` (denied when no reviewer answered in time). */
  outcome?: 'approve' | 'deny' | 'expired';
  /** Review records: who resolved it: `console`, `api` (the HTTP endpoint), `process` (`resolveEscalation`) or `ttl`. */
  by?: string;
  /** Review records: the reviewer's note, when one was given. */
  note?: string;
  /** The previous record's `hash`; `null` for the first record. */
  prevHash: string | null;
  /** base64url SHA-256 of the RFC 8785 canonical JSON of this record without `hash` and `sig`. */
  hash: string;
  /** Compact JWS (EdDSA, with `kid`) by the PDP key whose payload is `hash`. */
  sig: string;
}

/** A record before it is hashed and signed. */
export type UnsignedEvidenceRecord = Omit<EvidenceRecord, 'hash' | 'sig'>;

/**
 * Computes a record's `hash`: base64url (no padding) SHA-256 over the UTF-8 of the RFC 8785 canonical
 * JSON of every member of the record except `hash` and `sig` (so a member added later changes it too).
 *
 * @param record - a record, with or without `hash` and `sig`
 * @returns 43 base64url characters
 * @throws TypeError when the record holds something that is not JSON
 * @example
 * ```ts
 * const ok = evidenceRecordHash(record) === record.hash;
 * ```
 */
export function evidenceRecordHash(record: Readonly<Record<string, unknown>>): string {
  const body: Record<string, unknown> = {};
  for (const key of Object.keys(record)) {
    if (key === 'hash' || key === 'sig') continue;
    Object.defineProperty(body, key, { value: record[key], enumerable: true, writable: true, configurable: true });
  }
  return sha256b64url(canonicalJson(body));
}
