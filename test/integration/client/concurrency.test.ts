/**
 * Hundreds of parallel decisions while the PDP goes away: every one resolves, none is an ALLOW the
 * PDP did not send, no unhandled rejection, and no socket stays open after close().
 */
import { Agent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPep, type PolicyDecision } from '../../../src/index.js';
import { answer, type FakePdp, startFakePdp } from '../../support/fake-pdp.js';

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => {
  unhandled.push(reason);
};
beforeEach(() => {
  unhandled.length = 0;
  process.on('unhandledRejection', onUnhandled);
});
afterEach(() => {
  process.off('unhandledRejection', onUnhandled);
});

function decideMany(pep: ReturnType<typeof createPep>, n: number): Promise<PolicyDecision>[] {
  const out: Promise<PolicyDecision>[] = [];
  for (let i = 0; i < n; i++) {
    out.push(
      i % 2 === 0 ? pep.authorizeAction('refund_payment', { orderId: `ord_${i}` }) : pep.checkOutput(`draft ${i}`),
    );
  }
  return out;
}

describe('concurrency', () => {
  let pdp: FakePdp;
  afterEach(async () => {
    await pdp?.close();
  });

  it('400 decisions while the PDP goes away: all resolve, ALLOW only where the PDP answered ALLOW', async () => {
    const allowed = new Set<string>();
    let alive = true;
    pdp = await startFakePdp((req, res) => {
      setTimeout(
        () => {
          if (!alive) return res.socket?.destroy();
          allowed.add(String(req.body.requestId));
          const body: Record<string, unknown> = { verdict: 'ALLOW', requestId: req.body.requestId };
          if (req.body.stage === 'action') body.permitId = 'p';
          answer(res, body);
        },
        Math.floor(Math.random() * 40),
      );
    });
    const pep = createPep({ pdpUrl: pdp.url, agentId: 'a', session: 's', timeoutMs: 3000, retries: 2 });
    const first = decideMany(pep, 200);
    await new Promise((r) => setTimeout(r, 15));
    alive = false;
    await pdp.close();
    const after = decideMany(pep, 200);
    const results = await Promise.all([...first, ...after]);
    expect(results).toHaveLength(400);
    for (const d of results) {
      expect(['ALLOW', 'BLOCK']).toContain(d.verdict);
      if (d.verdict === 'ALLOW') expect(allowed.has(d.requestId)).toBe(true);
      else expect(d.synthesized?.code).toMatch(/^pdp_(unreachable|timeout)$/);
    }
    for (const d of await Promise.all(after)) expect(d.verdict).toBe('BLOCK');
    await pep.close();
    expect(unhandled).toEqual([]);
  });

  it('300 decisions against a live PDP, then close(): no socket stays open', async () => {
    pdp = await startFakePdp((req, res) => {
      const body: Record<string, unknown> = { verdict: 'ALLOW', requestId: req.body.requestId };
      if (req.body.stage === 'action') body.permitId = 'p';
      answer(res, body);
    });
    // The deadline is not under test here: 300 decisions on a loaded machine may take past the default.
    const pep = createPep({ pdpUrl: pdp.url, agentId: 'a', session: 's', timeoutMs: 20_000 });
    const results = await Promise.all(decideMany(pep, 300));
    expect(results.every((d) => d.verdict === 'ALLOW')).toBe(true);
    expect(pdp.openSockets()).toBeGreaterThan(0);
    await pep.close();
    for (let i = 0; i < 50 && pdp.openSockets() > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(pdp.openSockets()).toBe(0);
    expect(unhandled).toEqual([]);
  });

  it('close() during 200 hung decisions resolves them all at once, with no open socket', async () => {
    pdp = await startFakePdp(() => undefined);
    const pep = createPep({ pdpUrl: pdp.url, agentId: 'a', session: 's', timeoutMs: 10_000 });
    const pending = decideMany(pep, 200);
    await new Promise((r) => setTimeout(r, 200));
    const t0 = performance.now();
    await pep.close();
    const results = await Promise.all(pending);
    expect(performance.now() - t0).toBeLessThan(3000);
    expect(results.every((d) => d.synthesized?.code === 'pdp_unreachable')).toBe(true);
    for (let i = 0; i < 50 && pdp.openSockets() > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(pdp.openSockets()).toBe(0);
    expect(unhandled).toEqual([]);
  });

  it("close() stops decisions in flight on a caller's dispatcher, which it leaves open", async () => {
    pdp = await startFakePdp(() => undefined);
    const dispatcher = new Agent();
    const pep = createPep({ pdpUrl: pdp.url, agentId: 'a', session: 's', timeoutMs: 10_000, dispatcher });
    const pending = decideMany(pep, 40);
    await new Promise((r) => setTimeout(r, 100));
    const t0 = performance.now();
    await pep.close();
    const results = await Promise.all(pending);
    expect(performance.now() - t0).toBeLessThan(3000);
    expect(results.map((d) => [d.synthesized?.code, d.reason])).toEqual(
      results.map(() => ['pdp_unreachable', 'client closed']),
    );
    expect(dispatcher.destroyed).toBe(false);
    await dispatcher.destroy();
    expect(unhandled).toEqual([]);
  });

  it('close() stops a decision waiting to retry, and a closed client sends nothing more', async () => {
    let requests = 0;
    pdp = await startFakePdp((_req, res) => {
      requests++;
      res.writeHead(503, { 'retry-after': '5' }).end();
    });
    const pep = createPep({ pdpUrl: pdp.url, agentId: 'a', session: 's', timeoutMs: 10_000, retries: 2 });
    const pending = pep.checkInput('hello');
    for (let i = 0; i < 100 && requests === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(requests).toBe(1);
    await pep.close();
    const d = await pending;
    expect([d.verdict, d.synthesized?.code, d.reason]).toEqual(['BLOCK', 'pdp_unreachable', 'client closed']);
    await new Promise((r) => setTimeout(r, 50));
    expect(requests).toBe(1);
    expect(unhandled).toEqual([]);
  });
});
