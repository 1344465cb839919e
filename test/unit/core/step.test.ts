/**
 * One stage call up to the network (src/core/step.ts): the call options read, the request built, the
 * stage's `before` interceptors run (docs/interceptors.md). What comes out is either a call ready for
 * the network or an outcome already decided, with the code that says which rule fired; nothing here
 * reaches a PDP (the client points at a closed port).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Interceptor } from '../../../src/core/interceptors.js';
import { createShared } from '../../../src/core/shared.js';
import { type Bound, callOptions, type PreparedStep, prepareStep } from '../../../src/core/step.js';
import type { Stage } from '../../../src/decision.js';
import { resolveOptions } from '../../../src/options/pep.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const bounds: Bound[] = [];

function bound(interceptors: Interceptor[] = [], simulated = false): Bound {
  const shared = createShared(
    resolveOptions({ pdpUrl: 'http://127.0.0.1:9', agentId: 'agent-1', session: 's-1', interceptors, simulated }),
  );
  const b = { shared, session: 's-1' };
  bounds.push(b);
  return b;
}

afterEach(async () => {
  for (const b of bounds.splice(0)) await b.shared.ctx.transport.close();
});

const far = () => performance.now() + 10_000;

async function step(
  b: Bound,
  stage: Stage,
  payload: Parameters<typeof prepareStep>[2],
  opts?: unknown,
  deadlineAt = far(),
): Promise<PreparedStep> {
  return await prepareStep(b, stage, payload, opts, undefined, deadlineAt);
}

function decided(s: PreparedStep) {
  if (s.kind !== 'decided') throw new Error(`expected a decided step, got ${s.kind}`);
  return s.outcome;
}

describe('prepareStep without interceptors', () => {
  it('answers at once (no promise) with the request the PDP will get', () => {
    const s = prepareStep(bound(), 'action', { tool: 'Refund', args: { amount: 5 } }, undefined, undefined, far());
    expect(s).not.toBeInstanceOf(Promise);
    if (s instanceof Promise || s.kind !== 'ready') throw new Error('not ready');
    expect(s.p.req).toMatchObject({ agentId: 'agent-1', session: 's-1', stage: 'action', tool: 'Refund' });
    expect(s.p.req.args).toEqual({ amount: 5 });
    expect(s.p.sent.requestId).toMatch(UUID);
    expect(s.p.sent.simulated).toBe(false);
  });

  it('a per-call session replaces the bound one', async () => {
    const s = await step(bound(), 'input', { content: 'hi' }, { session: 's-2' });
    expect(s.kind === 'ready' && s.p.req.session).toBe('s-2');
  });

  it('an unknown call option is decided here: BLOCK invalid_request, with a fresh request id', async () => {
    const o = decided(await step(bound(), 'input', { content: 'hi' }, { sesion: 's-2' }));
    expect(o.attempts).toBe(0);
    expect(o.decision).toMatchObject({ verdict: 'BLOCK', stage: 'input', synthesized: { code: 'invalid_request' } });
    expect(o.decision.requestId).toMatch(UUID);
  });

  it('args that are not JSON are decided here: BLOCK invalid_request', async () => {
    const o = decided(await step(bound(), 'action', { tool: 'refund', args: { n: 1n } }));
    expect(o.decision.synthesized?.code).toBe('invalid_request');
  });

  it('a client made with simulated: true sends every request as a dry run', async () => {
    const s = await step(bound([], true), 'output', { content: 'x' });
    expect(s.kind === 'ready' && [s.p.req.simulated, s.p.sent.simulated]).toEqual([true, true]);
  });

  it('callOptions reads the session and the client default for simulated', () => {
    expect(callOptions(bound([], true), { session: 's-9' }, 'input')).toMatchObject({
      session: 's-9',
      simulated: true,
    });
  });
});

describe('prepareStep with before interceptors', () => {
  const proceed: Interceptor = { name: 'pass', before: () => ({ action: 'proceed' }) };

  it('synchronous pass-through interceptors still answer at once', () => {
    const s = prepareStep(bound([proceed]), 'input', { content: 'hi' }, undefined, undefined, far());
    expect(s).not.toBeInstanceOf(Promise);
    expect((s as PreparedStep).kind).toBe('ready');
  });

  it('deny: a BLOCK the interceptor decided, not synthesized, no attempt', async () => {
    const deny: Interceptor = { name: 'no-etc', before: () => ({ action: 'deny', reason: 'system paths' }) };
    const o = decided(await step(bound([deny]), 'action', { tool: 'read', args: { path: '/etc' } }));
    expect(o.attempts).toBe(0);
    expect(o.decision).toMatchObject({ verdict: 'BLOCK', interceptor: 'no-etc', reason: 'system paths' });
    expect(o.decision.synthesized).toBeUndefined();
  });

  it('deny on a simulated call is marked simulated', async () => {
    const deny: Interceptor = { name: 'd', before: () => ({ action: 'deny', reason: 'r' }) };
    const o = decided(await step(bound([deny], true), 'input', { content: 'x' }));
    expect(o.decision.simulated).toBe(true);
  });

  it('substitute: a BLOCK carrying the result in its place', async () => {
    const sub: Interceptor = { name: 'cache', before: () => ({ action: 'substitute', result: { cached: 1 } }) };
    const o = decided(await step(bound([sub]), 'action', { tool: 'lookup', args: {} }));
    expect(o.decision).toMatchObject({ verdict: 'BLOCK', interceptor: 'cache', substitute: { result: { cached: 1 } } });
  });

  it('a throwing interceptor is BLOCK interceptor_failed naming it', async () => {
    const bad: Interceptor = {
      name: 'boom',
      before: () => {
        throw new Error('x');
      },
    };
    const o = decided(await step(bound([bad]), 'input', { content: 'hi' }));
    expect(o.decision).toMatchObject({
      verdict: 'BLOCK',
      interceptor: 'boom',
      synthesized: { code: 'interceptor_failed' },
    });
  });

  it('an interceptor still pending at the deadline is BLOCK interceptor_failed', async () => {
    const slow: Interceptor = { name: 'slow', before: () => new Promise(() => {}) };
    const o = decided(await step(bound([slow]), 'input', { content: 'hi' }, undefined, performance.now() + 20));
    expect(o.decision.synthesized?.code).toBe('interceptor_failed');
    expect(o.decision.synthesized?.message).toContain('still pending at the deadline');
  });

  it("a caller's signal already aborted is BLOCK aborted, and no interceptor runs", async () => {
    let ran = 0;
    const count: Interceptor = {
      name: 'count',
      before: () => {
        ran++;
        return { action: 'proceed' };
      },
    };
    const o = decided(await step(bound([count]), 'input', { content: 'hi' }, { signal: AbortSignal.abort() }));
    expect(o.decision.synthesized?.code).toBe('aborted');
    expect(ran).toBe(0);
  });

  it('proceedWith replaces the args the PDP gets', async () => {
    const cap: Interceptor = { name: 'cap', before: () => ({ action: 'proceedWith', args: { amount: 10 } }) };
    const s = await step(bound([cap]), 'action', { tool: 'refund', args: { amount: 900 } });
    if (s.kind !== 'ready') throw new Error('not ready');
    expect(s.p.req.args).toEqual({ amount: 10 });
    expect(s.p.replaced).toBe(true);
  });

  it('a proceedWith value that is not valid input is BLOCK invalid_request', async () => {
    const bad: Interceptor = { name: 'bad', before: () => ({ action: 'proceedWith', content: '\ud800' }) };
    const o = decided(await step(bound([bad]), 'input', { content: 'hi' }));
    expect(o.decision.synthesized?.code).toBe('invalid_request');
  });

  it('interceptors of another stage do not run', async () => {
    let ran = 0;
    const onAction: Interceptor = {
      name: 'a',
      stages: ['action'],
      before: () => {
        ran++;
        return { action: 'proceed' };
      },
    };
    expect((await step(bound([onAction]), 'input', { content: 'hi' })).kind).toBe('ready');
    expect(ran).toBe(0);
  });
});
