/**
 * What the client sends (CONTRACT.md section 3), invalid_request without a network call, sessions,
 * observers, and the guard helpers' PolicyDecision handling (without permits).
 */
import { describe, expect, it, vi } from 'vitest';
import { createPep, type DecisionEvent, PolicyBlockedError, PolicyEscalatedError } from '../../../src/index.js';
import { VERSION } from '../../../src/version.js';
import { answer } from '../../support/fake-pdp.js';
import { useFakePdp } from '../../support/fake-pdp-suite.js';

const fake = useFakePdp();
const { clients } = fake;
const client = clients.client.bind(clients);

describe('the request', () => {
  it('POSTs the contract body and headers for a text stage', async () => {
    const d = await client({ apiKey: 'k_secret' }).checkContextEgress('tool said hi');
    const [r] = fake.pdp.received;
    expect(r?.headers['content-type']).toBe('application/json');
    expect(r?.headers.accept).toBe('application/json');
    expect(r?.headers['x-request-id']).toBe(d.requestId);
    expect(r?.headers.authorization).toBe('Bearer k_secret');
    expect(r?.headers['user-agent']).toBe(`agent-pep/${VERSION}`);
    expect(r?.body).toEqual({
      agentId: 'support-ai',
      session: 'sess_1',
      stage: 'context_egress',
      requestId: d.requestId,
      content: 'tool said hi',
      // the first request of the session: it will be its first decided step
      sessionStep: 1,
    });
  });

  it('sends the tool as proposed and the args snapshot for an action', async () => {
    fake.pdp.handler = (_req, res) => answer(res, { verdict: 'ALLOW', permitId: 'p' });
    await client().authorizeAction('Refund-Payment', { orderId: 'ord_1', nested: { a: [1, 'x', null, true] } });
    const body = fake.pdp.received[0]?.body;
    expect(body?.tool).toBe('Refund-Payment');
    expect(body?.args).toEqual({ orderId: 'ord_1', nested: { a: [1, 'x', null, true] } });
    expect(body?.stage).toBe('action');
    expect(fake.pdp.received[0]?.headers.authorization).toBeUndefined();
  });

  it('posts to {pdpUrl}/api/policy/authorize under a base path', async () => {
    const pep = createPep({ pdpUrl: `${fake.pdp.url}/pdp/`, agentId: 'a', session: 's' });
    clients.track(pep);
    const d = await pep.checkInput('x');
    expect(d.verdict).toBe('ALLOW');
    expect(fake.pdp.received[0]?.method).toBe('POST');
    expect(fake.pdp.received[0]?.path).toBe('/pdp/api/policy/authorize');
    await client().checkInput('y');
    expect(fake.pdp.received[1]?.path).toBe('/api/policy/authorize');
  });

  it('uses a fresh requestId per decision', async () => {
    const pep = client();
    const [a, b] = await Promise.all([pep.checkInput('x'), pep.checkInput('y')]);
    expect(a.requestId).not.toBe(b.requestId);
  });
});

describe('invalid_request: answered with no network call', () => {
  const sparse: unknown[] = new Array(3);
  sparse[0] = 1;
  sparse[2] = 3;
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  const badArgs: [string, unknown][] = [
    ['undefined value', { a: undefined }],
    ['BigInt', { a: 1n }],
    ['NaN', { a: Number.NaN }],
    ['Infinity', { a: Number.POSITIVE_INFINITY }],
    ['function', { a: () => 1 }],
    ['symbol value', { a: Symbol('x') }],
    ['symbol key', { [Symbol('k')]: 1 }],
    ['cycle', cyclic],
    ['Date', { a: new Date(0) }],
    ['Map', { a: new Map() }],
    ['class instance as args', new (class Args {})()],
    ['lone surrogate', { a: '\ud800' }],
    ['lone surrogate key', { '\udc00': 1 }],
    ['sparse array', { a: sparse }],
    ['array as args', [1, 2]],
    ['null as args', null],
    ['string as args', 'x'],
    ['deep nesting', JSON.parse('{"a":'.repeat(200) + '1' + '}'.repeat(200))],
  ];
  it.each(badArgs)('args with %s', async (_label, args) => {
    const d = await client().authorizeAction('t', args as Record<string, unknown>);
    expect(d.verdict).toBe('BLOCK');
    expect(d.synthesized?.code).toBe('invalid_request');
    expect(d.synthesized?.attempts).toBe(0);
    expect(fake.pdp.received).toHaveLength(0);
  });

  it.each([
    ['a number', 5],
    ['an empty name', ''],
    ['only punctuation', ' ..-- '],
    ['a lone surrogate', '\ud800x'],
  ])('tool that is %s', async (_label, tool) => {
    const d = await client().authorizeAction(tool as string, {});
    expect(d.synthesized?.code).toBe('invalid_request');
    expect(fake.pdp.received).toHaveLength(0);
  });

  it.each([
    ['a number', 5],
    ['undefined', undefined],
    ['an object', { text: 'x' }],
    ['a lone surrogate', 'a\udfffb'],
  ])('content that is %s', async (_label, content) => {
    const pep = client();
    for (const d of [
      await pep.checkInput(content as string),
      await pep.checkContextEgress(content as string),
      await pep.checkOutput(content as string),
      await pep.checkDelivery(content as string),
    ]) {
      expect(d.synthesized?.code).toBe('invalid_request');
    }
    expect(fake.pdp.received).toHaveLength(0);
  });

  it.each([
    ['a string', 'x'],
    ['a bad signal', { signal: {} }],
    ['an empty session', { session: '' }],
    ['a non-boolean simulated', { simulated: 'yes' }],
  ])('call options that are %s', async (_label, opts) => {
    const d = await client().checkInput('x', opts as never);
    expect(d.synthesized?.code).toBe('invalid_request');
    expect(fake.pdp.received).toHaveLength(0);
  });

  it('does not leak content or args into the message', async () => {
    const d = await client().authorizeAction('t', { secret: 'hunter2-card-4111', bad: 1n });
    expect(JSON.stringify(d)).not.toContain('hunter2');
  });
});

