/**
 * Observers see every decision redacted and contained (src/core/observe.ts; CONTRACT.md section 5): no
 * permit, transformed args or content, or substitute; a throw or a rejection changes nothing.
 */
import { describe, expect, it } from 'vitest';
import { observe, redactForObserver } from '../../../src/core/observe.js';
import type { PolicyDecision } from '../../../src/decision.js';
import type { DecisionEvent } from '../../../src/options/pep.js';

const full: PolicyDecision = {
  verdict: 'WARN',
  stage: 'action',
  requestId: 'req-1',
  decisionId: 'dec-1',
  latches: ['l1'],
  permitId: 'eyJ.PERMIT.sig',
  transformedArgs: { secret: 'ARGS' },
  transformedContent: 'CONTENT',
  substitute: { result: 'RESULT' },
};

describe('redactForObserver', () => {
  it('drops permitId, transformedArgs, transformedContent and substitute; keeps the rest', () => {
    const r = redactForObserver(full);
    expect(r).toEqual({ verdict: 'WARN', stage: 'action', requestId: 'req-1', decisionId: 'dec-1', latches: ['l1'] });
    expect(JSON.stringify(r)).not.toMatch(/PERMIT|ARGS|CONTENT|RESULT/);
  });

  it('copies latches and synthesized, so an observer cannot change the decision', () => {
    const d: PolicyDecision = {
      verdict: 'BLOCK',
      stage: 'input',
      requestId: 'r',
      latches: ['a'],
      synthesized: { code: 'pdp_timeout', message: 'm', attempts: 1 },
    };
    const r = redactForObserver(d);
    r.latches?.push('b');
    if (r.synthesized) r.synthesized.code = 'aborted';
    expect(d.latches).toEqual(['a']);
    expect(d.synthesized?.code).toBe('pdp_timeout');
  });
});

describe('the observer redaction is an allow-list', () => {
  it('a decision with an unknown extra field never reaches an observer with it', () => {
    const d = { ...full, rawAnswer: 'SECRET-RAW', obligations: [{ id: 'SECRET-OB' }] } as PolicyDecision;
    const r = redactForObserver(d);
    expect(Object.keys(r)).not.toContain('rawAnswer');
    expect(Object.keys(r)).not.toContain('obligations');
    const events: DecisionEvent[] = [];
    observe((e) => events.push(e), { decision: d, attempts: 1 }, performance.now(), 'refund');
    expect(JSON.stringify(events)).not.toMatch(/SECRET/);
  });

  it('an unknown field inside synthesized is dropped too', () => {
    const d: PolicyDecision = {
      verdict: 'BLOCK',
      stage: 'input',
      requestId: 'r',
      synthesized: { code: 'pdp_status', message: 'm', attempts: 1, status: 401, body: 'SECRET' } as never,
    };
    expect(redactForObserver(d).synthesized).toEqual({ code: 'pdp_status', message: 'm', attempts: 1, status: 401 });
  });

  it('every listed field is carried: verdict, stage, ids, reason, latches, labels, escalation, simulated, interceptor', () => {
    const d: PolicyDecision = {
      verdict: 'ESCALATE',
      stage: 'action',
      requestId: 'r',
      decisionId: 'd',
      reason: 'why',
      latches: ['l'],
      sessionLabels: ['asked:money'],
      escalationId: 'e',
      simulated: true,
      interceptor: 'i',
    };
    expect(redactForObserver(d)).toEqual(d);
  });
});

describe('observe', () => {
  it('calls the observer once with stage, requestId, the redacted decision, attempts, tool and interceptor', () => {
    const events: DecisionEvent[] = [];
    const d = observe(
      (e) => events.push(e),
      { decision: { ...full, interceptor: 'trace' }, attempts: 2 },
      performance.now(),
      'refund',
    );
    expect(d.permitId).toBe(full.permitId); // the caller's decision is returned whole
    expect(events).toHaveLength(1);
    const [e] = events;
    expect(e).toMatchObject({ stage: 'action', requestId: 'req-1', attempts: 2, tool: 'refund', interceptor: 'trace' });
    expect(e?.latencyMs).toBeGreaterThanOrEqual(0);
    expect(JSON.stringify(e)).not.toMatch(/PERMIT|ARGS|CONTENT|RESULT/);
  });

  it('an observer that throws, or rejects, is contained: the decision comes back unchanged', async () => {
    const outcome = { decision: full, attempts: 1 };
    expect(
      observe(
        () => {
          throw new Error('observer bug');
        },
        outcome,
        0,
        undefined,
      ),
    ).toBe(full);
    let unhandled = 0;
    const onUnhandled = (): void => {
      unhandled++;
    };
    process.on('unhandledRejection', onUnhandled);
    try {
      expect(observe((async () => Promise.reject(new Error('async bug'))) as never, outcome, 0, undefined)).toBe(full);
      await new Promise((r) => setTimeout(r, 10));
      expect(unhandled).toBe(0);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('no observer: the decision is returned', () => {
    expect(observe(undefined, { decision: full, attempts: 0 }, 0, undefined)).toBe(full);
  });
});
