/**
 * Evidence logs made in the test, as a PDP writes them (a hash chain of records, each signed).
 */
import { CompactSign, type CryptoKey, exportJWK, generateKeyPair, type JSONWebKeySet } from 'jose';
import { type EvidenceRecord, evidenceRecordHash } from '../../src/evidence/record.js';

/** An Ed25519 evidence signer with its public JWKS. */
export interface EvidenceSigner {
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  jwks: JSONWebKeySet;
  /** A valid log of `n` records. */
  log(n: number): Promise<EvidenceRecord[]>;
}

/** A fresh signer (kid `ev1`). */
export async function createEvidenceSigner(): Promise<EvidenceSigner> {
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { extractable: true });
  const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'ev1', alg: 'EdDSA', use: 'sig' }] };
  return {
    privateKey,
    publicKey,
    jwks,
    async log(n) {
      const out: EvidenceRecord[] = [];
      for (let seq = 1; seq <= n; seq++) {
        const body = {
          seq,
          ts: new Date(Date.UTC(2030, 0, 1, 0, 0, seq)).toISOString(),
          decisionId: `dec_${seq}`,
          requestId: `req_${seq}`,
          agentId: 'support-ai',
          session: 'sess_demo',
          stage: 'input',
          verdict: 'ALLOW',
          latches: [],
          simulated: false,
          prevHash: out.at(-1)?.hash ?? null,
        };
        const hash = evidenceRecordHash(body);
        const sig = await new CompactSign(new TextEncoder().encode(hash))
          .setProtectedHeader({ alg: 'EdDSA', kid: 'ev1' })
          .sign(privateKey);
        out.push({ ...body, hash, sig });
      }
      return out;
    },
  };
}
