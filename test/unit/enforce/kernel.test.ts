/**
 * The enforcement layer (src/enforce/kernel.ts, docs/adapters.md) over scripted client internals: which
 * rule fired (result kind and code), what was asked of the PDP and the permit checker, and which of its
 * own refusals it reported to the observer. The socket-level behaviour of the same rules is in
 * test/contract/adapters.contract.test.ts.
 */
import { describe, expect, it, vi } from 'vitest';
import type { ClientInternals } from '../../../src/core/client.js';
import type { Outcome } from '../../../src/core/exchange.js';
import { readCallOptions } from '../../../src/core/request.js';
import type { PolicyDecision } from '../../../src/decision.js';
import { makeKernel } from '../../../src/enforce/kernel.js';

type Script = (stage: string, payload: { tool?: string; args?: unknown; content?: string }) => Outcome;

function decision(over: Partial<PolicyDecision> = {}): PolicyDecision {
  return { verdict: 'ALLOW', stage: 'action', requestId: 'req-1', ...over };
}

/** Client internals whose PDP answers `script`, with a permit checker that accepts unless told otherwise. */
function deps(script: Script, over: Partial<ClientInternals> = {}) {
  const observed: PolicyDecision[] = [];
  const asked: { stage: string; payload: unknown; opts: unknown }[] = [];
  const check = vi.fn(async (_permit: string, _expected: unknown) => ({}) as never);
  const internals: ClientInternals = {
    agentId: 'support-ai',
    session: 'sess_default',
    timeoutMs: 2000,
    permits: 'on',
    checker: () => ({ check }),
    readCall: (stage, raw) => readCallOptions(raw, stage, { session: 'sess_default', simulated: false }),
    async run(stage, payload, opts) {
      asked.push({ stage, payload, opts });
      return script(stage, payload as never);
    },
    observe(outcome) {
      observed.push(outcome.decision);
      return outcome.decision;
    },
    after: [],
    sandboxes: new Map(),
    modelRequest: [],
    ...over,
  };
  return { kernel: makeKernel(internals), observed, asked, check };
}

const allowWithPermit: Script = (_s, p) => ({
  decision: decision({ permitId: 'permit.jwt.value' }),
  attempts: 1,
  args: p.args as Record<string, unknown>,
});

describe('decideAction: routes to a sandbox', () => {
  const routed: Script = (_s, p) => ({
    decision: decision({ verdict: 'WARN', permitId: 'p', route: { to: 'proc' } }),
    attempts: 1,
    args: p.args as Record<string, unknown>,
  });

  it('a host that runs the tool itself (a hook, canUseTool) refuses a routed action: ambiguous_decision, observed', async () => {
    const { kernel, observed } = deps(routed, { sandboxes: new Map([['proc', () => 'x']]) });
    const r = await kernel.decideAction('run_script', {});
    expect(r.kind === 'refused' && r.code).toBe('ambiguous_decision');
    expect(observed.map((d) => d.synthesized?.code)).toEqual(['ambiguous_decision']);
  });

  it('guardTool (runsSandboxes) gets the registered runner with the route', async () => {
    const runner = () => 'x';
    const { kernel } = deps(routed, { sandboxes: new Map([['proc', runner]]) });
    const r = await kernel.decideAction('run_script', {}, undefined, true);
    expect(r.kind === 'verified' && r.sandbox).toEqual({ route: { to: 'proc' }, runner });
  });
});

