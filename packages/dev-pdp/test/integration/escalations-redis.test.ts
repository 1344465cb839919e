/**
 * The Redis escalation store keeps what a reviewer sees of a held call's session (docs/dev-pdp.md,
 * "Replicas" and "The reviewer console"), against a real redis-server (test/support/redis.ts: REDIS_URL,
 * else a spawned server): the grants and flows round-trip as stored, and an escalation held on one dev
 * PDP is listed with its session's grants by another sharing the Redis.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, test } from 'vitest';
import { redisUnavailableReason, useSharedRedis } from '../../../../test/support/redis.js';
import { sessionHarness } from '../../../../test/support/sessions.js';
import type { PendingEscalation } from '../../src/escalations.js';
import { createRedisEscalationStore, type EscalationRedisClient } from '../../src/escalations-redis.js';

const skip = redisUnavailableReason(false);
const REVIEWER = { authorization: 'Bearer reviewer-key' };
const LIMITS = { approvalTtlMs: 60_000, escalationTtlMs: 60_000, maxPerSession: 10, maxEntries: 100 };
const POLICY = {
  agents: ['agent'],
  toolGroups: { money: ['send_money'] },
  intents: [
    {
      id: 'pay',
      pattern: '(?i)\\bpay\\s+(?P<to>[A-Za-z]+)\\s+(?P<amount>[0-9]+)\\s*eur\\b',
      grant: { tools: '@money', args: { amount: { lte: '$amount' }, to: { eq: '$to' } }, uses: 1 },
    },
  ],
  latches: [{ id: 'big', stage: 'action', tool: '@money', when: { 'args.amount': { gt: 40 } }, verdict: 'ESCALATE' }],
};

const harness = sessionHarness(POLICY);
afterEach(() => harness.closeAll());

describe.skipIf(skip !== undefined)('the Redis escalation store and the session of a held call', () => {
  const prefix = `agent-pep-test:${randomUUID()}:`;
  const shared = useSharedRedis(prefix);

  test('the grants and flows of an escalation round-trip through Redis as they were stored', async () => {
    const client = new Redis(shared.redis.url, { lazyConnect: true });
    harness.track({ close: () => client.quit() });
    await client.connect();
    const store = createRedisEscalationStore(client as unknown as EscalationRedisClient, LIMITS, prefix, 5000);
    const escalation: PendingEscalation = {
      id: `esc_${randomUUID()}`,
      subject: { agentId: 'agent', session: 's1', stage: 'action', tool: 'send_money', hash: 'h1' },
      openedAt: Date.now(),
      requestId: 'r1',
      latches: ['big'],
      labels: ['untrusted'],
      args: { to: 'bob', amount: 45 },
      held: {
        grants: [
          {
            id: 'pay',
            tools: ['@money'],
            args: JSON.parse('{"to": {"eq": "bob\\u202Eexe"}, "amount": {"lte": 50}, "__proto__": {"in": [1, "x"]}}'),
            uses: 1,
            expiresAt: 1_900_000_000_000,
            match: 'arg_outside',
            failedPath: 'to',
            shortened: true,
          },
        ],
        grantsLeftOut: 3,
        flows: [{ path: 'to', kind: 'email', sources: [{ tool: 'read_email', origin: 'mail', groups: ['mail'] }] }],
        origin: 'tool:send_money',
      },
    };
    expect(await store.open(escalation)).toEqual({ id: escalation.id, reused: false });
    const [stored] = await store.pending(10);
    expect(stored).toEqual(escalation);
    expect(Object.hasOwn(stored?.held?.grants[0]?.args ?? {}, '__proto__')).toBe(true);
  });

  test('an escalation held on one PDP is listed with its grants by another sharing the Redis', async () => {
    const options = { reviewerApiKey: 'reviewer-key', sessionStore: { redis: shared.redis.url, prefix } };
    const a = await harness.start(options);
    const b = await harness.start(options);
    const pep = harness.pepOf(a, `s-${randomUUID()}`);
    await pep.checkInput('Please pay Bob 50 EUR.');
    const held = await pep.authorizeAction('send_money', { to: 'Bob', amount: 45 });
    expect(held).toMatchObject({ verdict: 'ESCALATE', grants: ['pay'] });
    const res = await fetch(`${b.url}/api/escalations`, { headers: REVIEWER });
    const { escalations } = (await res.json()) as { escalations: Record<string, unknown>[] };
    expect(escalations.find((e) => e.escalationId === held.escalationId)).toMatchObject({
      grants: [{ id: 'pay', tools: ['@money'], args: { amount: { lte: 50 }, to: { eq: 'Bob' } }, match: 'inside' }],
      flows: [],
    });
  });
});
