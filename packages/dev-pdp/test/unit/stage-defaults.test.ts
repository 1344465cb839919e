/** A policy's `default` per stage: the verdict when no enforced latch engaged at that stage. */
import { describe, expect, test } from 'vitest';
import { DEFAULT_BLOCK_REASON, evaluatePolicy } from '../../src/evaluate.js';
import { compilePolicy, InvalidPolicyError, type LatchSpec } from '../../src/policy.js';

const ALLOW_DELETE: LatchSpec = { id: 'delete-ok', stage: 'action', tool: 'delete_files', verdict: 'ALLOW' };

function policy(defaults: unknown, ...latches: LatchSpec[]) {
  return compilePolicy({ agents: ['a'], ...(defaults !== undefined ? { default: defaults } : {}), latches });
}

describe('default: the verdict of a stage where no latch engaged', () => {
  test('a default BLOCK at the action stage blocks a tool no latch names (delete_file vs delete_files)', () => {
    const p = policy({ action: 'BLOCK' }, ALLOW_DELETE);
    const out = evaluatePolicy(p, { stage: 'action', tool: 'delete_file', args: {} });
    expect(out).toEqual({ verdict: 'BLOCK', reason: DEFAULT_BLOCK_REASON, latches: [] });
  });

  test('a tool a latch names gets that latch verdict, not the default', () => {
    const p = policy({ action: 'BLOCK' }, ALLOW_DELETE);
    expect(evaluatePolicy(p, { stage: 'action', tool: 'delete_files', args: {} })).toMatchObject({
      verdict: 'ALLOW',
      latches: ['delete-ok'],
    });
  });

  test('without default, or with a default of ALLOW, a stage where no latch engaged allows (as before)', () => {
    for (const defaults of [undefined, { action: 'ALLOW' }]) {
      const out = evaluatePolicy(policy(defaults, ALLOW_DELETE), { stage: 'action', tool: 'delete_file', args: {} });
      expect(out).toEqual({ verdict: 'ALLOW', latches: [] });
    }
  });

  test('a default applies to its stage alone', () => {
    const p = policy({ action: 'BLOCK' });
    expect(evaluatePolicy(p, { stage: 'input', content: 'hello' }).verdict).toBe('ALLOW');
    const q = policy({ output: 'BLOCK' });
    expect(evaluatePolicy(q, { stage: 'output', content: 'hello' }).verdict).toBe('BLOCK');
    expect(evaluatePolicy(q, { stage: 'action', tool: 'x', args: {} }).verdict).toBe('ALLOW');
  });

  test('an audit latch that engaged does not count: the default still decides, the audit is recorded', () => {
    const p = policy({ action: 'BLOCK' }, { ...ALLOW_DELETE, tool: 'delete_*', mode: 'audit' });
    const out = evaluatePolicy(p, { stage: 'action', tool: 'delete_file', args: {} });
    expect(out.verdict).toBe('BLOCK');
    expect(out.audit).toEqual([{ latch: 'delete-ok', verdict: 'ALLOW' }]);
  });

  test('a latch whose condition does not hold did not engage: the default decides', () => {
    const p = policy({ action: 'BLOCK' }, { ...ALLOW_DELETE, when: { 'args.dryRun': { eq: true } } });
    expect(evaluatePolicy(p, { stage: 'action', tool: 'delete_files', args: { dryRun: false } }).verdict).toBe('BLOCK');
    expect(evaluatePolicy(p, { stage: 'action', tool: 'delete_files', args: { dryRun: true } }).verdict).toBe('ALLOW');
  });

  test.each([
    [{ action: 'WARN' }, 'default.action'],
    [{ action: 'ESCALATE' }, 'default.action'],
    [{ nowhere: 'BLOCK' }, 'default'],
    ['BLOCK', 'default'],
  ])('a default of %j is refused at %s (ALLOW or BLOCK, per known stage)', (defaults, path) => {
    let caught: unknown;
    try {
      policy(defaults);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InvalidPolicyError);
    expect((caught as InvalidPolicyError).issues.map((i) => i.path)).toContain(path);
  });
});