describe('decideAction', () => {
  it('ALLOW: verified, with the args sent, after the permit is checked against exactly those args and the session', async () => {
    const { kernel, check } = deps(allowWithPermit);
    const r = await kernel.decideAction('refund_payment', { amount: 5 }, { session: 'sess_call' });
    expect(r.kind).toBe('verified');
    if (r.kind !== 'verified') return;
    expect(r.args).toEqual({ amount: 5 });
    expect(r.session).toBe('sess_call');
    expect(check).toHaveBeenCalledTimes(1);
    expect(check.mock.calls[0]?.[1]).toMatchObject({
      tool: 'refund_payment',
      args: { amount: 5 },
      subject: 'support-ai',
      session: 'sess_call',
    });
  });

  it("WARN: the args that run (and that the permit must bind) are the decision's transformedArgs", async () => {
    const { kernel, check } = deps((_s, p) => ({
      decision: decision({ verdict: 'WARN', transformedArgs: { amount: 1 }, permitId: 'p' }),
      attempts: 1,
      args: p.args as Record<string, unknown>,
    }));
    const r = await kernel.decideAction('refund_payment', { amount: 5 });
    expect(r.kind === 'verified' && r.args).toEqual({ amount: 1 });
    expect(check.mock.calls[0]?.[1]).toMatchObject({ args: { amount: 1 }, session: 'sess_default' });
  });

  it("BLOCK and ESCALATE: refused with the PDP's decision (already observed by the pipeline, not again)", async () => {
    for (const verdict of ['BLOCK', 'ESCALATE'] as const) {
      const { kernel, observed, check } = deps(() => ({ decision: decision({ verdict, reason: 'no' }), attempts: 1 }));
      const r = await kernel.decideAction('bank_transfer', { to: 'x' });
      expect(r.kind).toBe('refused');
      if (r.kind !== 'refused') return;
      expect(r.code).toBe(verdict === 'BLOCK' ? 'blocked' : 'escalated');
      expect(r.toolMessage).toContain("Tool 'bank_transfer'");
      expect(observed).toHaveLength(0);
      expect(check).not.toHaveBeenCalled();
    }
  });

  it('a simulated ALLOW is never enforced: refused `simulated`, and that refusal is observed', async () => {
    const { kernel, observed, check } = deps((_s, p) => ({
      decision: decision({ simulated: true, decisionId: 'dec-9' }),
      attempts: 1,
      args: p.args as Record<string, unknown>,
    }));
    const r = await kernel.decideAction('refund_payment', {});
    expect(r.kind === 'refused' && r.code).toBe('simulated');
    expect(check).not.toHaveBeenCalled();
    expect(observed).toHaveLength(1);
    expect(observed[0]).toMatchObject({ verdict: 'BLOCK', simulated: true, decisionId: 'dec-9' });
    expect(observed[0]?.synthesized?.code).toBe('simulated');
  });

  it('a permit that fails verification: refused `permit_invalid`, observed, and the permit is in no message', async () => {
    const failure = Object.assign(new Error('bad signature'), { code: 'signature_invalid' });
    const { kernel, observed } = deps(allowWithPermit, {
      checker: () => ({ check: async () => Promise.reject(failure) }),
    });
    const r = await kernel.decideAction('refund_payment', { amount: 5 });
    expect(r.kind === 'refused' && r.code).toBe('permit_invalid');
    expect(r.kind === 'refused' && r.cause).toBe(failure);
    expect(observed[0]?.synthesized?.message).toBe('permit failed verification (signature_invalid)');
    expect(JSON.stringify(r)).not.toContain('permit.jwt.value');
  });

  it('a caller signal that fires while the permit is checked: refused `aborted`, without waiting for the check', async () => {
    const ac = new AbortController();
    const { kernel } = deps(allowWithPermit, {
      checker: () => ({ check: () => new Promise<never>(() => undefined) }),
    });
    const pending = kernel.decideAction('refund_payment', {}, { signal: ac.signal });
    setTimeout(() => ac.abort(), 5);
    const r = await pending;
    expect(r.kind === 'refused' && r.code).toBe('aborted');
  });

  it("permits: false: ALLOW is verified without a permit check (the caller's explicit choice)", async () => {
    const { kernel, check } = deps(allowWithPermit, { permits: 'off' });
    expect((await kernel.decideAction('refund_payment', {})).kind).toBe('verified');
    expect(check).not.toHaveBeenCalled();
  });

  it("an interceptor's substitute: its result, the tool is not run and no permit is checked", async () => {
    const { kernel, check } = deps(() => ({
      decision: decision({ substitute: { result: 'cached' }, interceptor: 'cache' }),
      attempts: 0,
    }));
    const r = await kernel.decideAction('lookup_order', {});
    expect(r).toMatchObject({ kind: 'substituted', result: 'cached' });
    expect(check).not.toHaveBeenCalled();
  });

  it('an internal fault is a refusal `invalid_request` (observed), never a rejection', async () => {
    const { kernel, observed } = deps(() => {
      throw new Error('boom');
    });
    const r = await kernel.decideAction('lookup_order', {});
    expect(r.kind === 'refused' && r.code).toBe('invalid_request');
    expect(observed).toHaveLength(1);
  });
});

