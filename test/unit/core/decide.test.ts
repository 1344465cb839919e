/**
 * One stage call decided and observed (src/core/decide.ts): the prepared step sent where it goes (the
 * agent-pep path, or the AuthZEN evaluation endpoint), the outcome given to the observer once. Against
 * a scripted PDP on loopback, so what was asked and what was not is visible.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runStep } from '../../../src/core/decide.js';
import { createShared } from '../../../src/core/shared.js';
import type { Bound } from '../../../src/core/step.js';
import type { DecisionEvent, PepOptions } from '../../../src/options/pep.js';
import { resolveOptions } from '../../../src/options/pep.js';
import { allowEcho, answer, type FakePdp, startFakePdp } from '../../support/fake-pdp.js';

let pdp: FakePdp;
const bounds: Bound[] = [];

beforeAll(async () => {
  pdp = await startFakePdp();
});
afterAll(() => pdp.close());
afterEach(async () => {
  pdp.handler = allowEcho;
  pdp.received.length = 0;
  for (const b of bounds.splice(0)) await b.shared.ctx.transport.close();
});

function bound(extra: Partial<PepOptions> = {}): { b: Bound; events: DecisionEvent[] } {
  const events: DecisionEvent[] = [];
  const opts = resolveOptions({
    pdpUrl: pdp.url,
    agentId: 'agent-1',
    session: 's-1',
    retries: 0,
    timeoutMs: 5_000,
    onDecision: (e) => events.push(e),
    ...extra,
  });
  const b = { shared: createShared(opts), session: 's-1' };
  bounds.push(b);
  return { b, events };
}

describe('runStep over the agent-pep wire', () => {
  it("sends one request to the PDP's decision path and returns its verdict, observed once", async () => {
    const { b, events } = bound();
    const o = await runStep(b, 'input', { content: 'hello' }, undefined);
    expect(o.decision).toMatchObject({ verdict: 'ALLOW', stage: 'input' });
    expect(o.attempts).toBe(1);
    expect(pdp.received).toHaveLength(1);
    expect(pdp.received[0]?.path).toBe('/api/policy/authorize');
    expect(pdp.received[0]?.headers['x-request-id']).toBe(o.decision.requestId);
    expect(events.map((e) => [e.stage, e.decision.verdict, e.requestId])).toEqual([
      ['input', 'ALLOW', o.decision.requestId],
    ]);
  });

  it('the observer gets the tool name of an action call', async () => {
    pdp.handler = (req, res) => answer(res, { verdict: 'BLOCK', requestId: req.body.requestId, stage: 'action' });
    const { b, events } = bound();
    const o = await runStep(b, 'action', { tool: 'refund', args: { amount: 1 } }, undefined);
    expect(o.decision.verdict).toBe('BLOCK');
    expect(events[0]?.tool).toBe('refund');
  });

  it('a call decided before the network sends nothing, and is still observed', async () => {
    const { b, events } = bound({ interceptors: [{ name: 'deny', before: () => ({ action: 'deny', reason: 'r' }) }] });
    const o = await runStep(b, 'input', { content: 'hello' }, undefined);
    expect(o.decision).toMatchObject({ verdict: 'BLOCK', interceptor: 'deny' });
    expect(pdp.received).toHaveLength(0);
    expect(events.map((e) => e.interceptor)).toEqual(['deny']);
  });

  it('an invalid call is BLOCK invalid_request without a request', async () => {
    const { b, events } = bound();
    const o = await runStep(b, 'action', { tool: '', args: {} }, undefined);
    expect(o.decision.synthesized?.code).toBe('invalid_request');
    expect(pdp.received).toHaveLength(0);
    expect(events).toHaveLength(1);
  });

  it('a PDP that is down is BLOCK pdp_unreachable, never a rejection', async () => {
    const { b } = bound({ pdpUrl: 'http://127.0.0.1:9' });
    const o = await runStep(b, 'input', { content: 'hello' }, undefined);
    expect(o.decision).toMatchObject({ verdict: 'BLOCK', synthesized: { code: 'pdp_unreachable' } });
  });

  it('an answer that is not a decision is BLOCK invalid_response', async () => {
    pdp.handler = (_req, res) => answer(res, { hello: 'world' });
    const { b } = bound();
    const o = await runStep(b, 'output', { content: 'x' }, undefined);
    expect(o.decision.synthesized?.code).toBe('invalid_response');
  });

  it('an observer that throws changes nothing', async () => {
    const { b } = bound({
      onDecision: () => {
        throw new Error('observer');
      },
    });
    const o = await runStep(b, 'input', { content: 'hello' }, undefined);
    expect(o.decision.verdict).toBe('ALLOW');
  });
});

describe('runStep over AuthZEN', () => {
  it('posts one evaluation to /access/v1/evaluation and maps decision: false to BLOCK', async () => {
    pdp.handler = (_req, res) => answer(res, { decision: false });
    const { b } = bound({ protocol: 'authzen', permits: false });
    const o = await runStep(b, 'action', { tool: 'refund', args: { amount: 1 } }, undefined);
    expect(o.decision.verdict).toBe('BLOCK');
    expect(o.decision.synthesized).toBeUndefined();
    expect(pdp.received.map((r) => r.path)).toEqual(['/access/v1/evaluation']);
  });

  it('with discover: true, a discovery document that cannot be read is a synthesized BLOCK, no evaluation', async () => {
    pdp.handler = (_req, res) => answer(res, 'not json', 200);
    const { b } = bound({ protocol: 'authzen', permits: false, discover: true });
    const o = await runStep(b, 'input', { content: 'hello' }, undefined);
    expect(o.decision.verdict).toBe('BLOCK');
    expect(o.decision.synthesized).toBeDefined();
    expect(pdp.received.map((r) => r.path)).toEqual(['/.well-known/authzen-configuration']);
  });
});
