/**
 * The dev PDP speaks AuthZEN 1.0 (CONTRACT.md section 9) on the same latches, permits, escalations
 * and evidence as its native protocol: single evaluations, batches with the three semantics, discovery.
 */
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { actionHash } from '../../../../src/permit/hash.js';
import { postJson } from '../../../../test/support/dev-pdp-http.js';
import { PHONE_REDACTION, REFUND_REVIEW } from '../../../../test/support/policies.js';
import { type DevPdp, type RefusedRequest, startDevPdp } from '../../src/index.js';

const POLICY = {
  agents: ['support-ai'],
  latches: [
    REFUND_REVIEW,
    PHONE_REDACTION,
    { id: 'bank', stage: 'action', tool: 'bank_*', verdict: 'BLOCK', reason: 'no banking tools' },
    { id: 'cap', stage: 'action', tool: 'search_*', verdict: 'WARN', setArgs: { 'args.limit': 10 }, reason: 'capped' },
    { id: 'mail-secrets', stage: 'context_egress', tool: '*read_email*', content: 'password', verdict: 'BLOCK' },
  ],
};

let pdp: DevPdp;
let jwks: ReturnType<typeof createRemoteJWKSet>;
const refusals: RefusedRequest[] = [];
beforeAll(async () => {
  pdp = await startDevPdp({ policy: POLICY, apiKey: 'k', log: (r) => refusals.push(r) });
  jwks = createRemoteJWKSet(new URL(pdp.jwksUrl));
});
afterAll(() => pdp.close());

const auth = { authorization: 'Bearer k' };
let n = 0;
const subject = { type: 'agent', id: 'support-ai' };
const ctx = (extra: Record<string, unknown> = {}) => ({ session: 'sess-1', requestId: `az-${++n}`, ...extra });
const call = (tool: string, args: Record<string, unknown>) => ({
  subject,
  action: { name: 'call' },
  resource: { type: 'tool', id: tool, properties: { args } },
  context: ctx(),
});
const textStage = (stage: string, content: string, tool?: string) => {
  const context = ctx();
  return {
    subject,
    action: { name: stage },
    resource: { type: 'content', id: context.requestId, properties: { content, ...(tool ? { tool } : {}) } },
    context,
  };
};

const evaluate = (body: unknown, headers: Record<string, string> = {}) =>
  postJson(pdp.url, '/access/v1/evaluation', body, { headers: { ...auth, ...headers } });
const evaluateMany = (body: unknown) => postJson(pdp.url, '/access/v1/evaluations', body, { headers: auth });

async function claimsOf(permit: unknown) {
  const { payload } = await jwtVerify(permit as string, jwks, { issuer: pdp.issuer, audience: 'agent-pep' });
  return payload;
}

