/**
 * Enforceability (src/enforce.ts; CONTRACT.md section 3, rules 4 and 5): a schema-valid answer is a
 * decision only when it is unambiguous; otherwise `ambiguous_decision`.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { type SentRequest, toDecision } from '../../../src/core/enforceable.js';
import { AttemptFailure } from '../../../src/internal/failure.js';
import { actionHash } from '../../../src/permit/hash.js';
import type { AuthorizeResponse } from '../../../src/wire/agent-pep.js';
import { ARGS, createPermitKit, type PermitKit, TOOL } from '../../support/permits.js';

let kit: PermitKit;
beforeAll(async () => {
  kit = await createPermitKit();
});

const action: SentRequest = {
  stage: 'action',
  requestId: 'req-1',
  agentId: 'support-ai',
  session: 'sess_demo',
  simulated: false,
  tool: TOOL,
  args: { ...ARGS },
};
const text: SentRequest = {
  stage: 'input',
  requestId: 'req-1',
  agentId: 'support-ai',
  session: 'sess_demo',
  simulated: false,
};
const loose = { checkPermitBinding: false, requireEcho: false };
const bound = { checkPermitBinding: true, requireEcho: false };

/** The code toDecision fails with, or 'ok'. */
function codeOf(res: Record<string, unknown>, sent: SentRequest, enforce = loose, header?: string): string {
  try {
    toDecision(res as AuthorizeResponse, res, sent, header, enforce);
    return 'ok';
  } catch (e) {
    expect(e).toBeInstanceOf(AttemptFailure);
    return (e as AttemptFailure).code;
  }
}

describe('rule 4: fields stay in their place', () => {
  it.each<[string, Record<string, unknown>, SentRequest]>([
    ['an action ALLOW without a permit', { verdict: 'ALLOW' }, action],
    ['a permit on a BLOCK', { verdict: 'BLOCK', permitId: 'p' }, action],
    ['transformedArgs on an ALLOW', { verdict: 'ALLOW', permitId: 'p', transformedArgs: {} }, action],
    ['transformedContent on an action', { verdict: 'WARN', permitId: 'p', transformedContent: 'x' }, action],
    ['a text WARN without transformedContent', { verdict: 'WARN' }, text],
    ['a permit on a text stage', { verdict: 'ALLOW', permitId: 'p' }, text],
    ['transformedContent on a text ALLOW', { verdict: 'ALLOW', transformedContent: 'x' }, text],
    ['obligations', { verdict: 'ALLOW', obligations: [{ id: 'x' }] }, text],
    ['an error member', { verdict: 'ALLOW', error: 'x' }, text],
    ['a non-empty errors array', { verdict: 'ALLOW', errors: ['x'] }, text],
    ['a requestId echo that differs', { verdict: 'ALLOW', requestId: 'other' }, text],
    ['a stage echo that differs', { verdict: 'ALLOW', stage: 'output' }, text],
    ['simulated: true for a real request', { verdict: 'ALLOW', simulated: true }, text],
  ])('%s: ambiguous_decision', (_label, res, sent) => {
    expect(codeOf(res, sent)).toBe('ambiguous_decision');
  });

  it('an x-request-id header that differs, and no echo under requireEcho: ambiguous_decision', () => {
    expect(codeOf({ verdict: 'ALLOW' }, text, loose, 'other')).toBe('ambiguous_decision');
    expect(codeOf({ verdict: 'ALLOW' }, text, { checkPermitBinding: false, requireEcho: true })).toBe(
      'ambiguous_decision',
    );
    expect(codeOf({ verdict: 'ALLOW' }, text, { checkPermitBinding: false, requireEcho: true }, 'req-1')).toBe('ok');
  });

  it('a simulated request: a permit that comes anyway is dropped', () => {
    const d = toDecision(
      { verdict: 'ALLOW', permitId: 'p' } as AuthorizeResponse,
      {},
      { ...action, simulated: true },
      undefined,
      loose,
    );
    expect(d.permitId).toBeUndefined();
    expect(d.simulated).toBe(true);
  });
});

describe('rule 5: with permits configured, the permit decodes to the tool, args, agent and session asked', () => {
  it('a permit for exactly this action: the decision carries it', async () => {
    const permitId = await kit.mint();
    const d = toDecision({ verdict: 'ALLOW', permitId } as AuthorizeResponse, {}, action, undefined, bound);
    expect(d.permitId).toBe(permitId);
  });

  it.each<[string, Record<string, unknown>]>([
    ['another tool', { tool: 'delete_account' }],
    ['another agent', { sub: 'other-agent' }],
    ['another session', { sid: 'sess_other' }],
    ['other args', { act_hash: 'x'.repeat(43) }],
  ])('a permit for %s: ambiguous_decision', async (_label, claims) => {
    expect(codeOf({ verdict: 'ALLOW', permitId: await kit.mint({ claims }) }, action, bound)).toBe(
      'ambiguous_decision',
    );
  });

  it('a permit that does not decode: ambiguous_decision', () => {
    expect(codeOf({ verdict: 'ALLOW', permitId: 'not-a-jws' }, action, bound)).toBe('ambiguous_decision');
  });

  it('a WARN binds the transformedArgs, not what was sent', async () => {
    const transformedArgs = { orderId: 'ord_1842', amount: 50 };
    const permitId = await kit.mint({ claims: { act_hash: actionHash(TOOL, transformedArgs) } });
    expect(codeOf({ verdict: 'WARN', permitId, transformedArgs }, action, bound)).toBe('ok');
    expect(codeOf({ verdict: 'WARN', permitId: await kit.mint(), transformedArgs }, action, bound)).toBe(
      'ambiguous_decision',
    );
  });

  it('without permits configured, the binding is not checked', async () => {
    expect(codeOf({ verdict: 'ALLOW', permitId: await kit.mint({ claims: { tool: 'other' } }) }, action, loose)).toBe(
      'ok',
    );
  });
});