describe('decideText', () => {
  it("WARN passes exactly the decision's transformedContent", async () => {
    const { kernel } = deps(() => ({
      decision: decision({ verdict: 'WARN', stage: 'output', transformedContent: 'call [phone]' }),
      attempts: 1,
    }));
    expect(await kernel.decideText('output', 'call 555-123-4567')).toMatchObject({
      kind: 'passed',
      text: 'call [phone]',
    });
  });
  it('a simulated decision is refused `simulated` and observed', async () => {
    const { kernel, observed } = deps(() => ({ decision: decision({ stage: 'input', simulated: true }), attempts: 1 }));
    const r = await kernel.decideText('input', 'hi');
    expect(r.kind === 'refused' && r.code).toBe('simulated');
    expect(observed).toHaveLength(1);
  });
});

describe('finishAction', () => {
  const ran = { args: { id: 1 }, session: 'sess_run', signal: undefined };

  it('no check: the result is released as it is, and nothing is asked', async () => {
    const { kernel, asked } = deps(allowWithPermit);
    const result = { rows: [1] };
    expect(await kernel.finishAction('lookup_order', ran, result)).toEqual({ kind: 'released', result });
    expect(asked).toHaveLength(0);
  });

  it("check: true sends the result as a model reads it at context_egress, with the run's session and the tool", async () => {
    const { kernel, asked } = deps(() => ({ decision: decision({ stage: 'context_egress' }), attempts: 1 }));
    const result = { note: 'a\nb' };
    expect(await kernel.finishAction('lookup_order', ran, result, true)).toEqual({ kind: 'released', result });
    expect(asked[0]).toMatchObject({
      stage: 'context_egress',
      payload: { content: `${JSON.stringify(result)}\na\nb` },
      opts: { session: 'sess_run', tool: 'lookup_order' },
    });
  });

  it('a WARN on the result releases the transformed text in place of the result', async () => {
    const { kernel } = deps(() => ({
      decision: decision({ verdict: 'WARN', stage: 'context_egress', transformedContent: '[redacted]' }),
      attempts: 1,
    }));
    expect(await kernel.finishAction('lookup_order', ran, 'secret', true)).toEqual({
      kind: 'released',
      result: '[redacted]',
    });
  });

  it('a result check that does not give a string: refused `invalid_request`, nothing sent', async () => {
    const { kernel, asked } = deps(allowWithPermit);
    const r = await kernel.finishAction('lookup_order', ran, {}, (() => 42) as never);
    expect(r.kind === 'refused' && r.code).toBe('invalid_request');
    expect(asked).toHaveLength(0);
  });
});

describe('refuse and requirePermits', () => {
  it("the adapter's own refusal is a synthesized BLOCK with its code, observed once, with the tool's message", () => {
    const { kernel, observed } = deps(allowWithPermit);
    const r = kernel.refuse({ stage: 'action', tool: 'send_email' }, 'invalid_request', 'args failed the schema');
    expect(r.code).toBe('invalid_request');
    expect(r.toolMessage).toContain("Tool 'send_email'");
    expect(observed).toHaveLength(1);
    expect(observed[0]?.synthesized).toMatchObject({ code: 'invalid_request', message: 'args failed the schema' });
  });
  it('requirePermits: a client without `permits` throws TypeError; `permits: false` is an explicit choice', () => {
    expect(() => deps(allowWithPermit, { permits: undefined }).kernel.requirePermits('guardTool')).toThrow(
      /configure `permits`/,
    );
    expect(() => deps(allowWithPermit, { permits: 'off' }).kernel.requirePermits('guardTool')).not.toThrow();
  });
});