describe('POST /access/v1/evaluation', () => {
  test('an ALLOW is decision true with a permit bound to agent, session, tool and args; x-request-id echoed', async () => {
    const args = { orderId: 'o1', amount: 20 };
    const body = call('refund_payment', args);
    const reply = await evaluate(body, { 'x-request-id': body.context.requestId });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('x-request-id')).toBe(body.context.requestId);
    expect(reply.body).toEqual({
      decision: true,
      context: { verdict: 'ALLOW', decisionId: expect.any(String), permitId: expect.any(String), sessionLabels: [] },
    });
    const claims = await claimsOf((reply.body.context as { permitId: string }).permitId);
    expect(claims).toMatchObject({
      sub: 'support-ai',
      sid: 'sess-1',
      tool: 'refund_payment',
      act_hash: actionHash('refund_payment', args),
    });
  });

  test('an x-request-id that differs from context.requestId is a 400', async () => {
    const reply = await evaluate(call('refund_payment', {}), { 'x-request-id': 'another-id' });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('bad_request');
  });

  test('a BLOCK is decision false with verdict and reason_admin, no permit', async () => {
    const reply = await evaluate(call('bank_transfer', {}));
    expect(reply.body).toEqual({
      decision: false,
      context: {
        verdict: 'BLOCK',
        decisionId: expect.any(String),
        reason_admin: 'no banking tools',
        latches: ['bank'],
        sessionLabels: [],
      },
    });
  });

  test('an ESCALATE is decision false with an escalationId; the same escalation book as the native protocol', async () => {
    const args = { orderId: 'o9', amount: 900 };
    const held = await evaluate(call('refund_payment', args));
    expect(held.body).toMatchObject({
      decision: false,
      context: { verdict: 'ESCALATE', escalationId: expect.any(String) },
    });
    pdp.resolveEscalation((held.body.context as { escalationId: string }).escalationId, 'approve');
    const approved = await evaluate(call('refund_payment', args));
    expect(approved.body).toMatchObject({
      decision: true,
      context: { verdict: 'ALLOW', permitId: expect.any(String) },
    });
  });

  test('a setArgs WARN is decision true with transformedArgs, and the permit binds them', async () => {
    const reply = await evaluate(call('search_orders', { q: 'late', limit: 999 }));
    const context = reply.body.context as Record<string, unknown>;
    expect(reply.body.decision).toBe(true);
    expect(context).toMatchObject({ verdict: 'WARN', transformedArgs: { q: 'late', limit: 10 } });
    expect((await claimsOf(context.permitId)).act_hash).toBe(actionHash('search_orders', { q: 'late', limit: 10 }));
  });

  test('a text WARN is decision true with transformedContent; no permit', async () => {
    const reply = await evaluate(textStage('output', 'call 555-123-4567'));
    expect(reply.body).toEqual({
      decision: true,
      context: {
        verdict: 'WARN',
        decisionId: expect.any(String),
        reason_admin: 'phone numbers are redacted',
        latches: ['phone-redaction'],
        transformedContent: 'call [phone]',
        sessionLabels: [],
      },
    });
  });

  test('context_egress carries the tool, and a latch tool pattern matches it', async () => {
    const fromMail = await evaluate(textStage('context_egress', 'your password is x', 'gmail_read_email'));
    expect(fromMail.body).toMatchObject({ decision: false, context: { verdict: 'BLOCK', latches: ['mail-secrets'] } });
    const fromSearch = await evaluate(textStage('context_egress', 'your password is x', 'web_search'));
    expect(fromSearch.body).toMatchObject({ decision: true, context: { verdict: 'ALLOW' } });
  });

  test('a simulated request gets no permit', async () => {
    const body = { ...call('refund_payment', { amount: 1 }), context: ctx({ simulated: true }) };
    const reply = await evaluate(body);
    expect(reply.body).toMatchObject({ decision: true, context: { verdict: 'ALLOW' } });
    expect(reply.body.context).not.toHaveProperty('permitId');
    expect(pdp.evidence().at(-1)).toMatchObject({ simulated: true, requestId: body.context.requestId });
  });

  test('every decision is in the evidence log with the request id from the context', async () => {
    const body = call('refund_payment', { amount: 2 });
    await evaluate(body);
    expect(pdp.evidence().at(-1)).toMatchObject({
      requestId: body.context.requestId,
      agentId: 'support-ai',
      session: 'sess-1',
      stage: 'action',
      tool: 'refund_payment',
      argsHash: actionHash('refund_payment', { amount: 2 }),
    });
  });

  test.each<[string, unknown, number, string]>([
    [
      'a subject that is not an agent',
      { ...call('t', {}), subject: { type: 'user', id: 'support-ai' } },
      400,
      'bad_request',
    ],
    ['an unknown action', { ...call('t', {}), action: { name: 'delete' } }, 400, 'bad_request'],
    ['a call on a content resource', { ...call('t', {}), resource: { type: 'content', id: 'x' } }, 400, 'bad_request'],
    ['no context', { ...call('t', {}), context: undefined }, 400, 'bad_request'],
    [
      'an agent the policy does not list',
      { ...call('t', {}), subject: { type: 'agent', id: 'x' } },
      404,
      'unknown_agent',
    ],
    ['a tool name over 256 characters', call('t'.repeat(257), {}), 400, 'bad_request'],
  ])('%s is refused: %i %s', async (_what, body, status, code) => {
    const reply = await evaluate(body);
    expect(reply.status).toBe(status);
    expect(reply.body).toEqual({ code, message: expect.any(String) });
  });

  test('the API key is required', async () => {
    const reply = await postJson(pdp.url, '/access/v1/evaluation', call('t', {}));
    expect(reply.status).toBe(401);
    expect(reply.body.code).toBe('unauthorized');
  });
});

