/**
 * Three dev PDP processes (`agent-pep dev-pdp --session-store redis://...`, real child processes) on
 * one real redis-server (a private one: these tests stop it): an escalation opened on replica A is
 * listed and approved on B and the approved call decided on C, once, whichever replica the identical
 * calls reach and however many arrive at once; a Redis that is down or hung fails closed: 503, never
 * an ALLOW (contract section 19).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BIN } from '../../../../test/support/bin.js';
import { postJson } from '../../../../test/support/dev-pdp-http.js';
import { type RunningProcess, startPrintingUrl } from '../../../../test/support/processes.js';
import { type RedisHandle, redisUnavailableReason, spawnRedis } from '../../../../test/support/redis.js';

const skip = redisUnavailableReason(true);
const AGENT = { authorization: 'Bearer agent-key' };
const REVIEWER = { authorization: 'Bearer reviewer-key' };
const POLICY = {
  agents: ['support-ai'],
  latches: [
    {
      id: 'refund-review',
      stage: 'action',
      tool: 'refund_payment',
      when: { 'args.amount': { gt: 100 } },
      verdict: 'ESCALATE',
      reason: 'refunds over 100 need review',
    },
  ],
};

let redis: RedisHandle;
let replicas: RunningProcess[] = [];

async function startReplicas(): Promise<RunningProcess[]> {
  const dir = mkdtempSync(join(tmpdir(), 'pdp-replicas-'));
  const policy = join(dir, 'policy.json');
  writeFileSync(policy, JSON.stringify(POLICY));
  const args = [BIN, 'dev-pdp', '--policy', policy, '--port', '0', '--quiet', '--session-store', redis.url];
  const env = { PDP_API_KEY: 'agent-key', PDP_REVIEWER_KEY: 'reviewer-key' };
  return Promise.all([startPrintingUrl(args, env), startPrintingUrl(args, env), startPrintingUrl(args, env)]);
}

/** A native decision request for a refund of `amount` in `session` (a fresh request id each). */
function refund(url: string, session: string, amount: number) {
  return postJson(
    url,
    '/api/policy/authorize',
    {
      agentId: 'support-ai',
      session,
      requestId: `r-${randomUUID()}`,
      stage: 'action',
      tool: 'refund_payment',
      args: { orderId: 'o1', amount },
    },
    { headers: AGENT },
  );
}

/** An AuthZEN evaluation that names no session (decided without the session store). */
function sessionless(url: string, amount: number) {
  return postJson(
    url,
    '/access/v1/evaluation',
    {
      subject: { type: 'agent', id: 'support-ai' },
      action: { name: 'call' },
      resource: { type: 'tool', id: 'refund_payment', properties: { args: { orderId: 'o1', amount } } },
      context: { requestId: `az-${randomUUID()}` },
    },
    { headers: AGENT },
  );
}

async function statusOn(url: string, id: string): Promise<unknown> {
  const res = await fetch(`${url}/api/escalations/${id}`, { headers: AGENT, signal: AbortSignal.timeout(10_000) });
  return ((await res.json()) as { status: unknown }).status;
}

describe.skipIf(skip !== undefined)('three dev PDP processes sharing one Redis', () => {
  beforeAll(async () => {
    redis = await spawnRedis();
    replicas = await startReplicas();
  }, 60_000);
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    await redis?.stop();
  });

  test('an escalation opened on A is listed and approved on B, and the approved call is decided on C, once', async () => {
    const [a, b, c] = replicas.map((r) => r.url) as [string, string, string];
    const session = `s-${randomUUID()}`;
    const held = await refund(a, session, 500);
    expect(held.body).toMatchObject({ verdict: 'ESCALATE', escalationId: expect.stringMatching(/^esc_/) });
    const id = held.body.escalationId as string;
    // the identical request still pending, on another replica, joins the same escalation
    expect((await refund(c, session, 500)).body).toMatchObject({ verdict: 'ESCALATE', escalationId: id });

    const listed = (await fetch(`${b}/api/escalations`, { headers: REVIEWER }).then((r) => r.json())) as {
      escalations: unknown[];
    };
    expect(listed.escalations).toEqual([
      expect.objectContaining({
        escalationId: id,
        session,
        tool: 'refund_payment',
        args: { orderId: 'o1', amount: 500 },
      }),
    ]);
    expect(await statusOn(c, id)).toBe('pending');
    const approved = await postJson(b, `/api/escalations/${id}`, { resolution: 'approve' }, { headers: REVIEWER });
    expect(approved.status).toBe(200);
    expect(await statusOn(a, id)).toBe('approved');
    // a second resolution on another replica: already resolved
    expect((await postJson(c, `/api/escalations/${id}`, { resolution: 'deny' }, { headers: REVIEWER })).status).toBe(
      409,
    );

    const used = await refund(c, session, 500);
    expect(used.body).toMatchObject({ verdict: 'ALLOW', permitId: expect.any(String) });
    // used once: the identical call on any replica is held again
    const again = await Promise.all([refund(a, session, 500), refund(b, session, 500), refund(c, session, 500)]);
    expect(again.map((r) => r.body.verdict)).toEqual(['ESCALATE', 'ESCALATE', 'ESCALATE']);
  });

  test('an approval is used once by concurrent identical calls spread over the three replicas (no session)', async () => {
    const urls = replicas.map((r) => r.url);
    const amount = 100 + Math.floor(Math.random() * 1_000_000);
    const held = await sessionless(urls[0] as string, amount);
    const id = (held.body.context as { escalationId: string }).escalationId;
    expect(id).toMatch(/^esc_/);
    expect(
      (await postJson(urls[1] as string, `/api/escalations/${id}`, { resolution: 'approve' }, { headers: REVIEWER }))
        .status,
    ).toBe(200);
    const replies = await Promise.all(Array.from({ length: 12 }, (_, i) => sessionless(urls[i % 3] as string, amount)));
    expect(replies.every((r) => r.status === 200)).toBe(true);
    expect(replies.filter((r) => r.body.decision === true)).toHaveLength(1);
  });

  test('a hung Redis (SIGSTOP) and a Redis that is down fail closed: 503, never an ALLOW, for an approved call', async () => {
    const [a, b, c] = replicas.map((r) => r.url) as [string, string, string];
    const amount = 100 + Math.floor(Math.random() * 1_000_000);
    const id = ((await sessionless(a, amount)).body.context as { escalationId: string }).escalationId;
    expect((await postJson(b, `/api/escalations/${id}`, { resolution: 'approve' }, { headers: REVIEWER })).status).toBe(
      200,
    );
    redis.process?.kill('SIGSTOP');
    try {
      const hung = await sessionless(c, amount);
      expect(hung.status).toBe(503);
      expect(hung.body.code).toBe('session_store_unavailable');
      expect((await fetch(`${c}/readyz`)).status).toBe(503);
      expect((await fetch(`${c}/healthz`)).status).toBe(200);
    } finally {
      redis.process?.kill('SIGCONT');
    }
    await redis.stop();
    const down = await Promise.all([sessionless(a, amount), refund(b, `s-${randomUUID()}`, amount)]);
    expect(down.map((r) => r.status)).toEqual([503, 503]);
    expect((await fetch(`${a}/readyz`)).status).toBe(503);
  }, 30_000);
});
