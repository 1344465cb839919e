/**
 * The one list of stages, verdicts and fail-closed codes, and the synthesized BLOCK (src/decision.ts;
 * CONTRACT.md section 2).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  FAIL_CLOSED_CODES,
  type FailClosedCode,
  isStage,
  isTextStage,
  STAGES,
  synthesizeBlock,
  TEXT_STAGES,
  VERDICTS,
} from '../../src/decision.js';

describe('STAGES, VERDICTS, FAIL_CLOSED_CODES', () => {
  it('are the contract’s, frozen', () => {
    expect(VERDICTS).toEqual(['ALLOW', 'WARN', 'BLOCK', 'ESCALATE']);
    expect(TEXT_STAGES).toEqual(['input', 'context_egress', 'output', 'delivery']);
    expect(STAGES).toEqual([...TEXT_STAGES, 'action']);
    expect(new Set(FAIL_CLOSED_CODES)).toEqual(
      new Set([
        'pdp_unreachable',
        'pdp_timeout',
        'pdp_status',
        'invalid_response',
        'ambiguous_decision',
        'invalid_request',
        'aborted',
        'permit_invalid',
        'simulated',
        'interceptor_failed',
        'tool_changed',
        'session_state_lost',
      ]),
    );
    for (const list of [VERDICTS, TEXT_STAGES, STAGES, FAIL_CLOSED_CODES]) expect(Object.isFrozen(list)).toBe(true);
  });

  it('isStage and isTextStage agree with the lists, and nothing else passes', () => {
    for (const s of STAGES) expect(isStage(s)).toBe(true);
    for (const s of TEXT_STAGES) expect(isTextStage(s)).toBe(true);
    expect(isTextStage('action')).toBe(false);
    for (const v of ['Input', 'tool', '', undefined, 0]) expect(isStage(v)).toBe(false);
  });
});

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Every `.ts` file under `dir`, as its text. */
function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => readFileSync(join(ROOT, dir, f), 'utf8'));
}

/** The calls that make up a BLOCK, each with the code literal in its code position. */
const SYNTHESIS =
  /(?:synthesizeBlock\([^,()]+,[^,()]+,|blockOutcome\([^,()]+,|refuseFrom\([^,()]+,[^,()]+,|refuse\([^,()]+,\s*\{[^}]*\},|new AttemptFailure\(|\bfailed\()\s*'([a-z_]+)'/g;

describe('one list of fail-closed codes', () => {
  it('the FailClosedCode type is derived from FAIL_CLOSED_CODES, so the two cannot differ', () => {
    expectTypeOf<FailClosedCode>().toEqualTypeOf<(typeof FAIL_CLOSED_CODES)[number]>();
  });

  it('every code a BLOCK is synthesized with in src/ is in FAIL_CLOSED_CODES', () => {
    const used = new Set<string>();
    for (const text of sources('src')) for (const m of text.matchAll(SYNTHESIS)) used.add(m[1] as string);
    // The scan finds the codes of the client, the transport and the enforcement layer (it cannot be vacuous).
    for (const code of ['pdp_unreachable', 'pdp_timeout', 'invalid_request', 'permit_invalid']) {
      expect(used).toContain(code);
    }
    for (const code of used) expect(FAIL_CLOSED_CODES).toContain(code);
  });

  it('docs/fail-closed.md has one row for every code, and none for another', () => {
    const doc = readFileSync(join(ROOT, 'docs/fail-closed.md'), 'utf8');
    const rows = [...doc.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]);
    expect(new Set(rows)).toEqual(new Set(FAIL_CLOSED_CODES));
    expect(rows).toHaveLength(FAIL_CLOSED_CODES.length);
  });
});

describe('synthesizeBlock', () => {
  it('is always a BLOCK carrying synthesized { code, message, attempts } and the message as reason', () => {
    const d = synthesizeBlock('action', 'req-1', 'pdp_timeout', 'deadline', 3);
    expect(d).toEqual({
      verdict: 'BLOCK',
      stage: 'action',
      requestId: 'req-1',
      reason: 'deadline',
      synthesized: { code: 'pdp_timeout', message: 'deadline', attempts: 3 },
    });
  });

  it('carries the status only when given', () => {
    expect(synthesizeBlock('input', 'r', 'pdp_status', 'HTTP 503', 1, 503).synthesized?.status).toBe(503);
    expect(Object.hasOwn(synthesizeBlock('input', 'r', 'aborted', 'x', 0).synthesized ?? {}, 'status')).toBe(false);
  });
});
