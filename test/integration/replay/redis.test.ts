/**
 * The Redis replay store against a real redis-server (see test/support/redis.ts for discovery:
 * REDIS_URL, else a spawned server; in CI these tests fail rather than skip without Redis).
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { PermitVerificationError } from '../../../src/errors.js';
import { createPermitVerifier } from '../../../src/permit/verifier.js';
import { createRedisReplayStore, type RedisReplayStore } from '../../../src/replay/redis.js';
import { optionOf } from '../../support/options.js';
import { createTestIssuer, permitCodeOf, type TestIssuer } from '../../support/permits.js';
import { freePort, type RedisHandle, redisUnavailableReason, spawnRedis, useSharedRedis } from '../../support/redis.js';

const AUDIENCE = 'payments-service';
const TOOL = 'refund_payment';
const ARGS = { orderId: 'ord_1842', amount: 129 };
/** Generous upper bound for "refuses in bounded time" (the store's own deadline is 500 ms). */
const BOUND_MS = 5000;

const sharedSkip = redisUnavailableReason(false);
const privateSkip = redisUnavailableReason(true);

let pdp: TestIssuer;
beforeAll(async () => {
  pdp = await createTestIssuer();
});

const toClose: Array<{ close(): unknown }> = [];
function track<T extends { close(): unknown }>(x: T): T {
  toClose.push(x);
  return x;
}
function trackClient(c: Redis): Redis {
  // a caller's client needs its own error listener: without one ioredis prints each connection error
  // (Redis stopped or paused here on purpose) as an unhandled error event, stack trace and all
  c.on('error', () => {});
  toClose.push({ close: () => c.disconnect() });
  return c;
}
afterEach(async () => {
  while (toClose.length > 0) await toClose.pop()?.close();
});

describe.skipIf(sharedSkip !== undefined)('createRedisReplayStore on a real Redis', () => {
  let redis: RedisHandle;
  let admin: Redis;
  const prefix = `agent-pep-test:${randomUUID()}:`;
  const shared = useSharedRedis(prefix);
  beforeAll(() => {
    ({ redis, admin } = shared);
  });

  it('a Redis that lost its script cache (SCRIPT FLUSH, a restart) still claims once: EVALSHA falls back to EVAL', async () => {
    for (const store of [
      track(createRedisReplayStore({ url: redis.url, prefix })),
      createRedisReplayStore({ client: admin, prefix }),
    ]) {
      const key = randomUUID();
      const other = randomUUID();
      const exp = Date.now() + 60_000;
      await expect(store.claim(key, exp)).resolves.toBe(true);
      await admin.script('FLUSH');
      await expect(store.claim(key, exp)).resolves.toBe(false);
      await admin.script('FLUSH');
      await expect(store.claim(other, exp)).resolves.toBe(true);
      await expect(store.claim(other, exp)).resolves.toBe(false);
    }
  });

  it('claims with SET NX PXAT: true once, false after, expiring at expiresAtMs', async () => {
    const store = track(createRedisReplayStore({ url: redis.url, prefix }));
    const expiresAtMs = Date.now() + 60_000;
    await expect(store.claim('k1', expiresAtMs)).resolves.toBe(true);
    await expect(store.claim('k1', expiresAtMs)).resolves.toBe(false);
    expect(await admin.exists(`${prefix}k1`)).toBe(1);
    const pexpiretime = Number(await admin.call('PEXPIRETIME', `${prefix}k1`));
    expect(pexpiretime).toBe(expiresAtMs);
  });

  it('a claim whose expiresAtMs is past resolves false and writes nothing', async () => {
    const store = track(createRedisReplayStore({ url: redis.url, prefix }));
    await expect(store.claim('past', Date.now() - 1)).resolves.toBe(false);
    expect(await admin.exists(`${prefix}past`)).toBe(0);
  });

  it('a store claimed right after creation waits for the connection', async () => {
    const store = track(createRedisReplayStore({ url: redis.url, prefix }));
    await expect(store.claim(randomUUID(), Date.now() + 10_000)).resolves.toBe(true);
  });

  it('50 parallel verify() of one permit across two verifiers sharing Redis: exactly one succeeds', async () => {
    const storeA = track(createRedisReplayStore({ url: redis.url, prefix }));
    const clientB = trackClient(new Redis(redis.url, { enableOfflineQueue: true }));
    await new Promise<void>((resolve) => clientB.once('ready', () => resolve()));
    const storeB = track(createRedisReplayStore({ client: clientB, prefix }));
    const options = { keys: pdp.jwks, issuer: pdp.issuer, audience: AUDIENCE };
    const verifierA = createPermitVerifier({ ...options, replayStore: storeA });
    const verifierB = createPermitVerifier({ ...options, replayStore: storeB });
    const permit = await pdp.mint(TOOL, ARGS);
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) =>
        (i % 2 === 0 ? verifierA : verifierB).verify(permit, { tool: TOOL, args: ARGS }),
      ),
    );
    const ok = results.filter((r) => r.status === 'fulfilled');
    const codes = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as PermitVerificationError).code] : []));
    expect(ok).toHaveLength(1);
    expect(codes).toHaveLength(49);
    expect(new Set(codes)).toEqual(new Set(['permit_replayed']));
  });

  it('distinct permits in parallel all succeed (no false replays)', async () => {
    const store = track(createRedisReplayStore({ url: redis.url, prefix }));
    const verifier = createPermitVerifier({
      keys: pdp.jwks,
      issuer: pdp.issuer,
      audience: AUDIENCE,
      replayStore: store,
    });
    const permits = await Promise.all(Array.from({ length: 30 }, () => pdp.mint(TOOL, ARGS)));
    const results = await Promise.allSettled(permits.map((p) => verifier.verify(p, { tool: TOOL, args: ARGS })));
    expect(results.every((r) => r.status === 'fulfilled')).toBe(true);
  });

  it('close() closes a connection made from url, never a client passed in', async () => {
    const own = createRedisReplayStore({ url: redis.url, prefix });
    await own.claim(randomUUID(), Date.now() + 10_000);
    await own.close();
    await expect(own.claim(randomUUID(), Date.now() + 10_000)).rejects.toThrow();
    await own.close(); // idempotent

    const client = trackClient(new Redis(redis.url));
    const borrowed = createRedisReplayStore({ client, prefix });
    await expect(borrowed.claim(randomUUID(), Date.now() + 10_000)).resolves.toBe(true);
    await borrowed.close();
    await expect(client.ping()).resolves.toBe('PONG');
  });

  it('both url and a client: TypeError naming client (exactly one of them)', () => {
    expect(optionOf(() => createRedisReplayStore({ url: redis.url, client: admin }))).toBe('client');
  });
});

