// STUB: replaced by the dev-pdp work (issue 4).
import type { KeyObject } from 'node:crypto';
import type { CryptoKey, JSONWebKeySet } from 'jose';
export interface EvidenceRecord { seq: number; ts: string; decisionId: string; requestId: string; agentId: string; session: string; stage: string; verdict: string; latches: string[]; reason?: string; tool?: string; argsHash?: string; contentHash?: string; simulated: boolean; prevHash: string | null; hash: string; sig: string }
export type EvidenceVerification = { ok: true; count: number } | { ok: false; index: number; reason: string };
export async function verifyEvidence(_records: readonly EvidenceRecord[], _options: { keys: string | URL | JSONWebKeySet | KeyObject | CryptoKey }): Promise<EvidenceVerification> {
  throw new Error('not implemented');
}
