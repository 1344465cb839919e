/**
 * Every fail-closed rule of CONTRACT.md section 3 and every FailClosedCode, on the action stage and
 * on a text stage, against a scripted fake PDP over real HTTP.
 */
import { describe, expect, it } from 'vitest';
import { createPep, type Pep, type PolicyDecision } from '../../../src/index.js';
import { answer, closedPort, type Handler } from '../../support/fake-pdp.js';
import { useFakePdp } from '../../support/fake-pdp-suite.js';

const fake = useFakePdp({ timeoutMs: 1500 });
const { clients } = fake;
const client = clients.client.bind(clients);

type StageCase = { name: 'action' | 'input'; call: (pep: Pep) => Promise<PolicyDecision> };
const STAGES: StageCase[] = [
  { name: 'action', call: (pep) => pep.authorizeAction('refund_payment', { orderId: 'ord_1842', amount: 129 }) },
  { name: 'input', call: (pep) => pep.checkInput('Where is my order?') },
];

/** A body that is a valid, enforceable ALLOW for whatever stage was asked. */
function validAllow(body: Record<string, unknown>): Record<string, unknown> {
  const base: Record<string, unknown> = { verdict: 'ALLOW', requestId: body.requestId, stage: body.stage };
  if (body.stage === 'action') base.permitId = 'opaque-permit';
  return base;
}

function expectSynth(d: PolicyDecision, code: string): void {
  expect(d.verdict).toBe('BLOCK');
  expect(d.synthesized?.code).toBe(code);
  expect(typeof d.synthesized?.message).toBe('string');
  expect(typeof d.synthesized?.attempts).toBe('number');
}