describe.skipIf(privateSkip !== undefined)('Redis down, stopped or slow: refuse in bounded time', () => {
  it('a store given an unreachable url rejects in bounded time; verify says permit_store_unavailable', async () => {
    const port = await freePort(); // nothing listens there
    const store = track(createRedisReplayStore({ url: `redis://127.0.0.1:${port}` }));
    let started = Date.now();
    await expect(store.claim('k', Date.now() + 10_000)).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(BOUND_MS);
    const verifier = createPermitVerifier({
      keys: pdp.jwks,
      issuer: pdp.issuer,
      audience: AUDIENCE,
      replayStore: store,
    });
    started = Date.now();
    expect(await permitCodeOf(verifier.verify(await pdp.mint(TOOL, ARGS), { tool: TOOL, args: ARGS }))).toBe(
      'permit_store_unavailable',
    );
    expect(Date.now() - started).toBeLessThan(BOUND_MS);
  });

  it('Redis stopped during the test: permit_store_unavailable in bounded time, never a success; recovers after restart', async () => {
    const redis = await spawnRedis();
    try {
      const store = track(createRedisReplayStore({ url: redis.url }));
      const verifier = createPermitVerifier({
        keys: pdp.jwks,
        issuer: pdp.issuer,
        audience: AUDIENCE,
        replayStore: store,
      });
      await expect(verifier.verify(await pdp.mint(TOOL, ARGS), { tool: TOOL, args: ARGS })).resolves.toBeDefined();

      // uses in flight while Redis is killed: each either completed before the kill or is refused
      const permits = await Promise.all(Array.from({ length: 20 }, () => pdp.mint(TOOL, ARGS)));
      const inFlight = Promise.allSettled(permits.map((p) => verifier.verify(p, { tool: TOOL, args: ARGS })));
      redis.process?.kill('SIGKILL');
      for (const r of await inFlight) {
        if (r.status === 'rejected')
          expect((r.reason as PermitVerificationError).code).toBe('permit_store_unavailable');
      }
      await new Promise<void>((resolve) => {
        if (redis.process?.exitCode !== null || redis.process?.signalCode !== null) resolve();
        else redis.process.once('exit', () => resolve());
      });

      for (let i = 0; i < 10; i++) {
        const started = Date.now();
        const permit = await pdp.mint(TOOL, ARGS);
        expect(await permitCodeOf(verifier.verify(permit, { tool: TOOL, args: ARGS }))).toBe(
          'permit_store_unavailable',
        );
        expect(Date.now() - started).toBeLessThan(BOUND_MS);
      }

      // the store reconnects when Redis is back (same port)
      const again = await spawnRedis(redis.port);
      try {
        const deadline = Date.now() + 15_000;
        let ok = false;
        while (!ok && Date.now() < deadline) {
          ok = await verifier.verify(await pdp.mint(TOOL, ARGS), { tool: TOOL, args: ARGS }).then(
            () => true,
            () => false,
          );
          if (!ok) await new Promise((r) => setTimeout(r, 100));
        }
        expect(ok).toBe(true);
      } finally {
        await again.stop();
      }
    } finally {
      await redis.stop();
    }
  });

  it('Redis paused (slow): permit_store_unavailable in bounded time, for url and client stores', async () => {
    const redis = await spawnRedis();
    try {
      const fromUrl: RedisReplayStore = track(createRedisReplayStore({ url: redis.url }));
      // a caller's client with ioredis defaults (offline queue on, no command timeout): still bounded
      const client = trackClient(new Redis(redis.url));
      const fromClient = track(createRedisReplayStore({ client }));
      await fromUrl.claim(randomUUID(), Date.now() + 10_000);
      await fromClient.claim(randomUUID(), Date.now() + 10_000);
      redis.process?.kill('SIGSTOP');
      try {
        for (const replayStore of [fromUrl, fromClient]) {
          const verifier = createPermitVerifier({
            keys: pdp.jwks,
            issuer: pdp.issuer,
            audience: AUDIENCE,
            replayStore,
          });
          const started = Date.now();
          expect(await permitCodeOf(verifier.verify(await pdp.mint(TOOL, ARGS), { tool: TOOL, args: ARGS }))).toBe(
            'permit_store_unavailable',
          );
          expect(Date.now() - started).toBeLessThan(BOUND_MS);
        }
      } finally {
        redis.process?.kill('SIGCONT');
      }
    } finally {
      await redis.stop();
    }
  });
});
