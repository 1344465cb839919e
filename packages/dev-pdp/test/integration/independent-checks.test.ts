/**
 * Dev PDP rules of CONTRACT.md section 6 checked independently of its own helpers: the evidence
 * hash recomputed with canonicalize + SHA-256, the signature's payload, a secret contentHash key per
 * instance, escalations bound to the agent, `matches` with the u flag, and the default slow fault.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { compactVerify, createLocalJWKSet } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPep, type Pep } from '../../../../src/index.js';
import { REFUND_REVIEW } from '../../../../test/support/policies.js';
import { type DevPdp, startDevPdp } from '../../src/index.js';

const POLICY = {
  agents: ['support-ai', 'ops-ai'],
  latches: [
    REFUND_REVIEW,
    {
      id: 'upper-case-name',
      stage: 'action',
      tool: 'greet',
      when: { 'args.name': { matches: '^\\p{Lu}' } },
      verdict: 'BLOCK',
      reason: 'u flag',
    },
  ],
};

let pdp: DevPdp;
const clients: Pep[] = [];
beforeAll(async () => {
  pdp = await startDevPdp({ policy: POLICY, log: false });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await pdp.close();
});
function client(agentId = 'support-ai', extra: Record<string, unknown> = {}): Pep {
  const pep = createPep({ pdpUrl: pdp.url, agentId, session: 's1', ...extra });
  clients.push(pep);
  return pep;
}

describe('evidence records, recomputed independently', () => {
  it('hash = base64url SHA-256 of RFC 8785 JSON without hash and sig; sig is an EdDSA JWS over the hash', async () => {
    await client().checkInput('hello there');
    await client().authorizeAction('refund_payment', { orderId: 'o', amount: 5 });
    const records = pdp.evidence();
    expect(records.length).toBeGreaterThanOrEqual(2);
    const keys = createLocalJWKSet(pdp.jwks);
    let prev: string | null = null;
    for (const [i, record] of records.entries()) {
      const { hash, sig, ...rest } = record as unknown as Record<string, unknown>;
      const expected = createHash('sha256')
        .update(canonicalize(rest) as string, 'utf8')
        .digest('base64url');
      expect(hash).toBe(expected);
      expect(rest.seq).toBe(i + 1);
      expect(rest.prevHash).toBe(prev);
      expect(Number.isNaN(Date.parse(String(rest.ts)))).toBe(false);
      const { payload, protectedHeader } = await compactVerify(String(sig), keys);
      expect(protectedHeader.alg).toBe('EdDSA');
      expect(typeof protectedHeader.kid).toBe('string');
      expect(new TextDecoder().decode(payload)).toBe(hash);
      prev = hash as string;
    }
  });

  it('contentHash is keyed per instance: the same content hashes differently on two PDPs', async () => {
    const other = await startDevPdp({ policy: POLICY, log: false });
    const a = createPep({ pdpUrl: pdp.url, agentId: 'support-ai', session: 's1' });
    const b = createPep({ pdpUrl: other.url, agentId: 'support-ai', session: 's1' });
    await a.checkInput('555-0100');
    await b.checkInput('555-0100');
    const ha = pdp.evidence().at(-1)?.contentHash;
    const hb = other.evidence().at(-1)?.contentHash;
    expect(ha).toBeDefined();
    expect(ha).not.toBe(hb);
    expect(ha).not.toBe(createHash('sha256').update('555-0100').digest('base64url'));
    await a.close();
    await b.close();
    await other.close();
  });
});

describe('escalations', () => {
  it('an approval applies to the same agent only', async () => {
    const args = { orderId: 'o9', amount: 900 };
    const held = await client('support-ai').authorizeAction('refund_payment', args);
    expect(held.verdict).toBe('ESCALATE');
    pdp.resolveEscalation(held.escalationId as string, 'approve');
    expect((await client('ops-ai').authorizeAction('refund_payment', args)).verdict).toBe('ESCALATE');
    expect((await client('support-ai').authorizeAction('refund_payment', args)).verdict).toBe('ALLOW');
    const again = await client('support-ai').authorizeAction('refund_payment', args);
    expect(again.verdict).toBe('ESCALATE');
    expect(again.escalationId).not.toBe(held.escalationId);
  });
});

describe('latches', () => {
  it('`matches` regexes use the u flag (\\p{Lu})', async () => {
    expect((await client().authorizeAction('greet', { name: 'Ängel' })).verdict).toBe('BLOCK');
    expect((await client().authorizeAction('greet', { name: 'ängel' })).verdict).toBe('ALLOW');
  });
});

describe('faults', () => {
  it("{ kind: 'slow' } without bytesPerSecond trickles slowly enough to hit a short deadline", async () => {
    pdp.setFault({ kind: 'slow' });
    try {
      const d = await client('support-ai', { timeoutMs: 300 }).checkInput('x');
      expect(d.synthesized?.code).toBe('pdp_timeout');
    } finally {
      pdp.setFault(null);
    }
  });
});
