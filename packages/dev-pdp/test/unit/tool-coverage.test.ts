/**
 * Known tools (issue 43, item 7): a policy that names a tool the agent does not have fails open
 * (`delete_files` loads, `delete_file` is allowed). Given the agent's tools, checkToolCoverage lists
 * the latches that can never match one, and the tools no latch covers.
 */
import { describe, expect, test } from 'vitest';
import { compilePolicy, type LatchSpec } from '../../src/policy.js';
import { checkToolCoverage } from '../../src/tool-coverage.js';

function policyOf(latches: LatchSpec[], toolGroups?: Record<string, string[]>) {
  return compilePolicy({ agents: ['a'], ...(toolGroups ? { toolGroups } : {}), latches });
}

const TOOLS = ['delete_file', 'read_file', 'Send Email', 'refund_payment'];

describe('latches that can never match a known tool', () => {
  test('a latch naming delete_files, for an agent with delete_file, is listed with its index and pattern', () => {
    const p = policyOf([
      { id: 'ok', stage: 'action', tool: 'read_file', verdict: 'ALLOW' },
      { id: 'typo', stage: 'action', tool: 'delete_files', verdict: 'BLOCK' },
    ]);
    expect(checkToolCoverage(p, TOOLS).unmatched).toEqual([{ latch: 'typo', index: 1, tool: 'delete_files' }]);
  });

  test('globs and groups match normalized names; a group none of whose globs matches is listed', () => {
    const p = policyOf(
      [
        { id: 'glob', stage: 'action', tool: 'refund_*', verdict: 'ESCALATE' },
        { id: 'mail', stage: 'action', tool: '@mail', verdict: 'WARN' },
        { id: 'bank', stage: 'action', tool: '@bank', verdict: 'BLOCK' },
        { id: 'egress', stage: 'context_egress', tool: '*read_email*', content: 'x', verdict: 'BLOCK' },
      ],
      { mail: ['send_email'], bank: ['bank_*'] },
    );
    expect(checkToolCoverage(p, TOOLS).unmatched.map((u) => u.latch)).toEqual(['bank', 'egress']);
  });

  test('a latch without tool is never listed (it applies to every tool)', () => {
    const p = policyOf([{ id: 'any', stage: 'action', when: { 'args.x': { eq: 1 } }, verdict: 'BLOCK' }]);
    expect(checkToolCoverage(p, TOOLS).unmatched).toEqual([]);
  });

  test('an audit latch with a typo is listed too', () => {
    const p = policyOf([{ id: 'shadow', stage: 'action', tool: 'delete_files', verdict: 'BLOCK', mode: 'audit' }]);
    expect(checkToolCoverage(p, TOOLS).unmatched.map((u) => u.latch)).toEqual(['shadow']);
  });
});

describe('known tools no latch covers', () => {
  test('covered: an enforced action latch whose tool matches; each uncovered tool once, normalized, in order', () => {
    const p = policyOf([
      { id: 'read', stage: 'action', tool: 'read_*', verdict: 'ALLOW' },
      { id: 'egress', stage: 'context_egress', tool: 'send_email', content: 'x', verdict: 'BLOCK' },
      { id: 'shadow', stage: 'action', tool: 'refund_payment', verdict: 'BLOCK', mode: 'audit' },
      { id: 'any', stage: 'action', verdict: 'WARN', when: { 'args.x': { eq: 1 } } },
    ]);
    expect(checkToolCoverage(p, [...TOOLS, 'delete-file']).uncovered).toEqual([
      'delete_file',
      'send_email',
      'refund_payment',
    ]);
  });

  test('names that are not tool names are a TypeError with option knownTools', () => {
    const p = policyOf([]);
    for (const bad of [['!!!'], ['x'.repeat(257)], [3], 'a,b']) {
      let caught: unknown;
      try {
        checkToolCoverage(p, bad as string[]);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(TypeError);
      expect((caught as { option?: string }).option).toBe('knownTools');
    }
  });
});
