/**
 * The Redis session store's one round trip a decision (issue 41), against a real redis-server: a
 * replica decides on the state it last committed and the commit checks that nobody wrote since. These
 * tests hold the rules that make that safe: a replica that lost the race writes nothing and decides
 * again on the latest state; a held session (a decision about to take an approval or open an
 * escalation) makes every other replica's commit wait; a data loss is never papered over.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { redisUnavailableReason, useSharedRedis } from '../../../../test/support/redis.js';
import type { SessionRedisClient } from '../../src/sessions/options.js';
import { createRedisSessionStore } from '../../src/sessions/redis.js';
import type { HistoryStep } from '../../src/sessions/state.js';
import { type SessionLease, type SessionStore, StaleView } from '../../src/sessions/store.js';

const skip = redisUnavailableReason(false);
const limits = { maxHistory: 8, sessionTtlSec: 60 };
const step = (tool: string): HistoryStep => ({ stage: 'action', tool, verdict: 'ALLOW', latches: [] });

describe.skipIf(skip !== undefined)('the Redis session store shared by replicas', () => {
  const prefix = `agent-pep-test:${randomUUID()}:`;
  const shared = useSharedRedis(prefix);

  /** A store on the admin connection that counts the scripts it runs (its round trips). */
  async function counted(): Promise<{ store: SessionStore; trips: () => number }> {
    let trips = 0;
    const admin = shared.admin as unknown as SessionRedisClient;
    const client: SessionRedisClient = {
      get status() {
        return admin.status;
      },
      eval: (...args) => {
        trips++;
        return admin.eval(...args);
      },
      evalsha: (...args) => {
        trips++;
        return (admin.evalsha as NonNullable<SessionRedisClient['evalsha']>)(...args);
      },
      once: (event, listener) => admin.once(event, listener),
      off: (event, listener) => admin.off(event, listener),
    };
    const store = await createRedisSessionStore({ redis: client }, limits, 1000, prefix);
    return { store, trips: () => trips };
  }

  test('a session this replica committed last is decided in one round trip', async () => {
    const { store, trips } = await counted();
    const key = randomUUID();
    await (await store.acquire(key)).commit({ labels: ['a'], step: step('t0') });
    // warm: the script is loaded (a NOSCRIPT answer would be a second call)
    await (await store.acquire(key)).commit({ labels: [], step: step('t1') });
    const before = trips();
    const lease = await store.acquire(key);
    expect(lease.view.steps).toBe(2);
    expect([...lease.view.labels]).toEqual(['a']);
    expect(await lease.commit({ labels: ['b'], step: step('t2') })).toBeUndefined();
    expect(trips() - before).toBe(1);
    const read = await store.read(key);
    expect(read.steps).toBe(3);
    expect([...read.labels].sort()).toEqual(['a', 'b']);
    expect(read.history.map((s) => s.tool)).toEqual(['t0', 't1', 't2']);
  });

  test('a replica that decided on a state another replica has since changed writes nothing and gets the latest', async () => {
    const a = (await counted()).store;
    const b = (await counted()).store;
    const key = randomUUID();
    await (await a.acquire(key)).commit({ labels: ['a0'], step: step('a0') });
    await (await b.acquire(key)).commit({ labels: ['b0'], step: step('b0') });
    // A's own copy is one step behind now: its commit must not write over B's step
    const stale = await a.acquire(key);
    expect(stale.view.steps).toBe(1);
    const newer = (await stale.commit({ labels: ['a1'], step: step('a1') })) as SessionLease;
    expect(newer).toBeDefined();
    expect(newer.view.steps).toBe(2);
    expect([...newer.view.labels].sort()).toEqual(['a0', 'b0']);
    expect(await newer.commit({ labels: ['a1'], step: step('a1') })).toBeUndefined();
    const read = await b.read(key);
    expect(read.history.map((s) => s.tool)).toEqual(['a0', 'b0', 'a1']);
    expect(read.steps).toBe(3);
  });

  test('confirm on a changed state is a StaleView with a held lease on the latest; other replicas wait for its commit', async () => {
    const a = (await counted()).store;
    const b = (await counted()).store;
    const key = randomUUID();
    await (await a.acquire(key)).commit({ labels: [], step: step('a0') });
    await (await b.acquire(key)).commit({ labels: [], step: step('b0') });
    const stale = await a.acquire(key);
    const error = await (stale.confirm as () => Promise<void>)().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StaleView);
    const held = (error as StaleView).lease;
    expect(held.view.steps).toBe(2);
    // B's decision on its up-to-date copy cannot commit while A holds the session
    const waiting = (await b.acquire(key)).commit({ labels: [], step: step('b1') });
    await new Promise((r) => setTimeout(r, 50));
    expect(await held.commit({ labels: [], step: step('a1') })).toBeUndefined();
    // ...and once A committed, B's commit finds a newer state: nothing of B's is written over A's
    const afterA = (await waiting) as SessionLease;
    expect(afterA.view.history.map((s) => s.tool)).toEqual(['a0', 'b0', 'a1']);
    expect(await shared.admin.keys(`${prefix}*:lock`)).toEqual([]);
  });

  test('a state key lost since this replica committed is not written over: the latest state reads as lost', async () => {
    const { store } = await counted();
    const key = randomUUID();
    await (await store.acquire(key)).commit({ labels: ['seen:web'], step: step('t0') });
    const stateKeys = await shared.admin.keys(`${prefix}*:state`);
    for (const k of stateKeys) await shared.admin.del(k);
    const lease = await store.acquire(key);
    const newer = (await lease.commit({ labels: [], step: step('t1') })) as SessionLease;
    expect(newer).toBeDefined();
    expect(newer.view.lost).toBe(true);
  });

  test('a held session whose state changed anyway (written past the lock) is a failed commit: nothing written, the lock gone', async () => {
    const { store } = await counted();
    const key = randomUUID();
    await (await store.acquire(key)).commit({ labels: [], step: step('t0') });
    const lease = await store.acquire(key);
    await (lease.confirm as () => Promise<void>)();
    const stateKeys = await shared.admin.keys(`${prefix}*:state`);
    const mine = [];
    for (const k of stateKeys) {
      const text = (await shared.admin.get(k)) as string;
      if (text.startsWith('{"steps":1,')) mine.push(k);
    }
    for (const k of mine)
      await shared.admin.set(k, (await shared.admin.get(k))?.replace('{"steps":1,', '{"steps":7,') as string);
    await expect(lease.commit({ labels: [], step: step('t1') })).rejects.toThrow();
    expect(await shared.admin.keys(`${prefix}*:lock`)).toEqual([]);
    expect((await store.read(key)).history.map((s) => s.tool)).toEqual(['t0']);
  });
});
