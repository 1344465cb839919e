/**
 * The exchange's outcomes (src/core/exchange.ts): a failure becomes a synthesized BLOCK with its code,
 * message, attempts and status; `withSent` carries the args that were sent and, after an interceptor's
 * `proceedWith`, makes an ALLOW or WARN carry the replacement (docs/interceptors.md: what continues is
 * what was decided), never a BLOCK or ESCALATE. The wire itself is tested in test/contract/.
 */
import { describe, expect, it } from 'vitest';
import { blockOutcome, failedOutcome, type Outcome, withSent } from '../../../src/core/exchange.js';
import { prepare, replaceRunningValue } from '../../../src/core/request.js';
import type { PolicyDecision, Verdict } from '../../../src/decision.js';

const call = { signal: undefined, session: 's', simulated: false, tool: undefined };
const decision = (verdict: Verdict, stage: PolicyDecision['stage'], extra: Partial<PolicyDecision> = {}): Outcome => ({
  decision: { verdict, stage, requestId: 'r', ...extra },
  attempts: 1,
});

describe('blockOutcome and failedOutcome', () => {
  it('a synthesized BLOCK with the code, message, attempts and status', () => {
    const o = blockOutcome({ stage: 'input', requestId: 'r-1' }, 'pdp_status', 'status 503', 3, 503);
    expect(o.attempts).toBe(3);
    expect(o.decision).toMatchObject({
      verdict: 'BLOCK',
      stage: 'input',
      requestId: 'r-1',
      synthesized: { code: 'pdp_status', message: 'status 503', attempts: 3 },
    });
  });

  it("an exchange's failure keeps its code and attempts", () => {
    const p = prepare('output', { content: 'x' }, call, 'a', 'r-2');
    const o = failedOutcome(p.sent, { ok: false, code: 'pdp_timeout', message: 'deadline', attempts: 2 });
    expect([o.decision.verdict, o.decision.synthesized?.code, o.attempts, o.decision.requestId]).toEqual([
      'BLOCK',
      'pdp_timeout',
      2,
      'r-2',
    ]);
  });
});

describe('withSent', () => {
  it('carries the args that were sent', () => {
    const p = prepare('action', { tool: 't', args: { a: 1 } }, call, 'a', 'r');
    expect(withSent(p, decision('ALLOW', 'action')).args).toEqual({ a: 1 });
  });

  it('without a replacement, an ALLOW carries no transformed value', () => {
    const p = prepare('action', { tool: 't', args: { a: 1 } }, call, 'a', 'r');
    expect(withSent(p, decision('ALLOW', 'action')).decision.transformedArgs).toBeUndefined();
  });

  it.each(['ALLOW', 'WARN'] as const)('after proceedWith, %s carries the replaced args', (verdict) => {
    const p = prepare('action', { tool: 't', args: { amount: 900 } }, call, 'a', 'r');
    replaceRunningValue(p, { args: { ok: true, args: { amount: 10 } } });
    expect(withSent(p, decision(verdict, 'action')).decision.transformedArgs).toEqual({ amount: 10 });
  });

  it("after proceedWith, the PDP's own transform of the replacement wins", () => {
    const p = prepare('action', { tool: 't', args: { amount: 900 } }, call, 'a', 'r');
    replaceRunningValue(p, { args: { ok: true, args: { amount: 10 } } });
    const o = withSent(p, decision('WARN', 'action', { transformedArgs: { amount: 5 } }));
    expect(o.decision.transformedArgs).toEqual({ amount: 5 });
  });

  it('after proceedWith on a text stage, ALLOW carries the replaced content', () => {
    const p = prepare('output', { content: 'raw' }, call, 'a', 'r');
    replaceRunningValue(p, { content: 'clean' });
    expect(withSent(p, decision('ALLOW', 'output')).decision.transformedContent).toBe('clean');
  });

  it.each(['BLOCK', 'ESCALATE'] as const)('%s never carries a replacement', (verdict) => {
    const p = prepare('output', { content: 'raw' }, call, 'a', 'r');
    replaceRunningValue(p, { content: 'clean' });
    expect(withSent(p, decision(verdict, 'output')).decision.transformedContent).toBeUndefined();
  });
});
