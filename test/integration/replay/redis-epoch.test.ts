/**
 * A permit used before Redis lost its data cannot be used again (CONTRACT.md section 4, v3;
 * docs/permits.md): the Redis store keeps an epoch key (`<prefix>epoch`, Redis's TIME, never expiring),
 * and one script checks it and claims. A real redis-server, private to this file, is restarted without
 * persistence (and flushed) between the first use and the replay.
 */
import { Redis } from 'ioredis';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPermitVerifier, type PermitVerifier } from '../../../src/permit/verifier.js';
import { createRedisReplayStore, type RedisReplayStore } from '../../../src/replay/redis.js';
import { REPLAY_UNKNOWN_CODE, ReplayUnknownError } from '../../../src/replay/types.js';
import { createTestIssuer, permitCodeOf, type TestIssuer } from '../../support/permits.js';
import { type RedisHandle, redisUnavailableReason, spawnRedis } from '../../support/redis.js';

const AUDIENCE = 'payments-service';
const TOOL = 'refund_payment';
const ARGS = { orderId: 'ord_1842', amount: 129 };
const skip = redisUnavailableReason(true);

let pdp: TestIssuer;
beforeAll(async () => {
  pdp = await createTestIssuer();
});

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function privateRedis(): Promise<RedisHandle> {
  const redis = await spawnRedis();
  cleanups.push(() => redis.stop());
  return redis;
}

function verifierOn(store: RedisReplayStore): PermitVerifier {
  return createPermitVerifier({ keys: pdp.jwks, issuer: pdp.issuer, audience: AUDIENCE, replayStore: store });
}

/** A permit issued `agoSec` seconds ago, valid for 60 s from its issue. */
function permitIssued(agoSec: number): Promise<string> {
  const t = Math.floor(Date.now() / 1000) - agoSec;
  return pdp.mint(TOOL, ARGS, { iat: t, exp: t + 60 });
}

/** Verifies until the store has reconnected (a claim before that is permit_store_unavailable). */
async function verifyOnceReconnected(verifier: PermitVerifier, permit: string): Promise<string> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const code = await permitCodeOf(verifier.verify(permit, { tool: TOOL, args: ARGS })).catch(() => 'verified');
    if (code !== 'permit_store_unavailable' || Date.now() > deadline) return code;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** An epoch as a store in use for a while would have left: two minutes ago, by Redis's clock. */
async function seedEpoch(url: string, prefix = 'agent-pep:permit:'): Promise<void> {
  const admin = new Redis(url);
  try {
    const [sec] = await admin.time();
    await admin.set(`${prefix}epoch`, String(Number(sec) * 1000 - 120_000));
  } finally {
    admin.disconnect();
  }
}

async function restart(redis: RedisHandle): Promise<RedisHandle> {
  await redis.stop();
  const again = await spawnRedis(redis.port);
  cleanups.push(() => again.stop());
  return again;
}

describe.skipIf(skip !== undefined)('the Redis store after Redis lost its data', () => {
  it('a permit used before a restart without persistence is refused permit_replay_unknown after it, by every replica', async () => {
    const redis = await privateRedis();
    await seedEpoch(redis.url);
    const stores = [
      createRedisReplayStore({ url: redis.url, commandTimeoutMs: 5000 }),
      createRedisReplayStore({ url: redis.url, commandTimeoutMs: 5000 }),
    ];
    for (const s of stores) cleanups.push(() => s.close());
    const [a, b] = stores.map(verifierOn) as [PermitVerifier, PermitVerifier];
    const used = await Promise.all([permitIssued(8), permitIssued(20), permitIssued(50)]);
    for (const p of used) {
      await expect(a.verify(p, { tool: TOOL, args: ARGS })).resolves.toBeDefined();
      expect(await permitCodeOf(b.verify(p, { tool: TOOL, args: ARGS }))).toBe('permit_replayed');
    }

    await restart(redis);

    for (const p of used) {
      expect(await verifyOnceReconnected(a, p)).toBe('permit_replay_unknown');
      expect(await verifyOnceReconnected(b, p)).toBe('permit_replay_unknown');
    }
    // a permit issued after the loss is used once, as ever
    const fresh = await permitIssued(0);
    await expect(b.verify(fresh, { tool: TOOL, args: ARGS })).resolves.toBeDefined();
    expect(await permitCodeOf(a.verify(fresh, { tool: TOOL, args: ARGS }))).toBe('permit_replayed');
  });

  it('a flush (or a failover to an empty replica) is a data loss too; the epoch is Redis TIME and never expires', async () => {
    const redis = await privateRedis();
    const prefix = 'svc:permit:';
    const store = createRedisReplayStore({ url: redis.url, prefix, commandTimeoutMs: 5000 });
    cleanups.push(() => store.close());
    const admin = new Redis(redis.url);
    cleanups.push(() => admin.disconnect());
    const verifier = verifierOn(store);
    await seedEpoch(redis.url, prefix);

    const before = await permitIssued(30);
    await expect(verifier.verify(before, { tool: TOOL, args: ARGS })).resolves.toBeDefined();
    const [sec] = await admin.time();
    await admin.flushall();
    expect(await permitCodeOf(verifier.verify(before, { tool: TOOL, args: ARGS }))).toBe('permit_replay_unknown');
    // the epoch the script set: Redis's TIME at that claim, in ms, with no expiry
    const epoch = Number(await admin.get(`${prefix}epoch`));
    expect(Math.abs(epoch - Number(sec) * 1000)).toBeLessThan(10_000);
    expect(await admin.pttl(`${prefix}epoch`)).toBe(-1);
  });

  it('only a permit issued within the clock tolerance before the loss passes the epoch check', async () => {
    const redis = await privateRedis();
    const store = createRedisReplayStore({ url: redis.url, clockToleranceSec: 30, commandTimeoutMs: 5000 });
    cleanups.push(() => store.close());
    const verifier = verifierOn(store);
    await expect(verifier.verify(await permitIssued(0), { tool: TOOL, args: ARGS })).resolves.toBeDefined();
    await restart(redis);
    expect(await verifyOnceReconnected(verifier, await permitIssued(10))).toBe('verified');
    expect(await verifyOnceReconnected(verifier, await permitIssued(45))).toBe('permit_replay_unknown');
  });

  it('claim(key, expiresAtMs, issuedAtMs) rejects with a ReplayUnknownError; without issuedAtMs it claims the key alone', async () => {
    const redis = await privateRedis();
    const store = createRedisReplayStore({ url: redis.url, commandTimeoutMs: 5000 });
    cleanups.push(() => store.close());
    const now = Date.now();
    expect(await store.claim('k1', now + 60_000, now)).toBe(true);
    const old = store.claim('k2', now + 60_000, now - 60_000);
    await expect(old).rejects.toBeInstanceOf(ReplayUnknownError);
    await expect(old).rejects.toMatchObject({ code: REPLAY_UNKNOWN_CODE });
    // without an issue time there is nothing to compare (docs/permits.md): the key alone is claimed
    expect(await store.claim('k3', now + 60_000)).toBe(true);
    expect(await store.claim('k3', now + 60_000)).toBe(false);
  });
});
