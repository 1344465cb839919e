/**
 * The Redis session store against a real redis-server (test/support/redis.ts: REDIS_URL, else a
 * spawned server; in CI these tests fail rather than skip without Redis): two dev PDPs deciding
 * interleaved steps of one session lose no label and no step; a Redis that is down or hung is a 503
 * `session_store_unavailable` within `sessionStoreTimeoutMs`, and the SDK's synthesized BLOCK.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { Pep } from '../../../../src/index.js';
import { postJson } from '../../../../test/support/dev-pdp-http.js';
import {
  type RedisHandle,
  redisUnavailableReason,
  spawnRedis,
  useSharedRedis,
} from '../../../../test/support/redis.js';
import { sessionHarness } from '../../../../test/support/sessions.js';
import type { DevPdp, DevPdpOptions } from '../../src/index.js';

const sharedSkip = redisUnavailableReason(false);
const privateSkip = redisUnavailableReason(true);
/** Generous bound for "answers within sessionStoreTimeoutMs" (1000 ms below, the default: a first decision on a loaded machine connects and loads the scripts within it). */
const BOUND_MS = 3000;
const STEPS = 40;

const POLICY = {
  agents: ['agent'],
  latches: [
    ...Array.from({ length: STEPS }, (_, i) => ({
      id: `t${i}`,
      stage: 'action',
      tool: `t_${i}`,
      verdict: 'ALLOW',
      labels: [`l${String(i).padStart(2, '0')}`],
    })),
    {
      id: 'all-seen',
      stage: 'action',
      tool: 'final',
      session: { count: { tool: 't_*' }, gte: STEPS },
      verdict: 'BLOCK',
    },
  ],
};

const harness = sessionHarness(POLICY);
afterEach(() => harness.closeAll());
const start = (options: Partial<DevPdpOptions>) => harness.start(options);
const pepOf = (pdp: DevPdp, session: string, extra: Record<string, unknown> = {}) => harness.pepOf(pdp, session, extra);

describe.skipIf(sharedSkip !== undefined)('two dev PDPs sharing one Redis', () => {
  const prefix = `agent-pep-test:${randomUUID()}:`;
  const shared = useSharedRedis(prefix);

  test('interleaved concurrent steps of one session lose no label and no step, and each sees every earlier one', async () => {
    // 40 decisions of one session queue behind each other: a generous timeout, since this is about atomicity
    const a = await start({ sessionStore: { redis: shared.redis.url, prefix }, sessionStoreTimeoutMs: 20_000 });
    const b = await start({ sessionStore: { redis: shared.admin, prefix }, sessionStoreTimeoutMs: 20_000 });
    const session = randomUUID();
    const peps = [pepOf(a, session, { timeoutMs: 30_000 }), pepOf(b, session, { timeoutMs: 30_000 })];
    const decisions = await Promise.all(
      Array.from({ length: STEPS }, (_, i) => (peps[i % 2] as Pep).authorizeAction(`t_${i}`, {})),
    );
    expect(decisions.map((d) => d.verdict)).toEqual(Array(STEPS).fill('ALLOW'));
    // one at a time: every decision saw all earlier labels and added one, so the counts are 1..STEPS
    expect(decisions.map((d) => d.sessionLabels?.length).sort((x, y) => (x as number) - (y as number))).toEqual(
      Array.from({ length: STEPS }, (_, i) => i + 1),
    );
    const everything = Array.from({ length: STEPS }, (_, i) => `l${String(i).padStart(2, '0')}`);
    for (const pep of peps) {
      const last = await pep.authorizeAction('final', {}, { simulated: true });
      expect(last).toMatchObject({ verdict: 'BLOCK', latches: ['all-seen'], sessionLabels: everything });
    }
    // the simulated checks changed nothing: STEPS steps, one per decision
    const keys = await shared.admin.keys(`${prefix}*:history`);
    const lengths = await Promise.all(keys.map((k) => shared.admin.llen(k)));
    expect(lengths).toContain(STEPS);
    expect(await shared.admin.keys(`${prefix}*:lock`)).toEqual([]);
  });

  test('maxHistory and sessionTtlSec apply in Redis', async () => {
    const pdp = await start({ sessionStore: { redis: shared.redis.url, prefix }, maxHistory: 5, sessionTtlSec: 120 });
    const session = randomUUID();
    const pep = pepOf(pdp, session);
    for (let i = 0; i < 7; i++) await pep.authorizeAction(`t_${i}`, {});
    const [history] = await shared.admin.keys(`${prefix}*:history`).then(async (keys) => {
      const withLen = await Promise.all(
        keys.map(async (k) => ({ k, ttl: await shared.admin.pttl(k), len: await shared.admin.llen(k) })),
      );
      return withLen.filter((x) => x.len === 5);
    });
    expect(history).toBeDefined();
    expect(history?.ttl).toBeGreaterThan(100_000);
    expect(history?.ttl).toBeLessThanOrEqual(120_000);
  });
});

describe.skipIf(privateSkip !== undefined)('a Redis that is down or hung', () => {
  let redis: RedisHandle;
  beforeAll(async () => {
    redis = await spawnRedis();
  });
  afterAll(async () => {
    redis?.process?.kill('SIGCONT');
    await redis?.stop();
  });

  const body = (session: string) => ({ agentId: 'agent', session, stage: 'action', tool: 't_1', args: {} });

  test('hung (SIGSTOP): 503 session_store_unavailable within sessionStoreTimeoutMs, the SDK a synthesized BLOCK', async () => {
    const pdp = await start({ sessionStore: { redis: redis.url }, sessionStoreTimeoutMs: 1000 });
    const pep = pepOf(pdp, 's-hung', { timeoutMs: 5000 });
    expect((await pep.authorizeAction('t_1', {})).verdict).toBe('ALLOW');
    redis.process?.kill('SIGSTOP');
    try {
      const started = Date.now();
      const raw = await postJson(pdp.url, '/api/policy/authorize', body('s-hung'));
      expect(raw.status).toBe(503);
      expect(raw.body).toMatchObject({ code: 'session_store_unavailable' });
      expect(Date.now() - started).toBeLessThan(BOUND_MS);
      const blocked = await pep.authorizeAction('t_1', {});
      expect(blocked).toMatchObject({ verdict: 'BLOCK', synthesized: { code: 'pdp_status', status: 503 } });
      const simulated = await pep.authorizeAction('t_1', {}, { simulated: true });
      expect(simulated.synthesized?.code).toBe('pdp_status');
    } finally {
      redis.process?.kill('SIGCONT');
    }
  });

  test('down: 503 session_store_unavailable at once, the SDK a synthesized BLOCK; no decision is made', async () => {
    const own = await spawnRedis();
    const seen: string[] = [];
    const pdp = await start({
      sessionStore: { redis: own.url },
      sessionStoreTimeoutMs: 1000,
      onDecision: (r) => seen.push(r.verdict),
    });
    const pep = pepOf(pdp, 's-down', { timeoutMs: 5000 });
    expect((await pep.authorizeAction('t_1', {})).verdict).toBe('ALLOW');
    await own.stop();
    const started = Date.now();
    const raw = await postJson(pdp.url, '/api/policy/authorize', body('s-down'));
    expect(raw.status).toBe(503);
    expect(raw.body).toMatchObject({ code: 'session_store_unavailable' });
    expect(Date.now() - started).toBeLessThan(BOUND_MS);
    expect(await pep.authorizeAction('t_1', {})).toMatchObject({
      verdict: 'BLOCK',
      synthesized: { code: 'pdp_status', status: 503 },
    });
    expect(seen).toEqual(['ALLOW']);
  });
});