describe.each(STAGES)('stage $name', ({ name, call }) => {
  it('returns a valid ALLOW as the PDP sent it', async () => {
    fake.pdp.handler = (req, res) => answer(res, { ...validAllow(req.body), decisionId: 'dec_1', latches: [] });
    const d = await call(client());
    expect(d.verdict).toBe('ALLOW');
    expect(d.synthesized).toBeUndefined();
    expect(d.decisionId).toBe('dec_1');
    expect(d.stage).toBe(name);
    if (name === 'action') expect(d.permitId).toBe('opaque-permit');
  });

  it('returns a PDP BLOCK as a BLOCK without synthesized', async () => {
    fake.pdp.handler = (req, res) => answer(res, { verdict: 'BLOCK', reason: 'no', requestId: req.body.requestId });
    const d = await call(client());
    expect(d.verdict).toBe('BLOCK');
    expect(d.synthesized).toBeUndefined();
    expect(d.reason).toBe('no');
  });

  it('returns ESCALATE with its escalationId', async () => {
    fake.pdp.handler = (_req, res) => answer(res, { verdict: 'ESCALATE', escalationId: 'esc_1' });
    const d = await call(client());
    expect(d.verdict).toBe('ESCALATE');
    expect(d.escalationId).toBe('esc_1');
  });

  // Rule 1: an answer over a connection that worked, before the deadline.
  it('pdp_unreachable: connection refused, retried, then BLOCK', async () => {
    const pep = createPep({ pdpUrl: await closedPort(), agentId: 'a', session: 's', retries: 2 });
    clients.track(pep);
    const d = await call(pep);
    expectSynth(d, 'pdp_unreachable');
    expect(d.synthesized?.attempts).toBe(3);
  });

  it('pdp_unreachable: the socket is reset before a response, on every attempt', async () => {
    fake.pdp.handler = (_req, res) => res.socket?.destroy();
    const d = await call(client({ retries: 1 }));
    expectSynth(d, 'pdp_unreachable');
    expect(fake.pdp.received).toHaveLength(2);
  });

  it('retries a reset in the middle of the body, then succeeds', async () => {
    let n = 0;
    fake.pdp.handler = (req, res) => {
      if (n++ > 0) return answer(res, validAllow(req.body));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '200' });
      res.write('{"verdict":"ALL');
      setTimeout(() => res.socket?.destroy(), 10);
    };
    const d = await call(client());
    expect(d.verdict).toBe('ALLOW');
    expect(fake.pdp.received).toHaveLength(2);
  });

  it('retries a reset and succeeds on the next attempt with the same requestId', async () => {
    let n = 0;
    fake.pdp.handler = (req, res) => (n++ === 0 ? res.socket?.destroy() : answer(res, validAllow(req.body)));
    const d = await call(client());
    expect(d.verdict).toBe('ALLOW');
    expect(fake.pdp.received).toHaveLength(2);
    const [a, b] = fake.pdp.received;
    expect(a?.body.requestId).toBe(d.requestId);
    expect(b?.body.requestId).toBe(d.requestId);
    expect(a?.headers['x-request-id']).toBe(d.requestId);
    expect(b?.headers['x-request-id']).toBe(d.requestId);
  });

  it('pdp_timeout: a server that accepts and never answers', async () => {
    fake.pdp.handler = () => undefined;
    const t0 = performance.now();
    const d = await call(client({ timeoutMs: 300 }));
    expectSynth(d, 'pdp_timeout');
    expect(performance.now() - t0).toBeLessThan(300 + 700);
  });

  it('pdp_timeout: headers then a trickling body', async () => {
    fake.pdp.handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"verdict":');
      const t = setInterval(() => res.write(' '), 50);
      res.on('close', () => clearInterval(t));
    };
    const t0 = performance.now();
    const d = await call(client({ timeoutMs: 300 }));
    expectSynth(d, 'pdp_timeout');
    expect(performance.now() - t0).toBeLessThan(300 + 700);
  });

  it('pdp_timeout: per-attempt timeout is retried inside the deadline', async () => {
    let n = 0;
    fake.pdp.handler = (req, res) => {
      if (n++ === 0) return; // first attempt hangs
      answer(res, validAllow(req.body));
    };
    const d = await call(client({ timeoutMs: 1500, attemptTimeoutMs: 200 }));
    expect(d.verdict).toBe('ALLOW');
    expect(fake.pdp.received).toHaveLength(2);
  });

  // Rule 2: status exactly 200, no redirects.
  it.each([500, 400, 401, 404])('pdp_status: %i is not retried', async (status) => {
    fake.pdp.handler = (_req, res) => answer(res, { error: 'x' }, status);
    const d = await call(client());
    expectSynth(d, 'pdp_status');
    expect(d.synthesized?.status).toBe(status);
    expect(fake.pdp.received).toHaveLength(1);
  });

  it.each([408, 429, 502, 503, 504])('pdp_status: %i is retried up to `retries` times', async (status) => {
    fake.pdp.handler = (_req, res) => answer(res, { error: 'x' }, status);
    const d = await call(client({ retries: 2 }));
    expectSynth(d, 'pdp_status');
    expect(d.synthesized?.status).toBe(status);
    expect(d.synthesized?.attempts).toBe(3);
    expect(fake.pdp.received).toHaveLength(3);
  });

  it('a 503 followed by a valid answer is an ALLOW', async () => {
    let n = 0;
    fake.pdp.handler = (req, res) => (n++ === 0 ? answer(res, {}, 503) : answer(res, validAllow(req.body)));
    const d = await call(client());
    expect(d.verdict).toBe('ALLOW');
  });

  it('pdp_status: a redirect is not followed', async () => {
    fake.pdp.handler = (req, res) => {
      if (req.headers['x-followed']) return answer(res, validAllow(req.body));
      res.writeHead(307, { location: `${fake.pdp.url}/api/policy/authorize` });
      res.end();
    };
    const d = await call(client());
    expectSynth(d, 'pdp_status');
    expect(d.synthesized?.status).toBe(307);
    expect(fake.pdp.received).toHaveLength(1);
  });

  it('a Retry-After that would end past the deadline ends the decision at once', async () => {
    fake.pdp.handler = (_req, res) => answer(res, {}, 503, { 'retry-after': '5' });
    const t0 = performance.now();
    const d = await call(client({ timeoutMs: 1000 }));
    expectSynth(d, 'pdp_status');
    expect(d.synthesized?.attempts).toBe(1);
    expect(performance.now() - t0).toBeLessThan(900);
  });

  it('honours a Retry-After longer than the backoff when it fits the deadline', async () => {
    let n = 0;
    fake.pdp.handler = (req, res) =>
      n++ === 0 ? answer(res, {}, 429, { 'retry-after': '1' }) : answer(res, validAllow(req.body));
    const t0 = performance.now();
    const d = await call(client({ timeoutMs: 3000 }));
    expect(d.verdict).toBe('ALLOW');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(950);
  });

  // Rule 3: JSON content type, whole body within maxResponseBytes, UTF-8, I-JSON, schema.
  const raw =
    (status: number, headers: Record<string, string>, body: string | Buffer): Handler =>
    (_req, res) => {
      res.writeHead(status, headers);
      res.end(body);
    };
  const json = { 'content-type': 'application/json' };
  const badBodies: [string, (b: Record<string, unknown>) => Handler][] = [
    ['text/html content type', (b) => raw(200, { 'content-type': 'text/html' }, JSON.stringify(validAllow(b)))],
    ['no content type', (b) => raw(200, {}, JSON.stringify(validAllow(b)))],
    [
      'a latin-1 charset',
      (b) => raw(200, { 'content-type': 'application/json; charset=iso-8859-1' }, JSON.stringify(validAllow(b))),
    ],
    ['not JSON', () => raw(200, json, 'ALLOW')],
    ['an empty body', () => raw(200, json, '')],
    ['a JSON array', (b) => raw(200, json, JSON.stringify([validAllow(b)]))],
    ['JSON null', () => raw(200, json, 'null')],
    [
      'duplicate member names',
      (b) => raw(200, json, `{"verdict":"BLOCK","verdict":"ALLOW","requestId":"${b.requestId}","permitId":"p"}`),
    ],
    [
      'duplicate names written with escapes',
      (b) => raw(200, json, `{"verdict":"BLOCK","verdic\\u0074":"ALLOW","requestId":"${b.requestId}","permitId":"p"}`),
    ],
    [
      'invalid UTF-8',
      (b) =>
        raw(
          200,
          json,
          Buffer.concat([
            Buffer.from(JSON.stringify(validAllow(b)).slice(0, -1) + ',"reason":"'),
            Buffer.from([0xc3, 0x28]),
            Buffer.from('"}'),
          ]),
        ),
    ],
    [
      'an unpaired surrogate escape',
      (b) => raw(200, json, JSON.stringify({ ...validAllow(b), reason: 'x' }).replace('"x"', '"\\ud800"')),
    ],
    [
      'a number beyond double range',
      (b) => raw(200, json, JSON.stringify({ ...validAllow(b), n: 1 }).replace('"n":1', '"n":1e400')),
    ],
    ['a lowercase verdict', (b) => raw(200, json, JSON.stringify({ ...validAllow(b), verdict: 'allow' }))],
    ['no verdict', (b) => raw(200, json, JSON.stringify({ requestId: b.requestId }))],
    ['a reason of the wrong type', (b) => raw(200, json, JSON.stringify({ ...validAllow(b), reason: 5 }))],
    ['latches not strings', (b) => raw(200, json, JSON.stringify({ ...validAllow(b), latches: [1] }))],
    ['a null decisionId', (b) => raw(200, json, JSON.stringify({ ...validAllow(b), decisionId: null }))],
    ['an empty permitId', (b) => raw(200, json, JSON.stringify({ ...validAllow(b), permitId: '' }))],
    ['simulated not boolean', (b) => raw(200, json, JSON.stringify({ ...validAllow(b), simulated: 'no' }))],
    ['obligations not an array', (b) => raw(200, json, JSON.stringify({ ...validAllow(b), obligations: {} }))],
    [
      'a body over maxResponseBytes (content-length)',
      (b) => raw(200, json, JSON.stringify({ ...validAllow(b), pad: 'x'.repeat(70_000) })),
    ],
  ];
  it.each(badBodies)('invalid_response: %s', async (_label, make) => {
    fake.pdp.handler = (req, res, socket) => make(req.body)(req, res, socket);
    const d = await call(client());
    expectSynth(d, 'invalid_response');
    expect(fake.pdp.received).toHaveLength(1);
  });

  it('invalid_response: a chunked body that grows past maxResponseBytes is cut off', async () => {
    fake.pdp.handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"verdict":"ALLOW","pad":"');
      const t = setInterval(() => res.write('x'.repeat(8192)), 1);
      res.on('close', () => clearInterval(t));
    };
    const d = await call(client({ maxResponseBytes: 1024 }));
    expectSynth(d, 'invalid_response');
  });

  it('ignores unknown members and accepts a charset=utf-8 parameter', async () => {
    fake.pdp.handler = (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
      res.end(JSON.stringify({ ...validAllow(req.body), somethingNew: { a: 1 } }));
    };
    const d = await call(client());
    expect(d.verdict).toBe('ALLOW');
  });

  // Rule 4: enforceable.
  const ambiguous: [string, (b: Record<string, unknown>) => unknown][] = [
    ['a requestId echo that differs', (b) => ({ ...validAllow(b), requestId: 'other' })],
    ['a stage echo that differs', (b) => ({ ...validAllow(b), stage: b.stage === 'action' ? 'input' : 'action' })],
    ['simulated: true for a real request', (b) => ({ ...validAllow(b), simulated: true })],
    ['non-empty obligations', (b) => ({ ...validAllow(b), obligations: [{ id: 'log' }] })],
    ['an error member', (b) => ({ ...validAllow(b), error: 'boom' })],
    ['a null error member', (b) => ({ ...validAllow(b), error: null })],
    ['non-empty errors', (b) => ({ ...validAllow(b), errors: ['boom'] })],
    ['transformedContent on an ALLOW', (b) => ({ ...validAllow(b), transformedContent: 'x' })],
    ['transformedArgs on an ALLOW', (b) => ({ ...validAllow(b), transformedArgs: { a: 1 } })],
    ['permitId on a BLOCK', () => ({ verdict: 'BLOCK', permitId: 'p' })],
    ['permitId on an ESCALATE', () => ({ verdict: 'ESCALATE', permitId: 'p' })],
    ['transformedArgs on a BLOCK', () => ({ verdict: 'BLOCK', transformedArgs: { a: 1 } })],
    ['transformedArgs on an ESCALATE', () => ({ verdict: 'ESCALATE', transformedArgs: { a: 1 } })],
    ['transformedContent on a BLOCK', () => ({ verdict: 'BLOCK', transformedContent: 'x' })],
    ['transformedContent on an ESCALATE', () => ({ verdict: 'ESCALATE', transformedContent: 'x' })],
  ];
  it.each(ambiguous)('ambiguous_decision: %s', async (_label, make) => {
    fake.pdp.handler = (req, res) => answer(res, make(req.body));
    const d = await call(client());
    expectSynth(d, 'ambiguous_decision');
    expect(fake.pdp.received).toHaveLength(1);
  });

  it('ambiguous_decision: an x-request-id response header that differs', async () => {
    fake.pdp.handler = (req, res) => answer(res, validAllow(req.body), 200, { 'x-request-id': 'someone-else' });
    expectSynth(await call(client()), 'ambiguous_decision');
  });

  it('accepts an empty errors array and empty obligations', async () => {
    fake.pdp.handler = (req, res) => answer(res, { ...validAllow(req.body), errors: [], obligations: [] });
    expect((await call(client())).verdict).toBe('ALLOW');
  });

  it('aborted: a signal that already fired sends nothing', async () => {
    const pep = client();
    const d =
      name === 'action'
        ? await pep.authorizeAction('t', {}, { signal: AbortSignal.abort() })
        : await pep.checkInput('x', { signal: AbortSignal.abort() });
    expectSynth(d, 'aborted');
    expect(d.synthesized?.attempts).toBe(0);
    expect(fake.pdp.received).toHaveLength(0);
  });

  it('aborted: a signal firing mid-flight ends the decision at once', async () => {
    fake.pdp.handler = () => undefined;
    const pep = client({ timeoutMs: 5000 });
    const ctrl = new AbortController();
    setTimeout(() => ctrl.abort(), 100);
    const t0 = performance.now();
    const d =
      name === 'action'
        ? await pep.authorizeAction('t', {}, { signal: ctrl.signal })
        : await pep.checkInput('x', { signal: ctrl.signal });
    expectSynth(d, 'aborted');
    expect(performance.now() - t0).toBeLessThan(2000);
  });

  it('pdp_unreachable after close(), with no request sent', async () => {
    const pep = client();
    await pep.close();
    expectSynth(await call(pep), 'pdp_unreachable');
    expect(fake.pdp.received).toHaveLength(0);
  });

  it('in-flight decisions resolve BLOCK pdp_unreachable when the client closes', async () => {
    fake.pdp.handler = () => undefined;
    const pep = client({ timeoutMs: 5000 });
    const pending = call(pep);
    await new Promise((r) => setTimeout(r, 100));
    await pep.close();
    expectSynth(await pending, 'pdp_unreachable');
  });
});

