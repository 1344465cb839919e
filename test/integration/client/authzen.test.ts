/**
 * AuthZEN 1.0 against a scripted fake PDP (CONTRACT.md section 9): the request mapping, the response
 * rules (a boolean `decision`, the agent-pep profile in `context`), every fail-closed rule of section 3
 * on the new wire, the `permits: false` relaxation, discovery, and `authorizeActions` (one
 * `evaluations` request, each call decided on its own) — everything a real PDP will not do on request.
 */
import type { ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createPep, type DecisionEvent, type Pep, type PepOptions } from '../../../src/index.js';
import { answer, type FakePdp, type Handler, type Received, startFakePdp } from '../../support/fake-pdp.js';
import { createTestIssuer } from '../../support/permits.js';

let pdp: FakePdp;
const clients: Pep[] = [];

/** Answers every evaluation `decision: true`, and an `evaluations` request item by item. */
const allowAll: Handler = (req, res) => {
  if (req.path === '/access/v1/evaluations') {
    const items = req.body.evaluations as unknown[];
    return answer(res, { evaluations: items.map(() => ({ decision: true })) });
  }
  answer(res, { decision: true });
};

/** Answers an `evaluations` request with `items(received items)`. */
function batch(
  items: (evaluations: Record<string, unknown>[]) => unknown[],
  headers?: Record<string, string>,
): Handler {
  return (req, res) => {
    if (req.path !== '/access/v1/evaluations') return answer(res, { decision: true });
    answer(res, { evaluations: items(req.body.evaluations as Record<string, unknown>[]) }, 200, headers);
  };
}

beforeAll(async () => {
  pdp = await startFakePdp(allowAll);
});
afterAll(async () => {
  await pdp.close();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  pdp.handler = allowAll;
  pdp.received.length = 0;
});
function client(extra: Partial<PepOptions> = {}): Pep {
  const pep = createPep({
    pdpUrl: pdp.url,
    agentId: 'support-ai',
    session: 'sess_1',
    protocol: 'authzen',
    permits: false,
    timeoutMs: 1000,
    ...extra,
  });
  clients.push(pep);
  return pep;
}
const evaluations = (): Received[] => pdp.received.filter((r) => r.path === '/access/v1/evaluations');
const singles = (): Received[] => pdp.received.filter((r) => r.path === '/access/v1/evaluation');

