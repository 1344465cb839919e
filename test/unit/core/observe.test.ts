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