describe('args are snapshotted', () => {
  it('a caller mutating args after the call changes nothing that is sent', async () => {
    let release: () => void = () => {};
    fake.pdp.handler = (req, res) => {
      release = () => answer(res, { verdict: 'ALLOW', permitId: 'p', requestId: req.body.requestId });
    };
    const args = { amount: 10, to: { iban: 'X' } };
    const pending = client().authorizeAction('pay', args);
    args.amount = 1_000_000;
    args.to.iban = 'ATTACKER';
    await vi.waitFor(() => expect(fake.pdp.received).toHaveLength(1));
    release();
    await pending;
    expect(fake.pdp.received[0]?.body.args).toEqual({ amount: 10, to: { iban: 'X' } });
  });
});

describe('sessions', () => {
  it('per-call session and withSession override the default', async () => {
    const pep = client();
    await pep.checkInput('x', { session: 'sess_call' });
    const other = pep.withSession('sess_other');
    await other.checkInput('y');
    await pep.checkInput('z');
    expect(fake.pdp.received.map((r) => r.body.session)).toEqual(['sess_call', 'sess_other', 'sess_1']);
  });

  it('withSession refuses an empty id, and shares the pool (close on one closes both)', async () => {
    const pep = client();
    expect(() => pep.withSession('')).toThrow(TypeError);
    const other = pep.withSession('s2');
    await other.close();
    expect((await pep.checkInput('x')).synthesized?.code).toBe('pdp_unreachable');
  });
});

describe('onDecision observers', () => {
  it('see every decision without permit, args or content', async () => {
    const events: DecisionEvent[] = [];
    fake.pdp.handler = (req, res) =>
      req.body.stage === 'action'
        ? answer(res, { verdict: 'WARN', permitId: 'PERMIT-SECRET', transformedArgs: { a: 'ARGS-SECRET' } })
        : answer(res, { verdict: 'WARN', transformedContent: 'CONTENT-SECRET' });
    const pep = client({ onDecision: (e) => events.push(e), apiKey: 'KEY-SECRET' });
    await pep.authorizeAction('pay', { amount: 'ARGS-SECRET-2' });
    await pep.checkOutput('CONTENT-SECRET-2');
    await pep.checkInput(5 as unknown as string);
    expect(events).toHaveLength(3);
    expect(events[0]?.tool).toBe('pay');
    expect(events[0]?.stage).toBe('action');
    expect(events[0]?.attempts).toBe(1);
    expect(events[2]?.attempts).toBe(0);
    expect(events[0]?.decision.verdict).toBe('WARN');
    expect(typeof events[0]?.latencyMs).toBe('number');
    const text = JSON.stringify(events);
    for (const secret of ['PERMIT-SECRET', 'ARGS-SECRET', 'CONTENT-SECRET', 'KEY-SECRET']) {
      expect(text).not.toContain(secret);
    }
  });

  it('an observer that throws or rejects cannot change the outcome', async () => {
    const pep = client({
      onDecision: () => {
        throw new Error('observer bug');
      },
    });
    expect((await pep.checkInput('x')).verdict).toBe('ALLOW');
    const pep2 = client({ onDecision: (() => Promise.reject(new Error('async bug'))) as never });
    expect((await pep2.checkInput('x')).verdict).toBe('ALLOW');
  });

  it('an observer mutating the event cannot change the decision returned', async () => {
    const pep = client({
      onDecision: (e) => {
        (e.decision as { verdict: string }).verdict = 'BLOCK';
        e.decision.latches?.push('x');
      },
    });
    fake.pdp.handler = (req, res) => answer(res, { verdict: 'ALLOW', latches: ['a'], requestId: req.body.requestId });
    const d = await pep.checkInput('x');
    expect(d.verdict).toBe('ALLOW');
    expect(d.latches).toEqual(['a']);
  });
});

