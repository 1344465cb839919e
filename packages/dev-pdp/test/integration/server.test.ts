import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CompactSign,
  type CryptoKey,
  createRemoteJWKSet,
  decodeProtectedHeader,
  importJWK,
  type JWK,
  jwtVerify,
} from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { evidenceRecordHash } from '../../../../src/evidence/record.js';
import { type EvidenceRecord, verifyEvidence } from '../../../../src/evidence/verify.js';
import { actionHash } from '../../../../src/permit/hash.js';
import { expectOptionError } from '../../../../test/support/options.js';
import { PHONE_REDACTION, REFUND_REVIEW } from '../../../../test/support/policies.js';
import { type DevPdp, type DevPdpOptions, EscalationError, startDevPdp } from '../../src/index.js';

const POLICY = {
  agents: ['support-ai', 'ops-ai'],
  latches: [
    REFUND_REVIEW,
    { id: 'bank', stage: 'action', tool: 'bank_*', verdict: 'BLOCK', reason: 'no banking tools' },
    { id: 'audit-note', stage: 'action', tool: 'export_*', verdict: 'WARN', reason: 'exports are logged' },
    PHONE_REDACTION,
    { id: 'tone', stage: 'output', content: 'guarantee', verdict: 'WARN', reason: 'no guarantees' },
    { id: 'injection', stage: 'input', content: 'ignore previous instructions', verdict: 'BLOCK', reason: 'injection' },
    { id: 'wire-review', stage: 'delivery', content: 'wire transfer', verdict: 'ESCALATE', reason: 'review' },
  ],
};

interface Reply {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

let counter = 0;
const nextId = () => `req-${++counter}`;

async function post(
  pdp: DevPdp,
  body: unknown,
  options: { headers?: Record<string, string>; path?: string; raw?: string | Uint8Array } = {},
): Promise<Reply> {
  const requestId = (body as { requestId?: string } | null)?.requestId;
  const res = await fetch(pdp.url + (options.path ?? '/api/policy/authorize'), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      ...(typeof requestId === 'string' ? { 'x-request-id': requestId } : {}),
      ...options.headers,
    },
    body: options.raw ?? JSON.stringify(body),
    signal: AbortSignal.timeout(5000),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: JSON.parse(text) as Record<string, unknown> };
}

function act(tool: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return { agentId: 'support-ai', session: 'sess-1', stage: 'action', requestId: nextId(), tool, args, ...extra };
}

function text(stage: string, content: string, extra: Record<string, unknown> = {}) {
  return { agentId: 'support-ai', session: 'sess-1', stage, requestId: nextId(), content, ...extra };
}

const started: DevPdp[] = [];
async function start(options: Partial<DevPdpOptions> = {}): Promise<DevPdp> {
  const pdp = await startDevPdp({ policy: POLICY, port: 0, log: false, ...options });
  started.push(pdp);
  return pdp;
}

afterAll(async () => {
  await Promise.all(started.map((pdp) => pdp.close()));
});

