/**
 * Session integrity (docs/dev-pdp.md, "Session integrity"; contract section 15): a session the PDP lost
 * (a restart of a memory-store PDP, a Redis that lost its data, a session whose Redis state survived only
 * in part) is answered 409 `session_state_lost` and is a synthesized BLOCK `session_state_lost` at the
 * PEP, never a decision on an empty state; the history bound drops steps, never labels; `mode: "audit"`
 * latches are recorded, never enforced.
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { postJson } from '../../../../test/support/dev-pdp-http.js';
import { type RedisHandle, redisUnavailableReason, spawnRedis } from '../../../../test/support/redis.js';
import { sessionHarness } from '../../../../test/support/sessions.js';
import type { DevPdp } from '../../src/index.js';

const POLICY = {
  agents: ['agent'],
  toolGroups: { fetch: ['web_fetch'], money: ['send_money'] },
  latches: [
    { id: 'untrusted', stage: 'context_egress', tool: '@fetch', verdict: 'ALLOW', labels: ['untrusted'] },
    { id: 'no-wipe', stage: 'action', tool: 'wipe_disk', verdict: 'BLOCK', labels: ['denied'] },
    {
      id: 'money-after-untrusted',
      stage: 'action',
      tool: '@money',
      session: { has: 'untrusted' },
      verdict: 'ESCALATE',
    },
    { id: 'after-denial', stage: 'action', tool: '@money', session: { has: 'denied' }, verdict: 'BLOCK' },
    { id: 'shadow', stage: 'action', tool: 'lookup', verdict: 'BLOCK', labels: ['shadowed'], mode: 'audit' },
  ],
};

const harness = sessionHarness(POLICY);
afterEach(() => harness.closeAll());
const raw = (pdp: DevPdp, session: string, sessionStep?: number) =>
  postJson(pdp.url, '/api/policy/authorize', {
    agentId: 'agent',
    session,
    stage: 'action',
    tool: 'send_money',
    args: { amount: 1 },
    ...(sessionStep !== undefined ? { sessionStep } : {}),
  });

describe('a PDP restart (memory store)', () => {
  test('a session the PEP counted steps of is refused 409 session_state_lost, a synthesized BLOCK; a new session is decided', async () => {
    const first = await harness.start();
    const port = Number(new URL(first.url).port);
    const pep = harness.pepOf(first, 's1');
    await pep.checkContextEgress('page', { tool: 'web_fetch' });
    expect((await pep.authorizeAction('send_money', { amount: 1 })).verdict).toBe('ESCALATE');
    await first.close();
    const second = await harness.start({ port });
    const lost = await pep.authorizeAction('send_money', { amount: 1 });
    expect(lost).toMatchObject({ verdict: 'BLOCK', synthesized: { code: 'session_state_lost', status: 409 } });
    expect(lost.permitId).toBeUndefined();
    // a simulated request carries the count so far: refused too
    const dry = await pep.authorizeAction('send_money', { amount: 1 }, { simulated: true });
    expect(dry.synthesized?.code).toBe('session_state_lost');
    // a refused request does not advance the count, and nothing was written: still refused
    expect((await pep.checkInput('hi')).synthesized?.code).toBe('session_state_lost');
    const fresh = harness.pepOf(second, 's2');
    expect((await fresh.authorizeAction('send_money', { amount: 1 })).verdict).toBe('ALLOW');
  });

  test('over raw HTTP: sessionStep 1 starts a session, sessionStep > 1 of an unknown one is a 409 with code session_state_lost', async () => {
    const pdp = await harness.start();
    const lost = await raw(pdp, 'unknown', 2);
    expect(lost.status).toBe(409);
    expect(lost.body).toMatchObject({ code: 'session_state_lost' });
    expect((await raw(pdp, 'new', 1)).status).toBe(200);
    expect((await raw(pdp, 'new', 2)).status).toBe(200);
    expect((await raw(pdp, 'no-step')).status).toBe(200);
    expect((await raw(pdp, 'bad', 0)).status).toBe(400);
  });
});

describe('over AuthZEN', () => {
  test('the SDK sends sessionStep in context: a restarted PDP answers 409, a synthesized BLOCK session_state_lost', async () => {
    const first = await harness.start();
    const port = Number(new URL(first.url).port);
    const pep = harness.pepOf(first, 'az', { protocol: 'authzen' });
    await pep.checkContextEgress('page', { tool: 'web_fetch' });
    expect(
      (
        await pep.authorizeActions([
          { tool: 'send_money', args: {} },
          { tool: 'lookup', args: {} },
        ])
      ).map((d) => d.verdict),
    ).toEqual(['ESCALATE', 'ALLOW']);
    await first.close();
    await harness.start({ port });
    const lost = await pep.authorizeActions([
      { tool: 'send_money', args: {} },
      { tool: 'lookup', args: {} },
    ]);
    expect(lost.map((d) => d.synthesized?.code)).toEqual(['session_state_lost', 'session_state_lost']);
  });
});

describe('labels are never washed out', () => {
  test('10,000 harmless steps after a BLOCK: the denial is a label, and the money tool stays refused', async () => {
    const pdp = await harness.start({ maxHistory: 16 });
    // One session's steps are decided one at a time, so the 100th of a round waits for 99 others: on a
    // loaded machine that passes the default timeout, whose fail-closed BLOCK is not what this test is about.
    const pep = harness.pepOf(pdp, 's1', { timeoutMs: 60_000 });
    expect((await pep.authorizeAction('wipe_disk', {})).verdict).toBe('BLOCK');
    for (let round = 0; round < 100; round++) {
      const steps = await Promise.all(Array.from({ length: 100 }, () => pep.checkOutput('fine')));
      expect(steps.every((d) => d.verdict === 'ALLOW')).toBe(true);
    }
    const after = await pep.authorizeAction('send_money', { amount: 1 });
    expect(after).toMatchObject({ verdict: 'BLOCK', latches: ['after-denial'], sessionLabels: ['denied'] });
  }, 120_000);
});

describe('audit latches', () => {
  test('evaluated and recorded in evidence, never enforced: no verdict, no latch, no label', async () => {
    const pdp = await harness.start();
    const pep = harness.pepOf(pdp, 's1');
    const d = await pep.authorizeAction('lookup', {});
    expect(d).toMatchObject({ verdict: 'ALLOW', latches: [], sessionLabels: [] });
    const record = pdp.evidence().at(-1);
    expect(record).toMatchObject({ verdict: 'ALLOW', audit: [{ latch: 'shadow', verdict: 'BLOCK' }] });
  });
});

const privateSkip = redisUnavailableReason(true);

describe.skipIf(privateSkip !== undefined)('a Redis that lost its data', () => {
  let redis: RedisHandle;
  beforeAll(async () => {
    redis = await spawnRedis();
  });
  afterAll(() => redis?.stop());

  test('a restart without persistence: the session is refused 409, never decided on an empty state', async () => {
    const own = await spawnRedis();
    try {
      const pdp = await harness.start({ sessionStore: { redis: own.url }, sessionStoreTimeoutMs: 1000 });
      const pep = harness.pepOf(pdp, 's-loss', { timeoutMs: 5000 });
      expect((await pep.authorizeAction('wipe_disk', {})).verdict).toBe('BLOCK');
      expect((await pep.authorizeAction('send_money', { amount: 1 })).verdict).toBe('BLOCK');
      await own.stop();
      const again = await spawnRedis(own.port);
      harness.track({ close: () => again.stop() });
      let d = await pep.authorizeAction('send_money', { amount: 1 });
      // until the PDP has reconnected, the store is unavailable (503): a refused request, not a decision
      for (let i = 0; i < 50 && d.synthesized?.code === 'pdp_status'; i++) {
        await new Promise((r) => setTimeout(r, 100));
        d = await pep.authorizeAction('send_money', { amount: 1 });
      }
      expect(d).toMatchObject({ verdict: 'BLOCK', synthesized: { code: 'session_state_lost', status: 409 } });
    } finally {
      await own.stop();
    }
  });

  test('a session whose state key was lost while its labels survived, or that began before the epoch, is lost', async () => {
    const prefix = `integrity:${Date.now()}:`;
    const pdp = await harness.start({ sessionStore: { redis: redis.url, prefix } });
    const pep = harness.pepOf(pdp, 's-part');
    await pep.checkContextEgress('page', { tool: 'web_fetch' });
    const client = new Redis(redis.url);
    harness.track({ close: () => client.quit() });
    const stateKeys = await client.keys(`${prefix}*:state`);
    expect(stateKeys).toHaveLength(1);
    await client.del(stateKeys[0] as string);
    const partial = await raw(pdp, 's-part');
    expect(partial).toMatchObject({ status: 409, body: { code: 'session_state_lost' } });
    const other = harness.pepOf(pdp, 's-epoch');
    await other.checkInput('hello');
    await client.set(`${prefix}epoch`, '1');
    expect((await other.checkInput('again')).synthesized?.code).toBe('session_state_lost');
  });
});
