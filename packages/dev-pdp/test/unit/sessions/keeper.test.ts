import { describe, expect, test } from 'vitest';
import { SessionKeeper } from '../../../src/sessions/keeper.js';
import { createMemorySessionStore } from '../../../src/sessions/memory.js';
import type { SessionView } from '../../../src/sessions/state.js';
import type { SessionStore } from '../../../src/sessions/store.js';

const limits = { maxHistory: 256, sessionTtlSec: 60 };
const stepOf = (tool: string) => ({ stage: 'action' as const, tool, verdict: 'ALLOW' as const, latches: [] });

describe('SessionKeeper', () => {
  test('decisions of one session run one at a time in arrival order, each reading every earlier step', async () => {
    const keeper = new SessionKeeper(createMemorySessionStore(limits), 1000);
    const seen: number[] = [];
    const runs = Array.from({ length: 20 }, (_, i) =>
      keeper.run('k', false, async (view: SessionView) => {
        // a decision that takes a while: a later one must not overtake it
        await new Promise((r) => setTimeout(r, (20 - i) % 3));
        seen.push(view.history.length);
        return { update: { labels: [`l${i}`], step: stepOf(`t${i}`) }, finish: async () => i };
      }),
    );
    expect(await Promise.all(runs)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  test('no session key: an empty state, nothing written', async () => {
    const store = createMemorySessionStore(limits);
    const keeper = new SessionKeeper(store, 1000);
    await keeper.run(undefined, false, async (view) => {
      expect(view.history).toEqual([]);
      return { update: { labels: ['x'], step: stepOf('t') }, finish: async () => undefined };
    });
    expect((await store.read(JSON.stringify([]))).labels.size).toBe(0);
  });

  test('a store that never answers is a 503 session_store_unavailable within the timeout, and the next decision still runs', async () => {
    let hang = true;
    const memory = createMemorySessionStore(limits);
    const store: SessionStore = {
      acquire: (key) => (hang ? new Promise(() => {}) : memory.acquire(key)),
      read: (key) => (hang ? new Promise(() => {}) : memory.read(key)),
      close: () => memory.close(),
    };
    const keeper = new SessionKeeper(store, 100);
    const plan = async () => ({ update: { labels: [], step: stepOf('t') }, finish: async () => 'decided' });
    const started = Date.now();
    await expect(keeper.run('k', false, plan)).rejects.toMatchObject({
      status: 503,
      code: 'session_store_unavailable',
    });
    await expect(keeper.run('k', true, plan)).rejects.toMatchObject({ status: 503, code: 'session_store_unavailable' });
    expect(Date.now() - started).toBeLessThan(2000);
    hang = false;
    await expect(keeper.run('k', false, plan)).resolves.toBe('decided');
  });

  test('a failed commit is a 503 and nothing of the decision is finished', async () => {
    const memory = createMemorySessionStore(limits);
    const store: SessionStore = {
      async acquire(key) {
        const lease = await memory.acquire(key);
        return { ...lease, commit: async () => Promise.reject(new Error('lost the lock')) };
      },
      read: (key) => memory.read(key),
      close: () => memory.close(),
    };
    let finished = false;
    const keeper = new SessionKeeper(store, 1000);
    await expect(
      keeper.run('k', false, async () => ({
        update: { labels: ['x'], step: stepOf('t') },
        finish: async () => {
          finished = true;
        },
      })),
    ).rejects.toMatchObject({ code: 'session_store_unavailable' });
    expect(finished).toBe(false);
  });
});
