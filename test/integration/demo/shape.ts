/** What every demo result must look like, for the demo tests. */
import { expect } from 'vitest';
import type { DemoResult } from '../../../demo/replay.js';

export const STAGES = ['input', 'context_egress', 'output', 'delivery', 'action'];
export const VERDICTS = ['ALLOW', 'WARN', 'BLOCK', 'ESCALATE'];
/** Every fail-closed check, in the order the demo runs them. */
export const FAIL_CLOSED = [
  'permit_replayed',
  'permit_args_mismatch',
  'pep_permit_mismatch',
  ...STAGES.map((s) => `hang_${s}`),
  ...STAGES.map((s) => `down_${s}`),
  'nothing_executed_without_pdp',
  'evidence_chain',
];

/** The JSON fields the CLI promises (`--json`), and counts that add up. */
export function checkShape(result: DemoResult): void {
  expect(Object.keys(result).sort()).toEqual(['cases', 'failClosed', 'summary']);
  for (const c of result.cases) {
    expect(Object.keys(c).sort()).toEqual(['code', 'executed', 'id', 'label', 'latches', 'stage', 'verdict']);
    expect(STAGES).toContain(c.stage);
    expect(['benign', 'attack', 'sensitive']).toContain(c.label);
    expect(VERDICTS).toContain(c.verdict);
    expect(c.code === null || typeof c.code === 'string').toBe(true);
    expect(Array.isArray(c.latches)).toBe(true);
    expect(typeof c.executed).toBe('boolean');
  }
  const { summary } = result;
  expect(Object.keys(summary).sort()).toEqual(
    [
      'byLabel',
      'byStage',
      'byVerdict',
      'durationMs',
      'evidence',
      'executed',
      'interceptor',
      'malformed',
      'permits',
      'replayMs',
      'total',
    ].sort(),
  );
  expect(Object.keys(summary.byStage).sort()).toEqual([...STAGES].sort());
  expect(Object.keys(summary.byVerdict).sort()).toEqual([...VERDICTS].sort());
  expect(Object.keys(summary.byLabel).sort()).toEqual(['attack', 'benign', 'sensitive']);
  const total = result.cases.length;
  expect(summary.total).toBe(total);
  expect(Object.values(summary.byVerdict).reduce((a, b) => a + b, 0)).toBe(total);
  expect(Object.values(summary.byStage).reduce((a, s) => a + s.total, 0)).toBe(total);
  const { attack, benign, sensitive } = summary.byLabel;
  expect(attack.stopped + attack.missed).toBe(attack.total);
  expect(benign.passed + benign.stopped).toBe(benign.total);
  expect(sensitive.redacted + sensitive.blocked + sensitive.passed).toBe(sensitive.total);
  expect(attack.total + benign.total + sensitive.total).toBe(total);
  for (const f of result.failClosed) {
    expect(typeof f.check).toBe('string');
    expect(typeof f.passed).toBe('boolean');
  }
}