describe('decisions over HTTP', () => {
  let pdp: DevPdp;
  let jwks: ReturnType<typeof createRemoteJWKSet>;
  beforeAll(async () => {
    pdp = await start();
    jwks = createRemoteJWKSet(new URL(pdp.jwksUrl));
  });

  test('defaults: 127.0.0.1, issuer = url, jwks under the url', () => {
    expect(pdp.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(pdp.issuer).toBe(pdp.url);
    expect(pdp.jwksUrl).toBe(`${pdp.url}/.well-known/jwks.json`);
    expect(pdp.audience).toBe('agent-pep');
  });

  test('an action ALLOW carries a permit that verifies against the served JWKS with the section 4 claims', async () => {
    const args = { orderId: 'ord_1842', amount: 129 };
    const body = act('refundPayment', args);
    const reply = await post(pdp, body);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(reply.headers.get('x-request-id')).toBe(body.requestId);
    expect(reply.body).toMatchObject({ verdict: 'ALLOW', requestId: body.requestId, stage: 'action', latches: [] });
    expect(reply.body).not.toHaveProperty('simulated');
    expect(reply.body).not.toHaveProperty('transformedContent');
    expect(reply.body).not.toHaveProperty('transformedArgs');
    const permit = reply.body.permitId as string;
    const { payload, protectedHeader } = await jwtVerify(permit, jwks, {
      issuer: pdp.issuer,
      audience: 'agent-pep',
      typ: 'permit+jwt',
      algorithms: ['EdDSA'],
    });
    expect(protectedHeader).toEqual({ alg: 'EdDSA', kid: pdp.kid, typ: 'permit+jwt' });
    expect(payload).toMatchObject({
      sub: 'support-ai',
      sid: 'sess-1',
      tool: 'refund_payment',
      act_hash: actionHash('refund_payment', args),
      decision_id: reply.body.decisionId,
    });
    expect(payload.exp! - payload.iat!).toBe(60);
    expect(payload.nbf).toBe(payload.iat);
    expect(typeof payload.jti).toBe('string');
    const again = await post(pdp, act('refundPayment', args));
    const second = await jwtVerify(again.body.permitId as string, jwks, { issuer: pdp.issuer, audience: 'agent-pep' });
    expect(second.payload.jti).not.toBe(payload.jti);
  });

  test('an action WARN carries a permit; BLOCK and ESCALATE carry none', async () => {
    const warn = await post(pdp, act('export_customers', { format: 'csv' }));
    expect(warn.body).toMatchObject({ verdict: 'WARN', latches: ['audit-note'], reason: 'exports are logged' });
    const { payload } = await jwtVerify(warn.body.permitId as string, jwks, {
      issuer: pdp.issuer,
      audience: 'agent-pep',
    });
    expect(payload.act_hash).toBe(actionHash('export_customers', { format: 'csv' }));

    const block = await post(pdp, act('bank_manager_transfer_funds', { to: 'x' }));
    expect(block.body).toMatchObject({ verdict: 'BLOCK', latches: ['bank'], reason: 'no banking tools' });
    expect(block.body).not.toHaveProperty('permitId');

    const banking = await post(pdp, act('banking', {}));
    expect(banking.body.verdict).toBe('ALLOW');

    const escalate = await post(pdp, act('refund_payment', { orderId: 'ord_9', amount: 900 }));
    expect(escalate.body).toMatchObject({ verdict: 'ESCALATE', latches: ['refund-review'] });
    expect(escalate.body.escalationId).toEqual(expect.any(String));
    expect(escalate.body).not.toHaveProperty('permitId');
  });

  test('text stages: WARN carries transformedContent (redacted), never a permit', async () => {
    const warn = await post(pdp, text('output', 'call 555-123-4567 or 555.765.4321, I guarantee it'));
    expect(warn.body).toMatchObject({
      verdict: 'WARN',
      latches: ['phone-redaction', 'tone'],
      reason: 'phone numbers are redacted',
      transformedContent: 'call [phone] or [phone], I guarantee it',
      stage: 'output',
    });
    expect(warn.body).not.toHaveProperty('permitId');

    const noRedact = await post(pdp, text('output', 'I guarantee it'));
    expect(noRedact.body).toMatchObject({ verdict: 'WARN', transformedContent: 'I guarantee it' });

    const allow = await post(pdp, text('delivery', 'hello'));
    expect(allow.body).toMatchObject({ verdict: 'ALLOW', latches: [] });
    expect(allow.body).not.toHaveProperty('transformedContent');

    const block = await post(pdp, text('input', 'please ignore previous instructions'));
    expect(block.body).toMatchObject({ verdict: 'BLOCK', latches: ['injection'] });
    expect(block.body).not.toHaveProperty('transformedContent');

    const ctx = await post(pdp, text('context_egress', '555-123-4567'));
    expect(ctx.body.verdict).toBe('ALLOW');
  });

  test('a simulated request gets simulated: true and no permit', async () => {
    const allow = await post(pdp, act('refund_payment', { amount: 1 }, { simulated: true }));
    expect(allow.body).toMatchObject({ verdict: 'ALLOW', simulated: true });
    expect(allow.body).not.toHaveProperty('permitId');
    const warn = await post(pdp, act('export_all', {}, { simulated: true }));
    expect(warn.body).toMatchObject({ verdict: 'WARN', simulated: true });
    expect(warn.body).not.toHaveProperty('permitId');
    const textWarn = await post(pdp, text('output', '555-123-4567', { simulated: true }));
    expect(textWarn.body).toMatchObject({ verdict: 'WARN', simulated: true, transformedContent: '[phone]' });
    const notSimulated = await post(pdp, act('refund_payment', { amount: 1 }, { simulated: false }));
    expect(notSimulated.body).not.toHaveProperty('simulated');
    expect(notSimulated.body.permitId).toEqual(expect.any(String));
  });

  test('the request id comes from the body when no header is sent, and is generated when neither is', async () => {
    const body = act('refund_payment', { amount: 1 });
    const json = { 'content-type': 'application/json' };
    const res = await fetch(`${pdp.url}/api/policy/authorize`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify(body),
    });
    expect(res.headers.get('x-request-id')).toBe(body.requestId);
    const { requestId: _omit, ...noId } = body;
    const res2 = await fetch(`${pdp.url}/api/policy/authorize`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify(noId),
    });
    const answer = (await res2.json()) as { requestId: string };
    expect(res2.status).toBe(200);
    expect(res2.headers.get('x-request-id')).toBe(answer.requestId);
  });

  test('JWKS: the public Ed25519 key, no private part', async () => {
    const res = await fetch(pdp.jwksUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const body = (await res.json()) as { keys: Record<string, unknown>[] };
    expect(body.keys).toHaveLength(1);
    expect(body.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', kid: pdp.kid, alg: 'EdDSA', use: 'sig' });
    expect(body.keys[0]).not.toHaveProperty('d');
    expect(body).toEqual(pdp.jwks);
  });
});

describe('options', () => {
  test('audience and permitTtlSec go into the permit', async () => {
    const pdp = await start({ audience: 'payments-service', permitTtlSec: 300 });
    const reply = await post(pdp, act('refund_payment', { amount: 1 }));
    const { payload } = await jwtVerify(reply.body.permitId as string, createRemoteJWKSet(new URL(pdp.jwksUrl)), {
      issuer: pdp.issuer,
      audience: 'payments-service',
    });
    expect(payload.exp! - payload.iat!).toBe(300);
  });

  test('a given key (JWK) is used, and its kid is the RFC 7638 thumbprint', async () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    const jwk = privateKey.export({ format: 'jwk' });
    const pdp = await start({ key: jwk as JWK });
    const other = await start({ key: privateKey });
    expect(pdp.kid).toBe(other.kid);
    const reply = await post(pdp, act('refund_payment', { amount: 1 }));
    const publicKey = createPublicKey(privateKey);
    await expect(jwtVerify(reply.body.permitId as string, publicKey)).resolves.toBeTruthy();
  });

  test.each<[string, Partial<DevPdpOptions>]>([
    ['port', { port: -1 }],
    ['port', { port: 1.5 }],
    ['permitTtlSec', { permitTtlSec: 301 }],
    ['permitTtlSec', { permitTtlSec: 0 }],
    ['apiKey', { apiKey: '' }],
    ['audience', { audience: '' }],
    ['key', { key: { kty: 'oct', k: 'AAAA' } }],
    ['faults', { faults: { kind: 'hang' } } as Partial<DevPdpOptions>],
    ['policy', { policy: { agents: [], latches: [] } }],
  ])('bad option %s rejects with a TypeError naming it in err.option', async (option, options) => {
    const error = await startDevPdp({ policy: POLICY, log: false, ...options }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as { option?: unknown }).option).toBe(option);
  });

  test('an invalid policy rejects with every problem by path', async () => {
    const error = await startDevPdp({
      policy: { agents: ['a'], latches: [{ id: 'x', stage: 'input', content: '(', verdict: 'BLOCK' }, { id: 'y' }] },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as { code: string }).code).toBe('policy_invalid');
    const paths = (error as { issues: { path: string }[] }).issues.map((i) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['latches[0].content', 'latches[1].stage', 'latches[1].verdict']));
  });
});

