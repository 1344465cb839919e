/**
 * `pep.visibleTools` (docs/visibility.md): one batch of simulated visibility decisions over both
 * protocols, the subset not BLOCKed in the order given, every tool hidden when the PDP fails, never rejects.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type DevPdp, startDevPdp } from '../../../packages/dev-pdp/src/index.js';
import { createPep, type PolicyDecision } from '../../../src/index.js';
import { createClients } from '../../support/clients.js';
import { answer, type FakePdp, startFakePdp } from '../../support/fake-pdp.js';
import { TOOL_SURFACE_LATCHES } from '../../support/policies.js';

const policy = {
  agents: ['support-ai'],
  latches: [
    ...TOOL_SURFACE_LATCHES,
    { id: 'no-delete', stage: 'action', tool: 'delete_*', verdict: 'BLOCK', reason: 'never delete' },
    { id: 'review-email', stage: 'action', tool: 'send_email', verdict: 'ESCALATE', reason: 'emails need review' },
  ],
};

const TOOLS = ['lookup_order', 'bank_transfer', 'refund_payment', 'delete_account', 'send_email'];

let pdp: DevPdp;
beforeAll(async () => {
  pdp = await startDevPdp({ policy });
});
afterAll(async () => {
  await pdp.close();
});

describe.each(['agent-pep', 'authzen'] as const)('visibleTools over %s', (protocol) => {
  const clients = createClients(() => ({
    pdpUrl: pdp.url,
    agentId: 'support-ai',
    session: 'sess_vis',
    protocol,
    permits: { keys: pdp.jwksUrl, issuer: pdp.issuer },
  }));
  afterEach(() => clients.closeAll());

  it('resolves the tools not BLOCKed, in the order given: a latch conditioned on args never hides a tool', async () => {
    const shown = await clients.client().visibleTools(TOOLS);
    expect(shown).toEqual(['lookup_order', 'refund_payment', 'send_email']);
  });

  it('every request is a simulated action request with args {} and purpose visibility; no permit is minted', async () => {
    const seen: PolicyDecision[] = [];
    const pep = clients.client({ onDecision: (e: { decision: PolicyDecision }) => seen.push(e.decision) });
    await pep.visibleTools(['lookup_order', 'bank_transfer']);
    expect(seen).toHaveLength(2);
    for (const d of seen) {
      expect(d.simulated).toBe(true);
      expect(d.permitId).toBeUndefined();
      expect(d.stage).toBe('action');
    }
  });

  it('the dev PDP records the batch as one record naming the tools hidden', async () => {
    const before = pdp.evidence().length;
    await clients.client().visibleTools(TOOLS, { session: `sess_batch_${protocol}` });
    const added = pdp.evidence().slice(before);
    expect(added).toHaveLength(1);
    const [rec] = added;
    expect(rec?.simulated).toBe(true);
    expect(rec?.session).toBe(`sess_batch_${protocol}`);
    expect(rec?.visibility).toEqual({ size: 5, decided: 5, hidden: ['bank_transfer', 'delete_account'] });
    expect(rec?.verdict).toBe('BLOCK');
    expect(rec?.latches).toEqual(['no-transfers', 'no-delete', 'review-email']);
  });

  it('200 tools in one batch: every one decided, the blocked ones hidden, one evidence record', async () => {
    const names = Array.from({ length: 200 }, (_, i) => (i % 10 === 0 ? `bank_op_${i}` : `tool_${i}`));
    const before = pdp.evidence().length;
    const shown = await clients.client({ timeoutMs: 10_000 }).visibleTools(names);
    expect(shown).toEqual(names.filter((n) => !n.startsWith('bank_')));
    const added = pdp.evidence().slice(before);
    expect(added).toHaveLength(1);
    expect(added[0]?.visibility?.decided).toBe(200);
    expect(added[0]?.visibility?.hidden).toHaveLength(20);
  });

  it('[] and a non-array resolve [] without asking', async () => {
    const before = pdp.evidence().length;
    const pep = clients.client();
    expect(await pep.visibleTools([])).toEqual([]);
    expect(await pep.visibleTools('lookup_order' as never)).toEqual([]);
    expect(await pep.visibleTools(undefined as never)).toEqual([]);
    expect(pdp.evidence().length).toBe(before);
  });

  it('an unknown per-call option hides every tool (strict options), never rejects', async () => {
    const pep = clients.client();
    await expect(pep.visibleTools(['lookup_order'], { sesion: 's' } as never)).resolves.toEqual([]);
    await expect(pep.visibleTools(['lookup_order'], { simulated: false } as never)).resolves.toEqual([]);
    await expect(pep.visibleTools(['lookup_order'], 'x' as never)).resolves.toEqual([]);
  });

  it('a name that is not a string, or is too long, is hidden while the others stand', async () => {
    const shown = await clients.client().visibleTools(['lookup_order', 42 as never, 'x'.repeat(300), 'send_email']);
    expect(shown).toEqual(['lookup_order', 'send_email']);
  });
});

describe('visibleTools fails closed', () => {
  let fake: FakePdp;
  beforeAll(async () => {
    fake = await startFakePdp();
  });
  afterAll(async () => {
    await fake.close();
  });
  const clients = createClients(() => ({
    pdpUrl: fake.url,
    agentId: 'support-ai',
    session: 's',
    permits: false as never,
    retries: 0,
  }));
  afterEach(() => clients.closeAll());

  it('a PDP that hangs during the batch: every tool hidden within the deadline', async () => {
    fake.handler = () => undefined; // never answers
    const names = Array.from({ length: 20 }, (_, i) => `tool_${i}`);
    const started = Date.now();
    const shown = await clients.client({ timeoutMs: 300 }).visibleTools(names);
    expect(shown).toEqual([]);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('a PDP that is down hides every tool', async () => {
    const pep = createPep({ pdpUrl: 'http://127.0.0.1:1', agentId: 'a', session: 's', retries: 0 });
    expect(await pep.visibleTools(['lookup_order', 'send_email'])).toEqual([]);
    await pep.close();
  });

  it('an answer that fails the rules hides that tool only; the wire carries purpose and the batch', async () => {
    fake.handler = (req, res) => {
      if (req.body.tool === 'bad_tool') return answer(res, { verdict: 'MAYBE' });
      return answer(res, {
        verdict: 'ALLOW',
        requestId: req.body.requestId,
        stage: req.body.stage,
        simulated: true,
      });
    };
    const before = fake.received.length;
    const shown = await clients.client().visibleTools(['a_tool', 'bad_tool', 'c_tool']);
    expect(shown).toEqual(['a_tool', 'c_tool']);
    // requests of this batch only (a request of the hung test before may still reach the fake late)
    const mine = new Set(['a_tool', 'bad_tool', 'c_tool']);
    const bodies = fake.received
      .slice(before)
      .map((r) => r.body)
      .filter((b) => mine.has(b.tool as string));
    expect(bodies).toHaveLength(3);
    const batchIds = new Set(bodies.map((b) => (b.visibilityBatch as { id: string }).id));
    expect(batchIds.size).toBe(1);
    for (const b of bodies) {
      expect(b).toMatchObject({ stage: 'action', args: {}, simulated: true, purpose: 'visibility' });
      expect((b.visibilityBatch as { size: number }).size).toBe(3);
    }
  });

  it('a caller abort hides every tool not decided yet', async () => {
    fake.handler = () => undefined;
    const ac = new AbortController();
    const p = clients.client({ timeoutMs: 5000 }).visibleTools(['a_tool', 'b_tool'], { signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    expect(await p).toEqual([]);
  });
});
