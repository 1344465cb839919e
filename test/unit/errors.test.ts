/** The enforcement errors and the three toolMessage forms (CONTRACT.md section 5). */
import { describe, expect, it } from 'vitest';
import { synthesizeBlock } from '../../src/decision.js';
import {
  PolicyBlockedError,
  type PolicyDecision,
  PolicyEnforcementError,
  PolicyEscalatedError,
  toolMessage,
} from '../../src/index.js';

const pdpBlock: PolicyDecision = { verdict: 'BLOCK', stage: 'action', requestId: 'r1', reason: 'no refunds today' };
const outage = synthesizeBlock('action', 'r2', 'pdp_timeout', 'PDP decision deadline passed', 3);
const hold: PolicyDecision = {
  verdict: 'ESCALATE',
  stage: 'action',
  requestId: 'r3',
  reason: 'over 500',
  escalationId: 'e1',
};

describe('toolMessage: a denial, an outage and a hold read differently', () => {
  it('tools', () => {
    expect(toolMessage(pdpBlock, 'refund_payment')).toBe(
      "ERROR: Tool 'refund_payment' denied by policy: no refunds today",
    );
    expect(toolMessage(outage, 'refund_payment')).toBe(
      "ERROR: Tool 'refund_payment' was not run: the policy check failed (pdp_timeout)",
    );
    expect(toolMessage(hold, 'refund_payment')).toBe("ERROR: Tool 'refund_payment' is held for human review: over 500");
  });

  it('text stages', () => {
    expect(toolMessage({ ...pdpBlock, stage: 'output' })).toBe('ERROR: output blocked by policy: no refunds today');
    expect(toolMessage(synthesizeBlock('input', 'r', 'pdp_unreachable', 'x', 1))).toBe(
      'ERROR: input was not checked: the policy check failed (pdp_unreachable)',
    );
    expect(toolMessage({ ...hold, stage: 'delivery' })).toBe('ERROR: delivery is held for human review: over 500');
  });

  it('an interceptor deny reads as a PDP BLOCK with its reason', () => {
    const d: PolicyDecision = {
      verdict: 'BLOCK',
      stage: 'action',
      requestId: 'r',
      reason: 'system paths',
      interceptor: 'n',
    };
    expect(toolMessage(d, 'read_file')).toBe("ERROR: Tool 'read_file' denied by policy: system paths");
  });
});

describe('PolicyEnforcementError', () => {
  it('is the base of both policy errors, with typed codes, the decision and the toolMessage', () => {
    const blocked = new PolicyBlockedError(pdpBlock, 'refund_payment');
    const failed = new PolicyBlockedError(outage, 'refund_payment');
    const held = new PolicyEscalatedError(hold, 'refund_payment');
    for (const e of [blocked, failed, held]) {
      expect(e).toBeInstanceOf(PolicyEnforcementError);
      expect(e).toBeInstanceOf(Error);
    }
    expect(blocked.code).toBe('blocked');
    expect(failed.code).toBe('pdp_timeout');
    expect(held.code).toBe('escalated');
    expect(held.escalationId).toBe('e1');
    expect(failed.toolMessage).toBe(toolMessage(outage, 'refund_payment'));
    expect(blocked.decision).toBe(pdpBlock);
    expect(blocked.requestId).toBe('r1');
    expect(blocked.message).toContain('r1');
  });
});
