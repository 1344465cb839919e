/**
 * Breaker probes that pass today and add coverage the suite lacked:
 * - the evidence `hash` recomputed independently (the `canonicalize` package and node:crypto, not the
 *   SDK's own `evidenceRecordHash`, which both the writer and `verifyEvidence` share), and each `sig`
 *   a compact EdDSA JWS with the PDP's `kid` whose payload is exactly that hash (CONTRACT.md section 6);
 * - `close()` ends sockets that never got as far as a request (slowloris headers, a body that stops
 *   half way, idle keep-alive), promptly, and the port stops accepting.
 */
import { createHash } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import canonicalize from 'canonicalize';
import { compactVerify, importJWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { startDevPdp } from '../../src/index.js';

const POLICY = {
  agents: ['support-ai'],
  latches: [
    { id: 'tone', stage: 'output', content: 'guarantee', verdict: 'WARN', reason: 'no guarantees' },
    { id: 'bank', stage: 'action', tool: 'bank_*', verdict: 'BLOCK', reason: 'no banking' },
  ],
};

async function post(url: string, body: unknown): Promise<number> {
  const res = await fetch(`${url}/api/policy/authorize`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(5000),
  });
  await res.arrayBuffer();
  return res.status;
}

describe('evidence hash and sig, recomputed independently', () => {
  it('hash = base64url SHA-256 of RFC 8785 JSON of the record without hash and sig; sig signs exactly it', async () => {
    const pdp = await startDevPdp({ policy: POLICY, log: false });
    try {
      const base = { agentId: 'support-ai', session: 's1' };
      expect(await post(pdp.url, { ...base, stage: 'output', content: 'we guarantee it' })).toBe(200);
      expect(await post(pdp.url, { ...base, stage: 'action', tool: 'bankTransfer', args: { amount: 1.5 } })).toBe(200);
      expect(await post(pdp.url, { ...base, stage: 'input', content: 'héllo 😀', simulated: true })).toBe(200);
      const key = await importJWK(pdp.jwks.keys[0]!, 'EdDSA');
      const records = pdp.evidence();
      expect(records).toHaveLength(3);
      let prev: string | null = null;
      for (const r of records) {
        const { hash, sig, ...rest } = r as unknown as Record<string, unknown>;
        const text = canonicalize(rest) as string;
        expect(createHash('sha256').update(text, 'utf8').digest('base64url')).toBe(hash);
        const { payload, protectedHeader } = await compactVerify(sig as string, key);
        expect(protectedHeader).toMatchObject({ alg: 'EdDSA', kid: pdp.kid });
        expect(new TextDecoder().decode(payload)).toBe(hash);
        expect(r.prevHash).toBe(prev);
        prev = r.hash;
        expect(JSON.stringify(r)).not.toMatch(/guarantee it|héllo|amount/);
      }
    } finally {
      await pdp.close();
    }
  });
});

describe('close() with sockets that never became a request', () => {
  it('slowloris headers, a half-sent body and idle sockets are all ended promptly', async () => {
    const pdp = await startDevPdp({ policy: POLICY, log: false });
    const { port } = new URL(pdp.url);
    const sockets: Socket[] = [];
    const closed: Promise<void>[] = [];
    const open = (first: string): Promise<void> =>
      new Promise((resolve, reject) => {
        const s = connect(Number(port), '127.0.0.1', () => {
          s.write(first);
          resolve();
        });
        s.on('error', () => {});
        s.once('error', reject);
        sockets.push(s);
        closed.push(new Promise((r) => s.once('close', () => r())));
      });
    for (let i = 0; i < 20; i++) await open('POST /api/policy/authorize HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    for (let i = 0; i < 5; i++) {
      await open(
        'POST /api/policy/authorize HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"agentId":',
      );
    }
    for (let i = 0; i < 5; i++) await open('');
    await new Promise((r) => setTimeout(r, 100));
    const t0 = Date.now();
    await pdp.close();
    await Promise.race([
      Promise.all(closed),
      new Promise((_, reject) => setTimeout(() => reject(new Error('sockets still open after 2 s')), 2000)),
    ]);
    expect(Date.now() - t0).toBeLessThan(2000);
    await expect(fetch(pdp.url, { signal: AbortSignal.timeout(2000) })).rejects.toThrow();
    for (const s of sockets) s.destroy();
  });
});
