/**
 * Routes to a sandbox (issue 43, item 5; docs/interceptors.md "Routes to a sandbox"): an interceptor
 * or the PDP may route an action to a named sandbox (a WARN with `route: { to, profile? }`);
 * `createPep({ sandboxes })` registers runners, `guardTool` then runs the runner and never the tool,
 * and a route to an unknown sandbox is a synthesized BLOCK. Against a recording fake PDP.
 */
import { describe, expect, it, vi } from 'vitest';
import type { DecisionEvent, Interceptor, PolicyBlockedError, SandboxCall } from '../../../src/index.js';
import { answer, type Received } from '../../support/fake-pdp.js';
import { useFakePdp } from '../../support/fake-pdp-suite.js';

const fake = useFakePdp({ permits: false });

function pdpAnswers(extra: Record<string, unknown>): void {
  fake.pdp.handler = (req: Received, res) => {
    const b = req.body as { requestId: string };
    answer(res, { verdict: 'ALLOW', permitId: 'p', requestId: b.requestId, ...extra });
  };
}

function setup(interceptors: Interceptor[] = []) {
  const calls: SandboxCall[] = [];
  const events: DecisionEvent[] = [];
  const runner = vi.fn(async (call: SandboxCall) => {
    calls.push(call);
    return `ran in sandbox (${call.profile ?? 'default'})`;
  });
  const pep = fake.clients.client({ sandboxes: { proc: runner }, interceptors, onDecision: (e) => events.push(e) });
  const body = vi.fn(async () => 'ran on the host');
  return { pep, runner, body, calls, events, tool: pep.guardTool('run_script', body) };
}

async function rejection(p: Promise<unknown>): Promise<PolicyBlockedError> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: PolicyBlockedError) => e,
  );
}

describe('a PDP route', () => {
  it('WARN with route: guardTool runs the runner with the decided call, never the tool', async () => {
    pdpAnswers({ verdict: 'WARN', route: { to: 'proc', profile: 'no-network' } });
    const { tool, body, calls, events } = setup();
    await expect(tool({ script: 'ls' })).resolves.toBe('ran in sandbox (no-network)');
    expect(body).not.toHaveBeenCalled();
    expect(calls[0]).toMatchObject({
      tool: 'run_script',
      args: { script: 'ls' },
      profile: 'no-network',
      permitId: 'p',
    });
    expect(events[0]?.decision.route).toEqual({ to: 'proc', profile: 'no-network' });
  });

  it('a route to an unknown sandbox is a synthesized BLOCK: neither the runner nor the tool runs', async () => {
    pdpAnswers({ verdict: 'WARN', route: { to: 'e2b' } });
    const { tool, body, runner } = setup();
    const err = await rejection(tool({}));
    expect(err.code).toBe('ambiguous_decision');
    expect(body).not.toHaveBeenCalled();
    expect(runner).not.toHaveBeenCalled();
  });

  it.each([
    ['on an ALLOW', { route: { to: 'proc' } }],
    ['without a name', { verdict: 'WARN', route: { profile: 'x' } }],
    ['with a non-string profile', { verdict: 'WARN', route: { to: 'proc', profile: 3 } }],
  ])('a route %s is ambiguous_decision', async (_name, extra) => {
    pdpAnswers(extra);
    const { pep } = setup();
    expect((await pep.authorizeAction('run_script', {})).synthesized?.code).toBe('ambiguous_decision');
  });

  it('a route on a text stage is ambiguous_decision', async () => {
    fake.pdp.handler = (req: Received, res) =>
      answer(res, {
        verdict: 'WARN',
        transformedContent: 'x',
        route: { to: 'proc' },
        requestId: (req.body as { requestId: string }).requestId,
      });
    expect((await setup().pep.checkInput('hi')).synthesized?.code).toBe('ambiguous_decision');
  });
});

describe('an interceptor route', () => {
  const toProc: Interceptor = {
    name: 'untrusted-scripts',
    stages: ['action'],
    before: () => ({ action: 'route', to: 'proc' }),
  };

  it('the PDP is still asked; its ALLOW becomes a WARN with the route, and guardTool runs the runner', async () => {
    pdpAnswers({});
    const { pep, tool, body, runner } = setup([toProc]);
    const d = await pep.authorizeAction('run_script', { script: 'ls' });
    expect(d).toMatchObject({ verdict: 'WARN', route: { to: 'proc' } });
    await expect(tool({ script: 'ls' })).resolves.toBe('ran in sandbox (default)');
    expect(body).not.toHaveBeenCalled();
    expect(runner).toHaveBeenCalledTimes(1);
    expect(fake.pdp.received).toHaveLength(2);
  });

  it('a PDP BLOCK stands: nothing runs', async () => {
    pdpAnswers({ verdict: 'BLOCK', permitId: undefined, reason: 'no scripts' });
    const { tool, runner, body } = setup([toProc]);
    expect((await rejection(tool({}))).code).toBe('blocked');
    expect(runner).not.toHaveBeenCalled();
    expect(body).not.toHaveBeenCalled();
  });

  it('the PDP routing elsewhere is ambiguous_decision', async () => {
    pdpAnswers({ verdict: 'WARN', route: { to: 'other' } });
    expect((await setup([toProc]).pep.authorizeAction('run_script', {})).synthesized?.code).toBe('ambiguous_decision');
  });

  it('a later interceptor may not route elsewhere; a route on a text stage fails too (interceptor_failed)', async () => {
    const elsewhere: Interceptor = { name: 'b', stages: ['action'], before: () => ({ action: 'route', to: 'other' }) };
    const d = await setup([toProc, elsewhere]).pep.authorizeAction('run_script', {});
    expect(d).toMatchObject({ interceptor: 'b', synthesized: { code: 'interceptor_failed' } });
    const onText: Interceptor = { name: 't', stages: ['input'], before: () => ({ action: 'route', to: 'proc' }) };
    expect((await setup([onText]).pep.checkInput('hi')).synthesized?.code).toBe('interceptor_failed');
    expect(fake.pdp.received).toHaveLength(0);
  });

  it("after interceptors see the runner's result", async () => {
    pdpAnswers({});
    const redact: Interceptor = {
      name: 'redact',
      stages: ['action'],
      after: (_s, r) => ({ action: 'proceedWith', result: String(r).replace('sandbox', '[box]') }),
    };
    await expect(setup([toProc, redact]).tool({})).resolves.toBe('ran in [box] (default)');
  });
});

describe('the sandboxes option', () => {
  it('a runner that is not a function is a TypeError naming it', () => {
    expect(() => fake.clients.client({ sandboxes: { proc: 'node' } as never })).toThrow(
      expect.objectContaining({ option: 'sandboxes.proc' }),
    );
    expect(() => fake.clients.client({ sandboxes: [] as never })).toThrow(
      expect.objectContaining({ option: 'sandboxes' }),
    );
  });
});
