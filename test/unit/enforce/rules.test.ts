/**
 * The enforcement rules as pure functions (src/enforce/rules.ts): what a decision lets go on, and with
 * what (docs/adapters.md, docs/interceptors.md).
 */
import { describe, expect, it } from 'vitest';
import type { PolicyDecision } from '../../../src/decision.js';
import { actionRule, textRule } from '../../../src/enforce/rules.js';

const d = (over: Partial<PolicyDecision>): PolicyDecision => ({
  verdict: 'ALLOW',
  stage: 'action',
  requestId: 'r1',
  ...over,
});

describe('actionRule: the args that run', () => {
  it('ALLOW runs the args sent', () => {
    expect(actionRule(d({}), { a: 1 })).toEqual({ kind: 'go', value: { a: 1 } });
  });
  it("WARN runs the decision's transformedArgs, never the args sent", () => {
    expect(actionRule(d({ verdict: 'WARN', transformedArgs: { a: 2 } }), { a: 1 })).toEqual({
      kind: 'go',
      value: { a: 2 },
    });
  });
  it('BLOCK and ESCALATE refuse, even with transformedArgs', () => {
    for (const verdict of ['BLOCK', 'ESCALATE'] as const) {
      expect(actionRule(d({ verdict, transformedArgs: { a: 2 } }), { a: 1 })).toEqual({ kind: 'refuse' });
    }
  });
  it('a simulated ALLOW or WARN is never enforced', () => {
    expect(actionRule(d({ simulated: true }), { a: 1 })).toEqual({ kind: 'simulated' });
    expect(actionRule(d({ verdict: 'WARN', simulated: true, transformedArgs: {} }), {})).toEqual({ kind: 'simulated' });
  });
  it('a simulated BLOCK is a refusal (the verdict comes first)', () => {
    expect(actionRule(d({ verdict: 'BLOCK', simulated: true }), {})).toEqual({ kind: 'refuse' });
  });
});

describe('textRule: the text that continues', () => {
  it('ALLOW passes the original', () => {
    expect(textRule(d({ stage: 'output' }), 'hi')).toEqual({ kind: 'go', value: 'hi' });
  });
  it("WARN (or an interceptor's replacement) passes transformedContent, even when it is empty", () => {
    expect(textRule(d({ verdict: 'WARN', stage: 'output', transformedContent: '[x]' }), 'hi')).toEqual({
      kind: 'go',
      value: '[x]',
    });
    expect(textRule(d({ stage: 'output', transformedContent: '' }), 'hi')).toEqual({ kind: 'go', value: '' });
  });
  it('BLOCK and ESCALATE refuse; a simulated decision is never enforced', () => {
    expect(textRule(d({ verdict: 'BLOCK', stage: 'input' }), 'x').kind).toBe('refuse');
    expect(textRule(d({ verdict: 'ESCALATE', stage: 'input' }), 'x').kind).toBe('refuse');
    expect(textRule(d({ stage: 'input', simulated: true }), 'x').kind).toBe('simulated');
  });
});