describe('refusals', () => {
  let pdp: DevPdp;
  beforeAll(async () => {
    pdp = await start({ apiKey: 'test-key-1234', maxBodyBytes: 64 * 1024 });
  });
  const auth = { authorization: 'Bearer test-key-1234' };

  test.each<[string, Record<string, string>]>([
    ['missing', {}],
    ['wrong', { authorization: 'Bearer test-key-1235' }],
    ['prefix', { authorization: 'Bearer test-key-123' }],
    ['not bearer', { authorization: 'Basic dGVzdC1rZXktMTIzNA==' }],
  ])('401 for a %s API key, with a JSON error and the request id', async (_name, headers) => {
    const body = act('refund_payment', { amount: 1 });
    const reply = await post(pdp, body, { headers });
    expect(reply.status).toBe(401);
    expect(reply.headers.get('x-request-id')).toBe(body.requestId);
    expect(reply.body).toEqual({ code: 'unauthorized', message: expect.any(String) });
    expect(JSON.stringify(reply.body)).not.toContain('test-key');
  });

  test('the right API key is accepted', async () => {
    expect((await post(pdp, act('refund_payment', { amount: 1 }), { headers: auth })).status).toBe(200);
    expect(
      (await post(pdp, act('refund_payment', { amount: 1 }), { headers: { authorization: 'bearer test-key-1234' } }))
        .status,
    ).toBe(200);
  });

  test('404 for an agent the policy does not list', async () => {
    const body = { ...act('refund_payment', { amount: 1 }), agentId: 'rogue-ai' };
    const reply = await post(pdp, body, { headers: auth });
    expect(reply.status).toBe(404);
    expect(reply.body).toMatchObject({ code: 'unknown_agent' });
    expect(reply.headers.get('x-request-id')).toBe(body.requestId);
  });

  const base = { agentId: 'support-ai', session: 's', requestId: 'r-400' };
  test.each<[string, unknown]>([
    ['an array body', []],
    ['a string body', 'hello'],
    ['no agentId', { session: 's', stage: 'input', content: 'x' }],
    ['agentId not a string', { ...base, agentId: 7, stage: 'input', content: 'x' }],
    ['empty session', { ...base, session: '', stage: 'input', content: 'x' }],
    ['unknown stage', { ...base, stage: 'INPUT', content: 'x' }],
    ['content missing on a text stage', { ...base, stage: 'output' }],
    ['content not a string', { ...base, stage: 'output', content: 5 }],
    ['tool missing on action', { ...base, stage: 'action', args: {} }],
    ['args missing on action', { ...base, stage: 'action', tool: 'refund_payment' }],
    ['args an array', { ...base, stage: 'action', tool: 'refund_payment', args: [] }],
    ['tool normalizing to nothing', { ...base, stage: 'action', tool: ' .-_ ', args: {} }],
    ['tool not a string', { ...base, stage: 'action', tool: 1, args: {} }],
    ['simulated not a boolean', { ...base, stage: 'input', content: 'x', simulated: 'yes' }],
    ['requestId not a string', { ...base, requestId: 5, stage: 'input', content: 'x' }],
    ['content on the action stage', { ...base, stage: 'action', tool: 't', args: {}, content: 'x' }],
    ['tool on a text stage', { ...base, stage: 'input', content: 'x', tool: 't' }],
  ])('400 for %s', async (_name, body) => {
    const reply = await post(pdp, body, { headers: auth });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ code: 'bad_request', message: expect.any(String) });
    expect(reply.headers.get('x-request-id')).toBeTruthy();
  });

  test('400 for bad JSON, bad UTF-8, a lone surrogate in args, and a body/header request id mismatch', async () => {
    expect((await post(pdp, null, { headers: auth, raw: '{"agentId":' })).status).toBe(400);
    expect((await post(pdp, null, { headers: auth, raw: new Uint8Array([0x7b, 0xff, 0x7d]) })).status).toBe(400);
    const surrogate = '{"agentId":"support-ai","session":"s","stage":"action","tool":"t","args":{"a":"\\ud800"}}';
    expect((await post(pdp, null, { headers: auth, raw: surrogate })).status).toBe(400);
    const mismatch = await post(pdp, act('t', {}), { headers: { ...auth, 'x-request-id': 'other' } });
    expect(mismatch.status).toBe(400);
    expect(mismatch.headers.get('x-request-id')).toBe('other');
  });

  test('413 for a body over the limit', async () => {
    const body = act('t', { blob: 'x'.repeat(70 * 1024) });
    const reply = await post(pdp, body, { headers: auth });
    expect(reply.status).toBe(413);
    expect(reply.body).toMatchObject({ code: 'too_large' });
  });

  test('404 for anything else, with the request id echoed', async () => {
    for (const [method, path] of [
      ['GET', '/'],
      ['GET', '/api/policy/authorize'],
      ['POST', '/api/policy/other'],
      ['DELETE', '/api/escalations/x'],
    ] as const) {
      const res = await fetch(pdp.url + path, { method, headers: { 'x-request-id': 'rid-404' } });
      expect(res.status).toBe(404);
      expect(res.headers.get('x-request-id')).toBe('rid-404');
      expect(((await res.json()) as { code: string }).code).toBe('not_found');
    }
  });

  test('refusals write no evidence', async () => {
    const before = pdp.evidence().length;
    await post(pdp, act('refund_payment', { amount: 1 }));
    await post(pdp, { ...act('refund_payment', { amount: 1 }), agentId: 'rogue-ai' }, { headers: auth });
    expect(pdp.evidence().length).toBe(before);
  });
});

