/**
 * Rule: the Redis store's claim is true at most once per key, even for an expiry that Redis's own
 * clock already sees as past (CONTRACT.md section 4: `claim` is true only for the first claim; `jti`
 * is unique, one use).
 *
 * `SET key 1 NX PXAT t` with `t` already past by Redis's clock answers `OK` and stores nothing, every
 * time; so the claim script compares against Redis's `TIME` and refuses such a claim. Without it, a
 * service whose clock lags Redis's (or a claim in the last milliseconds before `expiresAtMs`) would see
 * every claim of one permit as the first.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createPermitVerifier } from '../../../src/permit/verifier.js';
import { createRedisReplayStore, type RedisReplayStore } from '../../../src/replay/redis.js';
import { createTestIssuer, type TestIssuer } from '../../support/permits.js';
import { type RedisHandle, redisUnavailableReason, spawnRedis } from '../../support/redis.js';

const AUDIENCE = 'payments-service';
const TOOL = 'refund_payment';
const ARGS = { orderId: 'ord_1842', amount: 129 };
/** How far this service's clock is behind Redis's clock in the probe (a plausible NTP skew + latency). */
const SKEW_MS = 10_000;

const skip = redisUnavailableReason(true);

describe.skipIf(skip !== undefined)('Redis replay store: an expiry that Redis already sees as past', () => {
  let redis: RedisHandle;
  let pdp: TestIssuer;
  const stores: RedisReplayStore[] = [];

  beforeAll(async () => {
    redis = await spawnRedis();
    pdp = await createTestIssuer();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    while (stores.length > 0) await stores.pop()?.close();
  });

  function store(): RedisReplayStore {
    const s = createRedisReplayStore({ url: redis.url, prefix: `b2:${randomUUID()}:` });
    stores.push(s);
    return s;
  }

  it('claim(key, t) twice, with t in the future for this process but past for Redis: at most one true', async () => {
    const s = store();
    const realNow = Date.now();
    // warm the connection with the real clock
    expect(await s.claim(`warm-${randomUUID()}`, realNow + 60_000)).toBe(true);
    const realDateNow = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => realDateNow() - SKEW_MS);
    const key = randomUUID();
    const expiresAtMs = realDateNow() - SKEW_MS / 2; // future by the service clock, past by Redis's
    const first = await s.claim(key, expiresAtMs);
    const second = await s.claim(key, expiresAtMs);
    const third = await s.claim(key, expiresAtMs);
    expect([first, second, third].filter((x) => x === true).length).toBeLessThanOrEqual(1);
  });

  it('end to end: one permit verified three times through one Redis-backed verifier succeeds at most once', async () => {
    const s = store();
    expect(await s.claim(`warm-${randomUUID()}`, Date.now() + 60_000)).toBe(true);
    const realDateNow = Date.now.bind(Date);
    const serviceNowSec = Math.floor((realDateNow() - SKEW_MS) / 1000);
    // valid by the service's clock: exp + 5 s tolerance is ~3 s ahead of it, ~7 s behind Redis's clock
    const exp = serviceNowSec - 2;
    const permit = await pdp.mint(TOOL, ARGS, { iat: exp - 60, exp });
    vi.spyOn(Date, 'now').mockImplementation(() => realDateNow() - SKEW_MS);
    const verifier = createPermitVerifier({ keys: pdp.jwks, issuer: pdp.issuer, audience: AUDIENCE, replayStore: s });
    const results = [];
    for (let i = 0; i < 3; i++) {
      results.push(
        await verifier.verify(permit, { tool: TOOL, args: ARGS }).then(
          () => 'ok',
          (e: { code?: string }) => e.code,
        ),
      );
    }
    expect(results.filter((r) => r === 'ok').length, JSON.stringify(results)).toBeLessThanOrEqual(1);
  });
  it('no clock skew at all: a burst of claims of one key in the last milliseconds before its expiry, at most one true', async () => {
    const s = store();
    expect(await s.claim(`warm-${randomUUID()}`, Date.now() + 60_000)).toBe(true);
    let trues = 0;
    for (let round = 0; round < 20 && trues <= 1; round++) {
      const key = randomUUID();
      const expiresAtMs = Date.now() + 3;
      const answers = await Promise.all(
        Array.from({ length: 200 }, () => s.claim(key, expiresAtMs).catch(() => 'error' as const)),
      );
      trues = Math.max(trues, answers.filter((a) => a === true).length);
    }
    expect(trues).toBeLessThanOrEqual(1);
  });
});