describe('POST /access/v1/evaluations', () => {
  test('execute_all (default): top-level defaults, each item decided on its own, in order', async () => {
    const items = [
      { resource: { type: 'tool', id: 'refund_payment', properties: { args: { amount: 1 } } }, context: ctx() },
      { resource: { type: 'tool', id: 'refund_payment', properties: { args: { amount: 2 } } }, context: ctx() },
      { resource: { type: 'tool', id: 'bank_wire', properties: { args: {} } }, context: ctx() },
      { resource: { type: 'tool', id: 'refund_payment', properties: { args: { amount: 900 } } }, context: ctx() },
    ];
    const before = pdp.evidence().length;
    const reply = await evaluateMany({ subject, action: { name: 'call' }, evaluations: items });
    expect(reply.status).toBe(200);
    const results = reply.body.evaluations as { decision: boolean; context: Record<string, unknown> }[];
    expect(results.map((r) => [r.decision, r.context.verdict])).toEqual([
      [true, 'ALLOW'],
      [true, 'ALLOW'],
      [false, 'BLOCK'],
      [false, 'ESCALATE'],
    ]);
    // two calls to the same tool with different args: two permits, each bound to its own args
    const [a, b] = await Promise.all([claimsOf(results[0]?.context.permitId), claimsOf(results[1]?.context.permitId)]);
    expect(a.act_hash).toBe(actionHash('refund_payment', { amount: 1 }));
    expect(b.act_hash).toBe(actionHash('refund_payment', { amount: 2 }));
    expect(a.jti).not.toBe(b.jti);
    expect(
      pdp
        .evidence()
        .slice(before)
        .map((r) => r.requestId),
    ).toEqual(items.map((i) => i.context.requestId));
  });

  test('an item member replaces the top-level default whole', async () => {
    const reply = await evaluateMany({
      subject,
      action: { name: 'call' },
      resource: { type: 'tool', id: 'bank_wire', properties: { args: {} } },
      context: { session: 'sess-top' },
      evaluations: [
        { context: ctx() },
        {
          action: { name: 'output' },
          resource: { type: 'content', id: 'r', properties: { content: 'hi' } },
          context: ctx(),
        },
      ],
    });
    const results = reply.body.evaluations as { decision: boolean; context: Record<string, unknown> }[];
    expect(results.map((r) => r.context.verdict)).toEqual(['BLOCK', 'ALLOW']);
    expect(pdp.evidence().at(-1)).toMatchObject({ session: 'sess-1', stage: 'output' });
  });

  test('deny_on_first_deny stops after the first false decision', async () => {
    const reply = await evaluateMany({
      subject,
      action: { name: 'call' },
      context: { session: 's' },
      options: { evaluations_semantic: 'deny_on_first_deny' },
      evaluations: [
        { resource: { type: 'tool', id: 'refund_payment', properties: { args: {} } } },
        { resource: { type: 'tool', id: 'bank_x', properties: { args: {} } } },
        { resource: { type: 'tool', id: 'refund_payment', properties: { args: {} } } },
      ],
    });
    expect((reply.body.evaluations as { decision: boolean }[]).map((r) => r.decision)).toEqual([true, false]);
  });

  test('permit_on_first_permit stops after the first true decision', async () => {
    const reply = await evaluateMany({
      subject,
      action: { name: 'call' },
      context: { session: 's' },
      options: { evaluations_semantic: 'permit_on_first_permit' },
      evaluations: [
        { resource: { type: 'tool', id: 'bank_x', properties: { args: {} } } },
        { resource: { type: 'tool', id: 'refund_payment', properties: { args: {} } } },
        { resource: { type: 'tool', id: 'bank_y', properties: { args: {} } } },
      ],
    });
    expect((reply.body.evaluations as { decision: boolean }[]).map((r) => r.decision)).toEqual([false, true]);
  });

  test('an item that cannot be decided is decision false with an error; the others stand', async () => {
    const seen = refusals.length;
    const reply = await evaluateMany({
      action: { name: 'call' },
      resource: { type: 'tool', id: 'refund_payment', properties: { args: {} } },
      context: { session: 's' },
      evaluations: [{ subject }, { subject: { type: 'agent', id: 'stranger' } }, { subject }],
    });
    const results = reply.body.evaluations as { decision: boolean; context: Record<string, unknown> }[];
    expect(results.map((r) => r.decision)).toEqual([true, false, true]);
    expect(results[1]?.context).toEqual({
      verdict: 'BLOCK',
      error: { status: 404, code: 'unknown_agent', message: expect.any(String) },
    });
    expect(refusals.slice(seen)).toEqual([
      { status: 404, code: 'unknown_agent', method: 'POST', route: '/access/v1/evaluations' },
    ]);
  });

  test('no evaluations: the request is one evaluation, answered as one', async () => {
    const reply = await evaluateMany(call('refund_payment', { amount: 3 }));
    expect(reply.body).toMatchObject({ decision: true, context: { verdict: 'ALLOW' } });
  });

  test.each<[string, Record<string, unknown>]>([
    ['an unknown semantic', { options: { evaluations_semantic: 'first_wins' }, evaluations: [{}] }],
    ['evaluations not an array', { evaluations: {} }],
    ['too many items', { evaluations: Array.from({ length: 65 }, () => ({})) }],
  ])('%s is a 400 bad_request', async (_what, body) => {
    const reply = await evaluateMany({ ...call('t', {}), ...body });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('bad_request');
  });
});

describe('GET /.well-known/authzen-configuration', () => {
  test('names this PDP and its two endpoints, without a key', async () => {
    const res = await fetch(`${pdp.url}/.well-known/authzen-configuration`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      policy_decision_point: pdp.url,
      access_evaluation_endpoint: `${pdp.url}/access/v1/evaluation`,
      access_evaluations_endpoint: `${pdp.url}/access/v1/evaluations`,
    });
  });
});

describe('faults apply to the AuthZEN endpoints too', () => {
  test('status fault', async () => {
    pdp.setFault({ kind: 'status', status: 503 });
    try {
      const reply = await evaluate(call('refund_payment', {}));
      expect(reply.status).toBe(503);
      expect(reply.body.code).toBe('fault_status');
    } finally {
      pdp.setFault(null);
    }
  });
});