describe('escalations', () => {
  let pdp: DevPdp;
  beforeAll(async () => {
    pdp = await start({ apiKey: 'k-escalations', reviewerApiKey: 'k-reviewer' });
  });
  const auth = { authorization: 'Bearer k-escalations' };
  const reviewer = { authorization: 'Bearer k-reviewer' };
  const big = { orderId: 'ord_7', amount: 900 };

  async function escalate(args: Record<string, unknown> = big, session = 'sess-1') {
    const reply = await post(pdp, { ...act('refund_payment', args), session }, { headers: auth });
    expect(reply.body.verdict).toBe('ESCALATE');
    return reply.body.escalationId as string;
  }

  test('approve: the next identical request is a one-time ALLOW with a permit', async () => {
    const id = await escalate();
    const other = await escalate({ ...big, amount: 901 }); // a different act_hash stays held
    pdp.resolveEscalation(id, 'approve');
    const differentArgs = await post(pdp, act('refund_payment', { ...big, amount: 901 }), { headers: auth });
    expect(differentArgs.body.verdict).toBe('ESCALATE');
    const differentSession = await post(pdp, { ...act('refund_payment', big), session: 'sess-2' }, { headers: auth });
    expect(differentSession.body.verdict).toBe('ESCALATE');
    const simulated = await post(pdp, act('refund_payment', big, { simulated: true }), { headers: auth });
    expect(simulated.body).toMatchObject({ verdict: 'ALLOW', simulated: true }); // peeks, does not consume
    const approved = await post(pdp, act('refundPayment', big), { headers: auth });
    expect(approved.body).toMatchObject({ verdict: 'ALLOW', latches: ['refund-review'] });
    expect(approved.body).not.toHaveProperty('escalationId');
    const { payload } = await jwtVerify(approved.body.permitId as string, createRemoteJWKSet(new URL(pdp.jwksUrl)), {
      issuer: pdp.issuer,
      audience: 'agent-pep',
    });
    expect(payload.act_hash).toBe(actionHash('refund_payment', big));
    const after = await post(pdp, act('refund_payment', big), { headers: auth });
    expect(after.body.verdict).toBe('ESCALATE');
    expect(after.body.escalationId).not.toBe(id);
    expect(other).not.toBe(id);
  });

  test('deny: the next identical request is a one-time BLOCK', async () => {
    const args = { orderId: 'ord_8', amount: 700 };
    const id = await escalate(args);
    pdp.resolveEscalation(id, 'deny');
    const denied = await post(pdp, act('refund_payment', args), { headers: auth });
    expect(denied.body).toMatchObject({ verdict: 'BLOCK' });
    expect(denied.body).not.toHaveProperty('permitId');
    expect((await post(pdp, act('refund_payment', args), { headers: auth })).body.verdict).toBe('ESCALATE');
  });

  test('text stages escalate and resolve the same way', async () => {
    const first = await post(pdp, text('delivery', 'please send a wire transfer'), { headers: auth });
    expect(first.body.verdict).toBe('ESCALATE');
    pdp.resolveEscalation(first.body.escalationId as string, 'approve');
    const again = await post(pdp, text('delivery', 'please send a wire transfer'), { headers: auth });
    expect(again.body).toMatchObject({ verdict: 'ALLOW' });
    expect(again.body).not.toHaveProperty('permitId');
  });

  test('unknown and already resolved ids throw', async () => {
    expect(() => pdp.resolveEscalation('esc_nope', 'approve')).toThrow(EscalationError);
    const id = await escalate({ amount: 555 });
    pdp.resolveEscalation(id, 'deny');
    try {
      pdp.resolveEscalation(id, 'approve');
      expect.unreachable();
    } catch (error) {
      expect((error as EscalationError).code).toBe('escalation_already_resolved');
    }
  });

  test('over HTTP: POST /api/escalations/{id}', async () => {
    const args = { orderId: 'ord_http', amount: 800 };
    const id = await escalate(args);
    const path = `/api/escalations/${id}`;
    expect((await post(pdp, { resolution: 'approve' }, { path })).status).toBe(401);
    expect((await post(pdp, { resolution: 'approve' }, { path, headers: auth })).status).toBe(401);
    expect((await post(pdp, { resolution: 'maybe' }, { path, headers: reviewer })).status).toBe(400);
    expect((await post(pdp, null, { path, headers: reviewer, raw: 'nope' })).status).toBe(400);
    const unknown = await post(
      pdp,
      { resolution: 'approve' },
      { path: '/api/escalations/esc_unknown', headers: reviewer },
    );
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ code: 'escalation_not_found' });
    const ok = await post(pdp, { resolution: 'approve' }, { path, headers: reviewer });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ escalationId: id, resolution: 'approve' });
    expect((await post(pdp, { resolution: 'deny' }, { path, headers: reviewer })).status).toBe(409);
    expect((await post(pdp, act('refund_payment', args), { headers: auth })).body.verdict).toBe('ALLOW');

    const id2 = await escalate({ ...args, amount: 801 });
    await post(pdp, { resolution: 'deny' }, { path: `/api/escalations/${id2}`, headers: reviewer });
    expect((await post(pdp, act('refund_payment', { ...args, amount: 801 }), { headers: auth })).body.verdict).toBe(
      'BLOCK',
    );
  });
});

