import { describe, expect, it } from 'vitest';
import {
  createMemoryEscalationStore,
  EscalationBook,
  EscalationError,
  type EscalationLimits,
  type ResolvedEscalation,
} from '../../src/escalations.js';

const SUBJECT = { agentId: 'a', session: 's', stage: 'action', tool: 'refund', hash: 'h1' };
const DETAILS = { requestId: 'r1', latches: ['l1'], reason: 'why', args: { amount: 1 } };
const LIMITS: EscalationLimits = { approvalTtlMs: 1000, escalationTtlMs: 5000, maxPerSession: 20, maxEntries: 1000 };

function book(now: { t: number }, resolved: ResolvedEscalation[] = [], limits: Partial<EscalationLimits> = {}) {
  return new EscalationBook({
    limits: { ...LIMITS, ...limits },
    now: () => now.t,
    onResolve: (r) => resolved.push(r),
  });
}

describe('EscalationBook', () => {
  it('an approval grants the identical subject once; another act_hash gets nothing', async () => {
    const now = { t: 0 };
    const b = book(now);
    const id = await b.open(SUBJECT, DETAILS);
    await b.resolve(id, 'approve', 'console', 'ok');
    expect(await b.take({ ...SUBJECT, hash: 'h2' }, true)).toBeUndefined();
    expect(await b.take({ ...SUBJECT, session: 'other' }, true)).toBeUndefined();
    expect(await b.take(SUBJECT, false)).toMatchObject({ resolution: 'approve', latches: ['l1'] }); // a look does not use it
    expect(await b.take(SUBJECT, true)).toMatchObject({ resolution: 'approve' });
    expect(await b.take(SUBJECT, true)).toBeUndefined();
  });

  it('an approval is used once even by concurrent takers', async () => {
    const b = book({ t: 0 });
    await b.resolve(await b.open(SUBJECT, DETAILS), 'approve');
    const taken = await Promise.all(Array.from({ length: 8 }, () => b.take(SUBJECT, true)));
    expect(taken.filter((w) => w !== undefined)).toHaveLength(1);
  });

  it('a resolution given back waits again for its request', async () => {
    const b = book({ t: 0 });
    await b.resolve(await b.open(SUBJECT, DETAILS), 'approve');
    const w = await b.take(SUBJECT, true);
    await b.giveBack(SUBJECT, w as NonNullable<typeof w>);
    expect(await b.take(SUBJECT, true)).toMatchObject({ resolution: 'approve' });
  });

  it('one escalation per identical pending request: the same subject reuses the open one', async () => {
    const opened: string[] = [];
    const b = new EscalationBook({ limits: LIMITS, onOpen: (e) => opened.push(e.id) });
    const first = await b.open(SUBJECT, DETAILS);
    expect(await b.open(SUBJECT, { ...DETAILS, requestId: 'r2' })).toBe(first);
    expect(await b.open({ ...SUBJECT, hash: 'h2' }, DETAILS)).not.toBe(first);
    expect(opened).toHaveLength(2);
    await b.resolve(first, 'deny');
    expect(await b.open(SUBJECT, DETAILS)).not.toBe(first); // resolved: a new one opens
  });

  it('more than maxPerSession open escalations in one session is too_many_escalations; another session is not limited', async () => {
    const b = book({ t: 0 }, [], { maxPerSession: 2 });
    await b.open({ ...SUBJECT, hash: 'a' }, DETAILS);
    await b.open({ ...SUBJECT, hash: 'b' }, DETAILS);
    await expect(b.open({ ...SUBJECT, hash: 'c' }, DETAILS)).rejects.toMatchObject({ code: 'too_many_escalations' });
    await expect(b.open({ ...SUBJECT, session: 's2', hash: 'c' }, DETAILS)).resolves.toMatch(/^esc_/);
  });

  it('the memory store is bounded: past maxEntries the oldest is dropped and counted', async () => {
    const store = createMemoryEscalationStore({ ...LIMITS, maxEntries: 3, maxPerSession: 100 });
    const b = new EscalationBook({ limits: LIMITS, store });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await b.open({ ...SUBJECT, hash: `h${i}` }, DETAILS));
    expect((await b.pending()).map((p) => p.id).sort()).toEqual(ids.slice(2).sort());
    expect(store.dropped()).toBeGreaterThanOrEqual(2);
    expect(() => b.resolve(ids[0] as string, 'approve')).toThrow(EscalationError);
  });

  it('status: pending, then approved / denied / expired; unknown is undefined', async () => {
    const now = { t: 0 };
    const b = book(now);
    const a = await b.open({ ...SUBJECT, hash: 'a' }, DETAILS);
    const d = await b.open({ ...SUBJECT, hash: 'd' }, DETAILS);
    expect(await b.status(a)).toBe('pending');
    await b.resolve(a, 'approve');
    await b.resolve(d, 'deny');
    const e = await b.open({ ...SUBJECT, hash: 'e' }, DETAILS);
    now.t = 5000;
    expect([await b.status(a), await b.status(d), await b.status(e)]).toEqual(['approved', 'denied', 'expired']);
    expect(await b.status('esc_nope')).toBeUndefined();
  });

  it('an approval expires approvalTtl after it was given', async () => {
    const now = { t: 0 };
    const b = book(now);
    await b.resolve(await b.open(SUBJECT, DETAILS), 'approve');
    now.t = 1000;
    expect(await b.take(SUBJECT, true)).toBeUndefined();
  });

  it('an escalation open for escalationTtl is denied: outcome expired, by ttl, and the next identical call is a deny', async () => {
    const now = { t: 0 };
    const resolved: ResolvedEscalation[] = [];
    const b = book(now, resolved);
    const id = await b.open(SUBJECT, DETAILS);
    now.t = 4999;
    expect((await b.pending()).map((p) => p.id)).toEqual([id]);
    now.t = 5000;
    expect(await b.pending()).toEqual([]);
    expect(resolved).toMatchObject([{ outcome: 'expired', by: 'ttl', escalation: { id } }]);
    expect(await b.take(SUBJECT, true)).toMatchObject({ resolution: 'deny' });
    expect(() => b.resolve(id, 'approve')).toThrow(EscalationError);
  });

  it('pending() lists newest first with what the reviewer needs', async () => {
    const now = { t: 0 };
    const b = book(now);
    const first = await b.open(SUBJECT, DETAILS);
    now.t = 10;
    const second = await b.open({ ...SUBJECT, hash: 'h2' }, { ...DETAILS, requestId: 'r2', labels: ['untrusted_web'] });
    expect(await b.pending()).toMatchObject([
      { id: second, openedAt: 10, labels: ['untrusted_web'], requestId: 'r2' },
      { id: first, openedAt: 0, reason: 'why', args: { amount: 1 }, latches: ['l1'] },
    ]);
  });

  it('a second resolution is escalation_already_resolved, an unknown id escalation_not_found; the note is kept', async () => {
    const resolved: ResolvedEscalation[] = [];
    const b = book({ t: 0 }, resolved);
    const id = await b.open(SUBJECT, DETAILS);
    await b.resolve(id, 'deny', 'api', 'no');
    expect(resolved).toMatchObject([{ outcome: 'deny', by: 'api', note: 'no' }]);
    expect(() => b.resolve(id, 'deny')).toThrow(expect.objectContaining({ code: 'escalation_already_resolved' }));
    expect(() => b.resolve('esc_nope', 'deny')).toThrow(expect.objectContaining({ code: 'escalation_not_found' }));
  });

  it('an observer that throws changes nothing', async () => {
    const b = new EscalationBook({
      limits: LIMITS,
      onOpen: () => {
        throw new Error('x');
      },
      onResolve: () => {
        throw new Error('y');
      },
    });
    const id = await b.open(SUBJECT, DETAILS);
    await b.resolve(id, 'approve');
    expect(await b.take(SUBJECT, true)).toMatchObject({ resolution: 'approve' });
  });
});