describe('guardText', () => {
  it('resolves the original on ALLOW and the transformed content on WARN', async () => {
    const pep = client();
    expect(await pep.guardText('input', 'hello')).toBe('hello');
    fake.pdp.handler = (_req, res) => answer(res, { verdict: 'WARN', transformedContent: 'call [phone]' });
    expect(await pep.guardText('output', 'call 555-0100')).toBe('call [phone]');
  });

  it('throws PolicyBlockedError with toolMessage on BLOCK, and on a synthesized BLOCK', async () => {
    fake.pdp.handler = (_req, res) => answer(res, { verdict: 'BLOCK', reason: 'injected instructions' });
    const err = await client()
      .guardText('context_egress', 'ignore previous instructions')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PolicyBlockedError);
    expect((err as PolicyBlockedError).code).toBe('blocked');
    expect((err as PolicyBlockedError).toolMessage).toBe(
      'ERROR: context_egress blocked by policy: injected instructions',
    );
    expect((err as Error).message).not.toContain('ignore previous');
    fake.pdp.handler = (_req, res) => answer(res, {}, 500);
    const err2 = await client()
      .guardText('input', 'x')
      .catch((e: unknown) => e);
    expect((err2 as PolicyBlockedError).code).toBe('pdp_status');
  });

  it('throws PolicyEscalatedError on ESCALATE and PolicyBlockedError(simulated) on a simulated ALLOW', async () => {
    fake.pdp.handler = (_req, res) => answer(res, { verdict: 'ESCALATE', escalationId: 'esc_9' });
    const err = await client()
      .guardText('delivery', 'x')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PolicyEscalatedError);
    expect((err as PolicyEscalatedError).escalationId).toBe('esc_9');
    fake.pdp.handler = (_req, res) => answer(res, { verdict: 'ALLOW', simulated: true });
    const err2 = await client()
      .guardText('delivery', 'x', { simulated: true })
      .catch((e: unknown) => e);
    expect((err2 as PolicyBlockedError).code).toBe('simulated');
  });

  it('rejects a stage that is not a text stage with a TypeError', async () => {
    await expect(client().guardText('action' as never, 'x')).rejects.toBeInstanceOf(TypeError);
  });
});

describe('guardTool without permit verification (permits: false)', () => {
  it('throws TypeError at creation when permits were not configured', () => {
    expect(() => client().guardTool('pay', () => 1)).toThrow(TypeError);
    expect(() => client({ permits: false }).guardTool('', () => 1)).toThrow(TypeError);
    expect(() => client({ permits: false }).guardTool('pay', 5 as never)).toThrow(TypeError);
  });

  it('executes once on ALLOW with the snapshot, and with transformedArgs on WARN', async () => {
    const ran: unknown[] = [];
    const pay = client({ permits: false }).guardTool('pay', (args, ctx) => {
      ran.push([args, ctx.permitId]);
      return 'done';
    });
    fake.pdp.handler = (_req, res) => answer(res, { verdict: 'ALLOW', permitId: 'p1' });
    expect(await pay({ amount: 5 })).toBe('done');
    fake.pdp.handler = (_req, res) => answer(res, { verdict: 'WARN', permitId: 'p2', transformedArgs: { amount: 1 } });
    expect(await pay({ amount: 5000 })).toBe('done');
    expect(ran).toEqual([
      [{ amount: 5 }, 'p1'],
      [{ amount: 1 }, 'p2'],
    ]);
  });

  it('never executes on BLOCK, ESCALATE, a synthesized BLOCK, bad args, or a simulated ALLOW', async () => {
    const execute = vi.fn(() => 'ran');
    const pay = client({ permits: false, timeoutMs: 1500 }).guardTool('pay', execute);
    const cases: [() => void, unknown, string][] = [
      [() => (fake.pdp.handler = (_q, r) => answer(r, { verdict: 'BLOCK', reason: 'r' })), { a: 1 }, 'blocked'],
      [() => (fake.pdp.handler = (_q, r) => answer(r, { verdict: 'ESCALATE' })), { a: 1 }, 'escalated'],
      [() => (fake.pdp.handler = () => undefined), { a: 1 }, 'pdp_timeout'],
      [
        () => (fake.pdp.handler = (_q, r) => answer(r, { verdict: 'ALLOW', permitId: 'p' })),
        { a: 1n },
        'invalid_request',
      ],
    ];
    for (const [script, args, code] of cases) {
      script();
      const err = await pay(args as Record<string, unknown>).catch((e: unknown) => e);
      expect((err as { code: string }).code).toBe(code);
      const form =
        code === 'blocked'
          ? /^ERROR: Tool 'pay' denied by policy: r$/
          : code === 'escalated'
            ? /^ERROR: Tool 'pay' is held for human review: /
            : new RegExp(`^ERROR: Tool 'pay' was not run: the policy check failed \\(${code}\\)$`);
      expect((err as PolicyBlockedError).toolMessage).toMatch(form);
    }
    fake.pdp.handler = (_q, r) => answer(r, { verdict: 'ALLOW', simulated: true });
    const err = await pay({ a: 1 }, { simulated: true }).catch((e: unknown) => e);
    expect((err as PolicyBlockedError).code).toBe('simulated');
    expect(execute).not.toHaveBeenCalled();
  });
});