describe('faults', () => {
  let pdp: DevPdp;
  beforeAll(async () => {
    pdp = await start();
  });
  afterEach(() => pdp.setFault(null));

  test('hang: accepts and never answers', async () => {
    pdp.setFault({ kind: 'hang' });
    const before = pdp.evidence().length;
    const error = await fetch(`${pdp.url}/api/policy/authorize`, {
      method: 'POST',
      body: JSON.stringify(act('refund_payment', { amount: 1 })),
      signal: AbortSignal.timeout(300),
    }).catch((e: unknown) => e);
    expect((error as Error).name).toBe('TimeoutError');
    expect(pdp.evidence().length).toBe(before);
  });

  test('reset: the socket is destroyed', async () => {
    pdp.setFault({ kind: 'reset' });
    await expect(post(pdp, act('refund_payment', { amount: 1 }))).rejects.toThrow();
  });

  test('status: that status with a JSON body', async () => {
    pdp.setFault({ kind: 'status', status: 503 });
    const body = act('refund_payment', { amount: 1 });
    const reply = await post(pdp, body);
    expect(reply.status).toBe(503);
    expect(reply.body).toMatchObject({ code: 'fault_status' });
    expect(reply.headers.get('x-request-id')).toBe(body.requestId);
  });

  test('garbage: 200 application/json with a body that is not JSON', async () => {
    pdp.setFault({ kind: 'garbage' });
    const before = pdp.evidence().length;
    const res = await fetch(`${pdp.url}/api/policy/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(act('t', {})),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const bytes = await res.arrayBuffer();
    expect(() => JSON.parse(new TextDecoder().decode(bytes))).toThrow(SyntaxError);
    expect(pdp.evidence().length).toBe(before);
  });

  test('slow: headers first, then a valid decision trickled', async () => {
    pdp.setFault({ kind: 'slow', bytesPerSecond: 2000 });
    const started = Date.now();
    const res = await fetch(`${pdp.url}/api/policy/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(act('t', {})),
    });
    const headersAfter = Date.now() - started;
    const body = (await res.json()) as { verdict: string; permitId: string };
    const total = Date.now() - started;
    expect(res.status).toBe(200);
    expect(body.verdict).toBe('ALLOW');
    // a permit is ~600 bytes: at 2000 B/s the body takes a few hundred ms after the headers
    expect(total - headersAfter).toBeGreaterThan(150);
  });

  test('null behaves again; a bad fault throws', async () => {
    pdp.setFault({ kind: 'status', status: 500 });
    pdp.setFault(null);
    expect((await post(pdp, act('t', {}))).status).toBe(200);
    expectOptionError(() => pdp.setFault({ kind: 'explode' } as never), 'fault.kind');
    expectOptionError(() => pdp.setFault({ kind: 'status', status: 99 }), 'fault.status');
    expectOptionError(() => pdp.setFault({ kind: 'slow', bytesPerSecond: 0 }), 'fault.bytesPerSecond');
  });

  test('close() ends hung sockets promptly', async () => {
    const own = await startDevPdp({ policy: POLICY, log: false });
    own.setFault({ kind: 'hang' });
    const outcome = new Promise<string>((resolve) => {
      const req = httpRequest(`${own.url}/api/policy/authorize`, { method: 'POST' }, () => resolve('answered'));
      req.on('error', () => resolve('closed'));
      req.end(JSON.stringify(act('t', {})));
    });
    await new Promise((r) => setTimeout(r, 100));
    const t0 = Date.now();
    await own.close();
    expect(await outcome).toBe('closed');
    expect(Date.now() - t0).toBeLessThan(2000);
    await own.close(); // idempotent
    await expect(fetch(own.url)).rejects.toThrow();
  });
});