describe('action-only and text-only rules', () => {
  it('ambiguous_decision: an action ALLOW or WARN without a permit', async () => {
    for (const verdict of ['ALLOW', 'WARN']) {
      fake.pdp.handler = (req, res) => answer(res, { verdict, requestId: req.body.requestId });
      expectSynth(await client().authorizeAction('t', { a: 1 }), 'ambiguous_decision');
    }
  });

  it('ambiguous_decision: transformedContent or no permit on an action WARN', async () => {
    fake.pdp.handler = (_req, res) => answer(res, { verdict: 'WARN', permitId: 'p', transformedContent: 'x' });
    expectSynth(await client().authorizeAction('t', { a: 1 }), 'ambiguous_decision');
  });

  it('an action WARN carries transformedArgs and the permit', async () => {
    fake.pdp.handler = (_req, res) => answer(res, { verdict: 'WARN', permitId: 'p', transformedArgs: { amount: 10 } });
    const d = await client().authorizeAction('t', { amount: 1000 });
    expect(d.verdict).toBe('WARN');
    expect(d.transformedArgs).toEqual({ amount: 10 });
    expect(d.permitId).toBe('p');
  });

  it('ambiguous_decision: transformedArgs that is an array', async () => {
    fake.pdp.handler = (_req, res) => answer(res, { verdict: 'WARN', permitId: 'p', transformedArgs: [1] });
    expectSynth(await client().authorizeAction('t', { a: 1 }), 'invalid_response');
  });

  it('ambiguous_decision: a text WARN without transformedContent', async () => {
    fake.pdp.handler = (_req, res) => answer(res, { verdict: 'WARN' });
    expectSynth(await client().checkOutput('x'), 'ambiguous_decision');
  });

  it('ambiguous_decision: permitId or transformedArgs on a text stage', async () => {
    fake.pdp.handler = (_req, res) => answer(res, { verdict: 'ALLOW', permitId: 'p' });
    expectSynth(await client().checkDelivery('x'), 'ambiguous_decision');
    fake.pdp.handler = (_req, res) => answer(res, { verdict: 'WARN', transformedContent: 'y', transformedArgs: {} });
    expectSynth(await client().checkContextEgress('x'), 'ambiguous_decision');
  });

  it('a text WARN carries transformedContent', async () => {
    fake.pdp.handler = (_req, res) => answer(res, { verdict: 'WARN', transformedContent: 'call [phone]' });
    const d = await client().checkOutput('call 555-010-1234');
    expect(d.verdict).toBe('WARN');
    expect(d.transformedContent).toBe('call [phone]');
  });

  it('a simulated action gets no permit, even when the PDP sends one', async () => {
    fake.pdp.handler = (req, res) =>
      answer(res, { verdict: 'ALLOW', permitId: 'p', simulated: true, requestId: req.body.requestId });
    const d = await client().authorizeAction('t', { a: 1 }, { simulated: true });
    expect(d.verdict).toBe('ALLOW');
    expect(d.simulated).toBe(true);
    expect(d.permitId).toBeUndefined();
    expect(fake.pdp.received[0]?.body.simulated).toBe(true);
  });

  it('sends simulated only when true, and the client-level simulated flag', async () => {
    await client().checkInput('x');
    expect('simulated' in (fake.pdp.received[0]?.body ?? {})).toBe(false);
    fake.pdp.handler = (_req, res) => answer(res, { verdict: 'ALLOW' });
    const d = await client({ simulated: true }).checkInput('x');
    expect(fake.pdp.received[1]?.body.simulated).toBe(true);
    expect(d.simulated).toBe(true);
  });
});