describe('the AuthZEN request mapping', () => {
  it('an action is `call` on resource `tool` with the normalized name and the args, headers as in section 3', async () => {
    const d = await client({ apiKey: 'k_secret' }).authorizeAction('refundPayment', { orderId: 'o', amount: 5 });
    expect(d.verdict).toBe('ALLOW');
    const [r] = pdp.received;
    expect(r?.method).toBe('POST');
    expect(r?.path).toBe('/access/v1/evaluation');
    expect(r?.body).toEqual({
      subject: { type: 'agent', id: 'support-ai' },
      action: { name: 'call' },
      resource: { type: 'tool', id: 'refund_payment', properties: { args: { orderId: 'o', amount: 5 } } },
      context: { session: 'sess_1', requestId: d.requestId, sessionStep: 1 },
    });
    expect(r?.headers['x-request-id']).toBe(d.requestId);
    expect(r?.headers['content-type']).toBe('application/json');
    expect(r?.headers.accept).toBe('application/json');
    expect(r?.headers.authorization).toBe('Bearer k_secret');
    expect(r?.headers['user-agent']).toMatch(/^agent-pep\//);
  });

  it('a text stage is its stage name on resource `content` (id = requestId), with tool and simulated when given', async () => {
    const d = await client().checkContextEgress('tool said hi', {
      tool: 'lookupOrder',
      simulated: true,
      session: 's2',
    });
    expect(d.verdict).toBe('ALLOW');
    expect(d.simulated).toBe(true);
    expect(pdp.received[0]?.body).toEqual({
      subject: { type: 'agent', id: 'support-ai' },
      action: { name: 'context_egress' },
      resource: { type: 'content', id: d.requestId, properties: { content: 'tool said hi', tool: 'lookupOrder' } },
      context: { session: 's2', requestId: d.requestId, simulated: true },
    });
  });

  it('a pdpUrl with a path prefixes the AuthZEN paths', async () => {
    await client({ pdpUrl: `${pdp.url}/pdp/` }).checkInput('x');
    expect(pdp.received[0]?.path).toBe('/pdp/access/v1/evaluation');
  });
});

describe('the AuthZEN response rules', () => {
  const once = (body: unknown, status = 200, headers: Record<string, string> = {}): Handler => {
    return (_req, res) => answer(res, body, status, headers);
  };

  it.each([
    [{ decision: 'true' }],
    [{ decision: 1 }],
    [{}],
    [{ decision: null }],
    [{ decision: true, context: 'ok' }],
    [{ decision: true, context: { permitId: 5 } }],
    [{ decision: true, context: { verdict: 'allow' } }],
  ])('%j is invalid_response', async (body) => {
    pdp.handler = once(body);
    const d = await client().checkInput('x');
    expect(d.synthesized?.code).toBe('invalid_response');
  });

  it('decision false is a PDP BLOCK with reason_admin, else reason_user, when they are strings', async () => {
    pdp.handler = once({ decision: false, context: { reason_admin: 'admin says no', reason_user: 'no' } });
    let d = await client().checkInput('x');
    expect([d.verdict, d.synthesized, d.reason]).toEqual(['BLOCK', undefined, 'admin says no']);
    pdp.handler = once({
      decision: false,
      context: { reason_admin: { en: 'not a string' }, reason_user: 'user text' },
    });
    d = await client().checkInput('x');
    expect([d.verdict, d.synthesized, d.reason]).toEqual(['BLOCK', undefined, 'user text']);
  });

  it('the agent-pep profile refines: WARN with transformedContent, ESCALATE with escalationId, decisionId', async () => {
    pdp.handler = once({ decision: true, context: { verdict: 'WARN', transformedContent: '[x]', decisionId: 'd1' } });
    const w = await client().checkOutput('x');
    expect([w.verdict, w.transformedContent, w.decisionId]).toEqual(['WARN', '[x]', 'd1']);
    pdp.handler = once({ decision: false, context: { verdict: 'ESCALATE', escalationId: 'esc_9' } });
    const e = await client().authorizeAction('refund_payment', { amount: 900 });
    expect([e.verdict, e.escalationId]).toEqual(['ESCALATE', 'esc_9']);
  });

  it.each([
    [true, 'ESCALATE'],
    [true, 'BLOCK'],
    [false, 'WARN'],
    [false, 'ALLOW'],
  ])('a profile verdict that contradicts decision %s (%s) is ambiguous_decision', async (decision, verdict) => {
    pdp.handler = once({ decision, context: { verdict, transformedContent: 'x', escalationId: 'e' } });
    const d = await client().checkOutput('x');
    expect(d.synthesized?.code).toBe('ambiguous_decision');
  });

  it('rule 4 applies to the mapped result: a text WARN without transformedContent, a permit on a text stage, an error', async () => {
    for (const body of [
      { decision: true, context: { verdict: 'WARN' } },
      { decision: true, context: { permitId: 'p.q.r' } },
      { decision: true, context: { error: { code: 'x' } } },
      { decision: false, context: { verdict: 'BLOCK', error: { status: 400 } } },
      { decision: true, error: 'oops' },
    ]) {
      pdp.handler = once(body);
      expect((await client().checkInput('x')).synthesized?.code, JSON.stringify(body)).toBe('ambiguous_decision');
    }
  });

  it('section 3 holds on the AuthZEN wire: status, content type, I-JSON, size cap, request-id echo', async () => {
    const cases: [Handler, string][] = [
      [once({ decision: true }, 500), 'pdp_status'],
      [once({ decision: true }, 302, { location: '/elsewhere' }), 'pdp_status'],
      [
        (_q, res: ServerResponse) => {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.end('{"decision":true}');
        },
        'invalid_response',
      ],
      [once('{"decision":false,"decision":true}'), 'invalid_response'],
      [once({ decision: true, context: { pad: 'x'.repeat(2000) } }), 'invalid_response'],
      [once({ decision: true }, 200, { 'x-request-id': 'someone-else' }), 'ambiguous_decision'],
      [once('\u0000{{garbage'), 'invalid_response'],
    ];
    for (const [handler, code] of cases) {
      pdp.handler = handler;
      const d = await client({ maxResponseBytes: 1024 }).authorizeAction('lookup_order', {});
      expect(d.synthesized?.code).toBe(code);
    }
    expect(pdp.received.every((r) => r.path === '/access/v1/evaluation')).toBe(true);
  });

  it('requireEcho: an answer with neither a context.requestId nor an x-request-id echo is ambiguous', async () => {
    pdp.handler = once({ decision: true });
    expect((await client({ requireEcho: true }).checkInput('x')).synthesized?.code).toBe('ambiguous_decision');
    pdp.handler = (req, res) =>
      answer(res, { decision: true }, 200, { 'x-request-id': String(req.headers['x-request-id']) });
    expect((await client({ requireEcho: true }).checkInput('x')).verdict).toBe('ALLOW');
  });

  it('retries a 503 with the same requestId, and a hang ends at the deadline', async () => {
    let n = 0;
    pdp.handler = (_req, res) => (++n === 1 ? answer(res, {}, 503) : answer(res, { decision: true }));
    const d = await client().checkInput('x');
    expect(d.verdict).toBe('ALLOW');
    expect(new Set(pdp.received.map((r) => (r.body.context as { requestId: string }).requestId)).size).toBe(1);
    pdp.handler = () => undefined;
    const started = performance.now();
    const h = await client({ timeoutMs: 300 }).checkInput('x');
    expect(h.synthesized?.code).toBe('pdp_timeout');
    expect(performance.now() - started).toBeLessThan(2000);
  });
});

describe('permits over AuthZEN', () => {
  it('with permits: false an action ALLOW needs no permit, and guardTool runs with permitId undefined', async () => {
    const pep = client();
    expect((await pep.authorizeAction('lookup_order', {})).verdict).toBe('ALLOW');
    const execute = vi.fn((_args: Record<string, unknown>, ctx: { permitId: string | undefined }) => ctx.permitId);
    expect(await pep.guardTool('lookup_order', execute)({ orderId: 'o' })).toBeUndefined();
    expect(execute).toHaveBeenCalledTimes(1);
  });

  it('with permits: false an action WARN still needs a permit', async () => {
    pdp.handler = (_q, res) => answer(res, { decision: true, context: { verdict: 'WARN', transformedArgs: { a: 1 } } });
    expect((await client().authorizeAction('t', {})).synthesized?.code).toBe('ambiguous_decision');
  });

  it('with permits configured (or not given) an action ALLOW without a permit is ambiguous_decision', async () => {
    const issuer = await createTestIssuer();
    expect(
      (await client({ permits: { keys: issuer.jwks, issuer: issuer.issuer } }).authorizeAction('t', {})).synthesized
        ?.code,
    ).toBe('ambiguous_decision');
    const { permits: _p, ...rest } = { protocol: 'authzen' as const, permits: false };
    const pep = createPep({ pdpUrl: pdp.url, agentId: 'support-ai', session: 's', ...rest });
    clients.push(pep);
    expect((await pep.authorizeAction('t', {})).synthesized?.code).toBe('ambiguous_decision');
  });

  it('with permits configured, a permit in context is checked against the call (rule 5)', async () => {
    const issuer = await createTestIssuer();
    const permits = { keys: issuer.jwks, issuer: issuer.issuer };
    const good = await issuer.mint('refund_payment', { amount: 5 }, { sid: 'sess_1' });
    pdp.handler = (_q, res) => answer(res, { decision: true, context: { permitId: good } });
    const ok = await client({ permits }).authorizeAction('refundPayment', { amount: 5 });
    expect([ok.verdict, ok.permitId]).toEqual(['ALLOW', good]);
    const other = await client({ permits }).authorizeAction('refundPayment', { amount: 6 });
    expect(other.synthesized?.code).toBe('ambiguous_decision');
  });
});

describe('discovery', () => {
  const configured = (doc: unknown, status = 200): Handler => {
    return (req, res) => {
      if (req.path === '/.well-known/authzen-configuration') return answer(res, doc, status);
      return allowAll(req, res, undefined as never);
    };
  };

  it('reads the endpoints once and sends the evaluations there', async () => {
    pdp.handler = configured({
      policy_decision_point: pdp.url,
      access_evaluation_endpoint: `${pdp.url}/v2/one`,
      access_evaluations_endpoint: `${pdp.url}/v2/many`,
    });
    const pep = client({ discover: true });
    expect((await pep.checkInput('x')).verdict).toBe('ALLOW');
    expect((await pep.authorizeAction('t', {})).verdict).toBe('ALLOW');
    expect(pdp.received.map((r) => [r.method, r.path])).toEqual([
      ['GET', '/.well-known/authzen-configuration'],
      ['POST', '/v2/one'],
      ['POST', '/v2/one'],
    ]);
    await pep.authorizeActions([
      { tool: 'a', args: {} },
      { tool: 'b', args: {} },
    ]);
    expect(pdp.received.at(-1)?.path).toBe('/v2/many');
  });

  it.each([
    ['another PDP', { policy_decision_point: 'http://pdp.elsewhere.test' }],
    ['an endpoint on another origin', { access_evaluation_endpoint: 'http://pdp.elsewhere.test/access/v1/evaluation' }],
  ])(
    'a document naming %s is discarded: every decision is BLOCK pdp_unreachable, nothing is evaluated',
    async (_n, over) => {
      pdp.handler = configured({
        policy_decision_point: pdp.url,
        access_evaluation_endpoint: `${pdp.url}/access/v1/evaluation`,
        ...over,
      });
      const pep = client({ discover: true });
      const ds = [
        await pep.checkInput('x'),
        await pep.authorizeAction('t', {}),
        ...(await pep.authorizeActions([
          { tool: 'a', args: {} },
          { tool: 'b', args: {} },
        ])),
      ];
      expect(ds.map((d) => d.synthesized?.code)).toEqual(Array(4).fill('pdp_unreachable'));
      expect(pdp.received.map((r) => r.path)).toEqual(['/.well-known/authzen-configuration']);
    },
  );

  it('a document that fails to load fails that decision with its code, and the next decision tries again', async () => {
    pdp.handler = configured({}, 500);
    const pep = client({ discover: true, retries: 0 });
    expect((await pep.checkInput('x')).synthesized?.code).toBe('pdp_status');
    pdp.handler = configured({ policy_decision_point: `${pdp.url}/`, access_evaluation_endpoint: `${pdp.url}/e` });
    expect((await pep.checkInput('x')).verdict).toBe('ALLOW');
    // no batch endpoint in the document: the calls go as single evaluations
    await pep.authorizeActions([
      { tool: 'a', args: {} },
      { tool: 'b', args: {} },
    ]);
    expect(pdp.received.filter((r) => r.path === '/e')).toHaveLength(3);
  });

  it('a pdpUrl with a path: the tenant form /.well-known/authzen-configuration/{path} first, then {path}/.well-known/... after a 404', async () => {
    const doc = {
      policy_decision_point: `${pdp.url}/realms/r1`,
      access_evaluation_endpoint: `${pdp.url}/realms/r1/authzen/access/v1/evaluation`,
    };
    pdp.handler = (req, res) => {
      if (req.path === '/realms/r1/.well-known/authzen-configuration') return answer(res, doc);
      if (req.path.startsWith('/.well-known/')) return answer(res, { code: 'not_found' }, 404);
      return answer(res, { decision: true });
    };
    const pep = client({ pdpUrl: `${pdp.url}/realms/r1`, discover: true, retries: 0 });
    expect((await pep.checkInput('x')).verdict).toBe('ALLOW');
    expect(pdp.received.map((r) => r.path)).toEqual([
      '/.well-known/authzen-configuration/realms/r1',
      '/realms/r1/.well-known/authzen-configuration',
      '/realms/r1/authzen/access/v1/evaluation',
    ]);
  });

  it("the caller's abort ends a decision waiting on the discovery document as aborted; the others still get it", async () => {
    const held: ServerResponse[] = [];
    const doc = { policy_decision_point: pdp.url, access_evaluation_endpoint: `${pdp.url}/access/v1/evaluation` };
    pdp.handler = (req, res) => {
      if (req.path === '/.well-known/authzen-configuration') return void held.push(res);
      return allowAll(req, res, undefined as never);
    };
    const pep = client({ discover: true, timeoutMs: 2000 });
    const ac = new AbortController();
    const aborted = pep.authorizeAction('t', {}, { signal: ac.signal });
    const batch = pep.authorizeActions(
      [
        { tool: 'a', args: {} },
        { tool: 'b', args: {} },
      ],
      { signal: ac.signal },
    );
    const waiting = pep.checkInput('x');
    await vi.waitFor(() => expect(held).toHaveLength(1));
    ac.abort();
    expect((await aborted).synthesized?.code).toBe('aborted');
    expect((await batch).map((d) => d.synthesized?.code)).toEqual(['aborted', 'aborted']);
    answer(held[0] as ServerResponse, doc);
    expect((await waiting).verdict).toBe('ALLOW');
    expect(pdp.received.map((r) => r.path)).toEqual(['/.well-known/authzen-configuration', '/access/v1/evaluation']);
  });

  it('a signal aborted before the call ends it as aborted without waiting on the discovery document', async () => {
    pdp.handler = () => undefined;
    const pep = client({ discover: true, timeoutMs: 2000 });
    const signal = AbortSignal.abort();
    expect((await pep.checkInput('x', { signal })).synthesized?.code).toBe('aborted');
    expect(
      (
        await pep.authorizeActions(
          [
            { tool: 'a', args: {} },
            { tool: 'b', args: {} },
          ],
          { signal },
        )
      ).map((d) => d.synthesized?.code),
    ).toEqual(['aborted', 'aborted']);
  });

  it('a discovery document that hangs ends at the deadline as pdp_timeout', async () => {
    pdp.handler = () => undefined;
    expect((await client({ discover: true, timeoutMs: 300 }).checkInput('x')).synthesized?.code).toBe('pdp_timeout');
  });
});

describe('authorizeActions over AuthZEN', () => {
  const calls = [
    { tool: 'lookup_order', args: { orderId: 'o' } },
    { tool: 'refund_payment', args: { amount: 5 } },
    { tool: 'send_email', args: { to: 'a@b.c' } },
  ];

  it('sends one evaluations request (execute_all), each item with its own requestId, the request with its own x-request-id', async () => {
    const ds = await client().authorizeActions(calls);
    expect(ds.map((d) => d.verdict)).toEqual(['ALLOW', 'ALLOW', 'ALLOW']);
    expect(pdp.received).toHaveLength(1);
    const [r] = evaluations();
    expect(r?.body.options).toEqual({ evaluations_semantic: 'execute_all' });
    const items = r?.body.evaluations as { context: { requestId: string }; resource: { id: string } }[];
    expect(items.map((i) => i.context.requestId)).toEqual(ds.map((d) => d.requestId));
    expect(items.map((i) => i.resource.id)).toEqual(['lookup_order', 'refund_payment', 'send_email']);
    const batchId = r?.headers['x-request-id'];
    expect(typeof batchId).toBe('string');
    expect(ds.map((d) => d.requestId)).not.toContain(batchId);
  });

  it('bad call options are invalid_request for every call, each with its own requestId, and nothing is sent', async () => {
    for (const bad of [{ session: '' }, { simulated: 'yes' }, { signal: 'x' }, 'opts']) {
      const ds = await client().authorizeActions(calls, bad as never);
      expect(ds.map((d) => [d.verdict, d.synthesized?.code])).toEqual(calls.map(() => ['BLOCK', 'invalid_request']));
      expect(new Set(ds.map((d) => d.requestId)).size).toBe(calls.length);
    }
    expect(pdp.received).toHaveLength(0);
  });

  it('per-call options apply to every call of the batch (session, simulated)', async () => {
    const ds = await client().authorizeActions(calls, { session: 'sess_other', simulated: true });
    expect(ds.every((d) => d.simulated === true)).toBe(true);
    const items = evaluations()[0]?.body.evaluations as { context: { session: string; simulated?: boolean } }[];
    expect(items.map((i) => [i.context.session, i.context.simulated])).toEqual(calls.map(() => ['sess_other', true]));
  });

  it('calls to the same tool never share one evaluations request: the second call to a tool goes in a second one', async () => {
    const ds = await client().authorizeActions([
      { tool: 'a', args: { n: 1 } },
      { tool: 'a', args: { n: 2 } },
      { tool: 'b', args: { n: 3 } },
      { tool: 'b', args: { n: 4 } },
    ]);
    expect(ds.map((d) => d.verdict)).toEqual(['ALLOW', 'ALLOW', 'ALLOW', 'ALLOW']);
    const batches = evaluations().map((r) =>
      (r.body.evaluations as { resource: { id: string; properties: { args: { n: number } } } }[]).map(
        (i) => `${i.resource.id}${i.resource.properties.args.n}`,
      ),
    );
    expect(batches.sort()).toEqual([
      ['a1', 'b3'],
      ['a2', 'b4'],
    ]);
    expect(singles()).toHaveLength(0);
    expect(new Set(evaluations().map((r) => r.headers['x-request-id'])).size).toBe(2);
  });

  it('a batch of more than 64 calls goes as several evaluations requests of at most 64', async () => {
    const many = Array.from({ length: 70 }, (_, i) => ({ tool: `tool_${i}`, args: { i } }));
    const ds = await client().authorizeActions(many);
    expect(ds.map((d) => d.verdict)).toEqual(Array(70).fill('ALLOW'));
    expect(
      evaluations()
        .map((r) => (r.body.evaluations as unknown[]).length)
        .sort((a, b) => a - b),
    ).toEqual([6, 64]);
  });

  it('a call alone in its round is a single evaluation', async () => {
    const ds = await client().authorizeActions([
      { tool: 'refund_payment', args: { amount: 5 } },
      { tool: 'refundPayment', args: { amount: 900 } },
      { tool: 'lookup_order', args: {} },
      { tool: 'refund_payment', args: { amount: 7 } },
    ]);
    expect(ds).toHaveLength(4);
    const [r] = evaluations();
    const ids = ((r?.body.evaluations ?? []) as { resource: { id: string } }[]).map((i) => i.resource.id);
    expect(ids).toEqual(['refund_payment', 'lookup_order']);
    expect(singles().map((s) => (s.body.resource as { properties: { args: unknown } }).properties.args)).toEqual(
      expect.arrayContaining([{ amount: 900 }, { amount: 7 }]),
    );
    expect(singles()).toHaveLength(2);
  });

  it('an item that fails a rule is BLOCK while the others stand', async () => {
    pdp.handler = batch(() => [
      { decision: true },
      { decision: 'yes' },
      { decision: true, context: { verdict: 'ESCALATE' } },
    ]);
    let ds = await client().authorizeActions(calls);
    expect(ds.map((d) => d.synthesized?.code ?? d.verdict)).toEqual([
      'ALLOW',
      'invalid_response',
      'ambiguous_decision',
    ]);
    pdp.handler = batch(() => [
      { decision: false, context: { verdict: 'BLOCK', error: { status: 404, code: 'unknown_tool' } } },
      { decision: false, context: { reason_admin: 'no' } },
      { decision: true },
    ]);
    ds = await client().authorizeActions(calls);
    expect(ds.map((d) => d.synthesized?.code ?? d.verdict)).toEqual(['ambiguous_decision', 'BLOCK', 'ALLOW']);
    expect(ds[1]?.reason).toBe('no');
  });

  it.each([
    ['an error member', { error: { code: 'internal', message: 'policy store unavailable' } }],
    ['an error member that is null', { error: null }],
    ['a non-empty errors array', { errors: ['policy store unavailable'] }],
    ['errors that are not an array', { errors: { store: 'down' } }],
  ])(
    'a PDP that reports an error beside its evaluations has not decided (%s): BLOCK ambiguous_decision for every call',
    async (_n, extra) => {
      pdp.handler = (req, res) => {
        if (req.path !== '/access/v1/evaluations') return answer(res, { decision: true });
        const items = req.body.evaluations as unknown[];
        answer(res, { ...extra, evaluations: items.map(() => ({ decision: true })) });
      };
      const ds = await client().authorizeActions(calls);
      expect(ds.map((d) => d.synthesized?.code)).toEqual(Array(3).fill('ambiguous_decision'));
      expect(ds.map((d) => d.verdict)).toEqual(Array(3).fill('BLOCK'));
    },
  );

  it('an empty errors array beside the evaluations reports nothing: the answers stand', async () => {
    pdp.handler = (req, res) => {
      if (req.path !== '/access/v1/evaluations') return answer(res, { decision: true });
      const items = req.body.evaluations as unknown[];
      answer(res, { errors: [], evaluations: items.map(() => ({ decision: true })) });
    };
    const ds = await client().authorizeActions(calls);
    expect(ds.map((d) => d.verdict)).toEqual(Array(3).fill('ALLOW'));
  });

  it.each([
    ['fewer', (items: unknown[]) => items.slice(1).map(() => ({ decision: true }))],
    ['more', (items: unknown[]) => [...items, items[0]].map(() => ({ decision: true }))],
    ['none', () => []],
  ])('%s answers than calls is BLOCK ambiguous_decision for every call', async (_n, items) => {
    pdp.handler = batch(items);
    const ds = await client().authorizeActions(calls);
    expect(ds.map((d) => d.synthesized?.code)).toEqual(Array(3).fill('ambiguous_decision'));
  });

  it('an answer whose requestId names another call is BLOCK for both, the third stands', async () => {
    pdp.handler = batch((items) => [
      { decision: true, context: { requestId: (items[1]?.context as { requestId?: string } | undefined)?.requestId } },
      { decision: true },
      { decision: true, context: { requestId: (items[2]?.context as { requestId?: string } | undefined)?.requestId } },
    ]);
    const ds = await client().authorizeActions(calls);
    expect(ds.map((d) => d.synthesized?.code ?? d.verdict)).toEqual([
      'ambiguous_decision',
      'ambiguous_decision',
      'ALLOW',
    ]);
  });

  it('a response x-request-id other than the batch id is BLOCK for every call', async () => {
    pdp.handler = batch((items) => items.map(() => ({ decision: true })), { 'x-request-id': 'another' });
    const ds = await client().authorizeActions(calls);
    expect(ds.map((d) => d.synthesized?.code)).toEqual(Array(3).fill('ambiguous_decision'));
  });

  it.each([
    [
      'a single-evaluation answer',
      (_q: Received, res: ServerResponse) => answer(res, { decision: true }),
      'invalid_response',
    ],
    ['garbage', (_q: Received, res: ServerResponse) => answer(res, 'nope{'), 'invalid_response'],
    [
      // RFC 7493: one item naming a member twice makes the whole answer not I-JSON; the colons inside
      // a string make the check count the separators one by one.
      'an answer with one item naming a member twice',
      (_q: Received, res: ServerResponse) =>
        answer(
          res,
          '{"evaluations":[{"decision":true,"context":{"reason_admin":"a: b: c"}},{"decision":false,"decision":true},{"decision":true}]}',
        ),
      'invalid_response',
    ],
    ['a 503', (_q: Received, res: ServerResponse) => answer(res, {}, 503), 'pdp_status'],
    ['a reset', (_q: Received, _r: ServerResponse, s: import('node:net').Socket) => s.destroy(), 'pdp_unreachable'],
    ['a hang', () => undefined, 'pdp_timeout'],
  ])('%s is BLOCK for every call, within one deadline', async (_n, handler, code) => {
    pdp.handler = handler as Handler;
    const started = performance.now();
    // A short deadline only for the hang; the others end when the retry does (a short deadline there
    // could pass first on a busy machine).
    const ds = await client({ timeoutMs: code === 'pdp_timeout' ? 400 : 1500, retries: 1 }).authorizeActions(calls);
    expect(ds.map((d) => d.synthesized?.code)).toEqual(Array(3).fill(code));
    expect(performance.now() - started).toBeLessThan(2500);
  });

  it('never rejects: a non-array is [], a call that is not valid input is invalid_request while the others are decided', async () => {
    const pep = client();
    expect(await pep.authorizeActions(undefined as never)).toEqual([]);
    expect(await client({ discover: true }).authorizeActions([])).toEqual([]);
    expect(pdp.received).toHaveLength(0);
    const ds = await pep.authorizeActions([
      { tool: 'lookup_order', args: {} },
      null as never,
      { tool: 'x', args: { when: new Date() } },
      { tool: '', args: {} },
      { tool: 'send_email', args: {} },
    ]);
    expect(ds.map((d) => d.synthesized?.code ?? d.verdict)).toEqual([
      'ALLOW',
      'invalid_request',
      'invalid_request',
      'invalid_request',
      'ALLOW',
    ]);
    expect(evaluations()).toHaveLength(1);
    expect((evaluations()[0]?.body.evaluations as unknown[] | undefined)?.length).toBe(2);
  });

  it('interceptors run per call, and observers see each decision', async () => {
    const events: DecisionEvent[] = [];
    const pep = client({
      interceptors: [
        {
          name: 'no-email',
          stages: ['action'],
          before: (step) =>
            step.tool === 'send_email' ? { action: 'deny', reason: 'no email' } : { action: 'proceed' },
        },
      ],
      onDecision: (e) => events.push(e),
    });
    const ds = await pep.authorizeActions(calls);
    expect(ds.map((d) => [d.verdict, d.interceptor])).toEqual([
      ['ALLOW', undefined],
      ['ALLOW', undefined],
      ['BLOCK', 'no-email'],
    ]);
    expect((evaluations()[0]?.body.evaluations as unknown[] | undefined)?.length).toBe(2);
    expect(events.map((e) => e.tool)).toEqual(['lookup_order', 'refund_payment', 'send_email']);
    expect(events.map((e) => e.requestId)).toEqual(ds.map((d) => d.requestId));
  });

  it('a caller abort ends every call with BLOCK aborted', async () => {
    pdp.handler = () => undefined;
    const ctrl = new AbortController();
    const pending = client().authorizeActions(calls, { signal: ctrl.signal });
    setTimeout(() => ctrl.abort(), 20);
    expect((await pending).map((d) => d.synthesized?.code)).toEqual(Array(3).fill('aborted'));
  });
});

describe('authorizeActions over the agent-pep protocol', () => {
  it('sends concurrent single requests, one per call, each decided on its own', async () => {
    pdp.handler = (req, res) =>
      answer(res, {
        verdict: (req.body.args as { amount?: number }).amount === 900 ? 'BLOCK' : 'ALLOW',
        permitId: (req.body.args as { amount?: number }).amount === 900 ? undefined : 'p.p.p',
        requestId: req.body.requestId,
      });
    const ds = await client({ protocol: 'agent-pep' }).authorizeActions([
      { tool: 'refund_payment', args: { amount: 5 } },
      { tool: 'refund_payment', args: { amount: 900 } },
    ]);
    expect(ds.map((d) => d.verdict)).toEqual(['ALLOW', 'BLOCK']);
    expect(pdp.received.map((r) => r.path)).toEqual(['/api/policy/authorize', '/api/policy/authorize']);
    expect(pdp.received.map((r) => r.body.requestId).sort()).toEqual(ds.map((d) => d.requestId).sort());
  });
});

describe('options', () => {
  it('protocol must be agent-pep or authzen, and discover needs authzen', () => {
    const base = { pdpUrl: 'http://127.0.0.1:1', agentId: 'a', session: 's' };
    expect(() => createPep({ ...base, protocol: 'grpc' as never })).toThrow(
      expect.objectContaining({ option: 'protocol' }),
    );
    expect(() => createPep({ ...base, discover: true })).toThrow(expect.objectContaining({ option: 'discover' }));
    expect(() => createPep({ ...base, protocol: 'authzen', discover: 'yes' as never })).toThrow(
      expect.objectContaining({ option: 'discover' }),
    );
  });
});