describe('evidence', () => {
  let dir: string;
  let pdp: DevPdp;
  let records: EvidenceRecord[];
  const secretContent = 'my number is 555-123-4567';
  const secretArgs = { orderId: 'ord_SECRET_42', amount: 42 };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agent-pep-evidence-'));
    pdp = await start({ evidencePath: join(dir, 'evidence.jsonl') });
    await post(pdp, act('refund_payment', secretArgs));
    await post(pdp, text('output', secretContent));
    await post(pdp, act('bank_transfer', secretArgs));
    await post(pdp, act('refund_payment', { amount: 1 }, { simulated: true }));
    await post(pdp, text('input', 'hi', { simulated: true }));
    records = pdp.evidence();
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('one record per decision, in order, with the contract fields', () => {
    expect(records).toHaveLength(5);
    expect(records.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(records[0]!.prevHash).toBeNull();
    expect(records[1]!.prevHash).toBe(records[0]!.hash);
    expect(Object.keys(records[0]!).sort()).toEqual(
      [
        'seq',
        'ts',
        'decisionId',
        'requestId',
        'agentId',
        'session',
        'stage',
        'verdict',
        'latches',
        'labels',
        'tool',
        'argsHash',
        'simulated',
        'prevHash',
        'hash',
        'sig',
      ].sort(),
    );
    expect(records[0]).toMatchObject({
      stage: 'action',
      verdict: 'ALLOW',
      tool: 'refund_payment',
      argsHash: actionHash('refund_payment', secretArgs),
      simulated: false,
      agentId: 'support-ai',
      session: 'sess-1',
    });
    expect(records[1]).toMatchObject({ stage: 'output', verdict: 'WARN', latches: ['phone-redaction'] });
    expect(records[1]!.contentHash).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(records[1]).not.toHaveProperty('tool');
    expect(records[2]).toMatchObject({ verdict: 'BLOCK', reason: 'no banking tools' });
    expect(records[3]).toMatchObject({ simulated: true });
    expect(new Date(records[0]!.ts).toISOString()).toBe(records[0]!.ts);
    expect(decodeProtectedHeader(records[0]!.sig)).toMatchObject({ alg: 'EdDSA', kid: pdp.kid });
  });

  test('evidence() returns copies', () => {
    const copy = pdp.evidence();
    copy[0]!.verdict = 'BLOCK';
    expect(pdp.evidence()[0]!.verdict).toBe('ALLOW');
  });

  test('no raw content or args in memory or on disk; the content hash is keyed', async () => {
    const file = await readFile(join(dir, 'evidence.jsonl'), 'utf8');
    for (const haystack of [file, JSON.stringify(records)]) {
      expect(haystack).not.toContain('555-123-4567');
      expect(haystack).not.toContain('ord_SECRET_42');
    }
    const { createHash } = await import('node:crypto');
    expect(records[1]!.contentHash).not.toBe(createHash('sha256').update(secretContent).digest('base64url'));
  });

  test('the JSON Lines file holds the same records', async () => {
    await pdp.close();
    const lines = (await readFile(join(dir, 'evidence.jsonl'), 'utf8')).trimEnd().split('\n');
    expect(lines.map((line) => JSON.parse(line))).toEqual(records);
  });

  test('a non-empty evidence file is refused', async () => {
    const path = join(dir, 'used.jsonl');
    await writeFile(path, '{"seq":1}\n');
    await expect(startDevPdp({ policy: POLICY, evidencePath: path })).rejects.toThrow();
  });

  test('one file, one chain: a second PDP cannot take the evidence file a running one holds; once it closes, the lock goes', async () => {
    const path = join(dir, 'shared.jsonl');
    const first = await startDevPdp({ policy: POLICY, evidencePath: path, log: false });
    try {
      await expect(startDevPdp({ policy: POLICY, evidencePath: path, log: false })).rejects.toThrow(
        /held by a running dev PDP \(pid \d+\)/,
      );
    } finally {
      await first.close();
    }
    await expect(readFile(`${path}.lock`, 'utf8')).rejects.toThrow();
    // the file is still empty: a new PDP may take it now
    const next = await startDevPdp({ policy: POLICY, evidencePath: path, log: false });
    await next.close();
  });

  test('a lock left by a process that is gone is refused too, naming it: taking it over could let two PDPs in', async () => {
    const path = join(dir, 'stale.jsonl');
    await writeFile(`${path}.lock`, '2147483646 x'); // no such process
    await expect(startDevPdp({ policy: POLICY, evidencePath: path, log: false })).rejects.toThrow(
      /stale\.jsonl\.lock, whose dev PDP is not running .*remove the lock/,
    );
    expect(await readFile(`${path}.lock`, 'utf8')).toBe('2147483646 x');
  });

  test('the chain verifies with a JWKS URL, a JWKS object and a public key', async () => {
    const live = await start();
    await post(live, act('refund_payment', { amount: 1 }));
    await post(live, text('output', '555-123-4567'));
    expect(await verifyEvidence(live.evidence(), { keys: live.jwksUrl })).toEqual({ ok: true, count: 2 });
    expect(await verifyEvidence(records, { keys: pdp.jwks })).toEqual({ ok: true, count: 5 });
    const publicKey = await importJWK(pdp.jwks.keys[0]!, 'EdDSA');
    expect(await verifyEvidence(records, { keys: publicKey as CryptoKey })).toEqual({ ok: true, count: 5 });
    expect(await verifyEvidence([], { keys: pdp.jwks })).toEqual({ ok: true, count: 0 });
    // another PDP's key does not verify these records
    expect(await verifyEvidence(records, { keys: live.jwks })).toEqual({
      ok: false,
      index: 0,
      reason: 'signature_invalid',
    });
  });

  test.each<[string, (r: EvidenceRecord[]) => unknown[], number, string]>([
    ['an edited verdict', (r) => r.map((x, i) => (i === 2 ? { ...x, verdict: 'ALLOW' } : x)), 2, 'hash_mismatch'],
    ['an edited latch list', (r) => r.map((x, i) => (i === 1 ? { ...x, latches: [] } : x)), 1, 'hash_mismatch'],
    ['an added member', (r) => r.map((x, i) => (i === 3 ? { ...x, note: 'x' } : x)), 3, 'hash_mismatch'],
    ['a removed reason', (r) => r.map((x, i) => (i === 2 ? { ...x, reason: undefined } : x)), 2, 'hash_mismatch'],
    ['a removed record', (r) => r.filter((_, i) => i !== 1), 1, 'seq_mismatch'],
    ['a removed first record', (r) => r.slice(1), 0, 'seq_mismatch'],
    ['two swapped records', (r) => [r[0], r[2], r[1], r[3], r[4]], 1, 'seq_mismatch'],
    ['a renumbered chain', (r) => r.map((x, i) => (i === 1 ? { ...x, seq: 9 } : x)), 1, 'seq_mismatch'],
    ['a broken link', (r) => r.map((x, i) => (i === 4 ? { ...x, prevHash: r[2]!.hash } : x)), 4, 'prev_hash_mismatch'],
    [
      'a signature of another record',
      (r) => r.map((x, i) => (i === 3 ? { ...x, sig: r[2]!.sig } : x)),
      3,
      'signature_invalid',
    ],
    ['a garbled signature', (r) => r.map((x, i) => (i === 0 ? { ...x, sig: 'a.b.c' } : x)), 0, 'signature_invalid'],
    ['a non-object', (r) => [r[0], 42], 1, 'malformed'],
  ])('%s is found at the right index', async (_name, tamper, index, reason) => {
    const tampered = tamper(structuredClone(records));
    const cleaned = JSON.parse(JSON.stringify(tampered)) as EvidenceRecord[];
    expect(await verifyEvidence(cleaned, { keys: pdp.jwks })).toEqual({ ok: false, index, reason });
  });

  test('an edited record re-hashed and re-signed with another key is found', async () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    const tampered = structuredClone(records);
    const victim = tampered[2]!;
    victim.verdict = 'ALLOW';
    victim.hash = evidenceRecordHash(victim as unknown as Record<string, unknown>);
    victim.sig = await new CompactSign(new TextEncoder().encode(victim.hash))
      .setProtectedHeader({ alg: 'EdDSA', kid: pdp.kid })
      .sign(privateKey);
    expect(await verifyEvidence(tampered, { keys: pdp.jwks })).toEqual({
      ok: false,
      index: 2,
      reason: 'signature_invalid',
    });
  });

  test('a JWKS URL that cannot be fetched never passes', async () => {
    const result = await verifyEvidence(records, { keys: 'http://127.0.0.1:1/.well-known/jwks.json' });
    expect(result).toEqual({ ok: false, index: 0, reason: 'keys_unavailable' });
  });
});
