/**
 * The one list of stages, verdicts and fail-closed codes, and the synthesized BLOCK (src/decision.ts;
 * CONTRACT.md section 2).
 */
import { describe, expect, it } from 'vitest';
import {
  FAIL_CLOSED_CODES,
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
