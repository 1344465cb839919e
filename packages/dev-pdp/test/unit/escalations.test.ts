import { describe, expect, it } from 'vitest';
import { EscalationBook, EscalationError, type ResolvedEscalation } from '../../src/escalations.js';

const SUBJECT = { agentId: 'a', session: 's', stage: 'action', tool: 'refund', hash: 'h1' };
const DETAILS = { requestId: 'r1', latches: ['l1'], reason: 'why', args: { amount: 1 } };

function book(now: { t: number }, resolved: ResolvedEscalation[] = []) {
  return new EscalationBook({
    approvalTtlMs: 1000,
    escalationTtlMs: 5000,
    now: () => now.t,
    onResolve: (r) => resolved.push(r),
  });
}

describe('EscalationBook', () => {
  it('an approval grants the identical subject once; another act_hash gets nothing', () => {
    const now = { t: 0 };
    const b = book(now);
    const id = b.open(SUBJECT, DETAILS);
    b.resolve(id, 'approve', 'console', 'ok');
    expect(b.take({ ...SUBJECT, hash: 'h2' }, true)).toBeUndefined();
    expect(b.take({ ...SUBJECT, session: 'other' }, true)).toBeUndefined();
    expect(b.take(SUBJECT, false)).toBe('approve'); // a simulated look does not use it
    expect(b.take(SUBJECT, true)).toBe('approve');
    expect(b.take(SUBJECT, true)).toBeUndefined();
  });

  it('an approval expires approvalTtl after it was given', () => {
    const now = { t: 0 };
    const b = book(now);
    b.resolve(b.open(SUBJECT, DETAILS), 'approve');
    now.t = 1000;
    expect(b.take(SUBJECT, true)).toBeUndefined();
  });

  it('an escalation open for escalationTtl is denied: outcome expired, by ttl, and the next identical call is a deny', () => {
    const now = { t: 0 };
    const resolved: ResolvedEscalation[] = [];
    const b = book(now, resolved);
    const id = b.open(SUBJECT, DETAILS);
    now.t = 4999;
    expect(b.pending().map((p) => p.id)).toEqual([id]);
    now.t = 5000;
    expect(b.pending()).toEqual([]);
    expect(resolved).toMatchObject([{ outcome: 'expired', by: 'ttl', escalation: { id } }]);
    expect(b.take(SUBJECT, true)).toBe('deny');
    expect(() => b.resolve(id, 'approve')).toThrow(EscalationError);
  });

  it('pending() lists newest first with what the reviewer needs; labels are recorded', () => {
    const now = { t: 0 };
    const b = book(now);
    const first = b.open(SUBJECT, DETAILS);
    now.t = 10;
    const second = b.open({ ...SUBJECT, hash: 'h2' }, { ...DETAILS, requestId: 'r2' });
    b.label(second, ['untrusted_web']);
    expect(b.pending()).toMatchObject([
      { id: second, openedAt: 10, labels: ['untrusted_web'], requestId: 'r2' },
      { id: first, openedAt: 0, reason: 'why', args: { amount: 1 }, latches: ['l1'] },
    ]);
  });

  it('a second resolution is escalation_already_resolved, an unknown id escalation_not_found; the note is kept', () => {
    const resolved: ResolvedEscalation[] = [];
    const b = book({ t: 0 }, resolved);
    const id = b.open(SUBJECT, DETAILS);
    b.resolve(id, 'deny', 'api', 'no');
    expect(resolved).toMatchObject([{ outcome: 'deny', by: 'api', note: 'no' }]);
    expect(() => b.resolve(id, 'deny')).toThrow(expect.objectContaining({ code: 'escalation_already_resolved' }));
    expect(() => b.resolve('esc_nope', 'deny')).toThrow(expect.objectContaining({ code: 'escalation_not_found' }));
  });

  it('an observer that throws changes nothing', () => {
    const b = new EscalationBook({
      approvalTtlMs: 1000,
      escalationTtlMs: 1000,
      onOpen: () => {
        throw new Error('x');
      },
      onResolve: () => {
        throw new Error('y');
      },
    });
    const id = b.open(SUBJECT, DETAILS);
    b.resolve(id, 'approve');
    expect(b.take(SUBJECT, true)).toBe('approve');
  });
});
