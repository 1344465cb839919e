import { describe, expect, test } from 'vitest';
import { SessionKeeper } from '../../../src/sessions/keeper.js';
import { createMemorySessionStore } from '../../../src/sessions/memory.js';
import { EMPTY_FACTS, EMPTY_SESSION, type SessionView } from '../../../src/sessions/state.js';
import { type SessionLease, type SessionStore, StaleView } from '../../../src/sessions/store.js';

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

  test('the time a decision takes to plan (a long text, a loaded machine) is not time waiting for the store: its commit is not refused 503', async () => {
    const store = createMemorySessionStore(limits);
    const keeper = new SessionKeeper(store, 50);
    const slow = async () => {
      await new Promise((r) => setTimeout(r, 120));
      return { update: { labels: ['seen'], step: stepOf('t') }, finish: async () => 'decided' };
    };
    await expect(keeper.run('k', false, slow)).resolves.toBe('decided');
    expect((await store.read('k')).labels.has('seen')).toBe(true);
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

  test('a commit that lost the race to another replica plans the decision again on the latest state, and finishes that plan only', async () => {
    const newer = { labels: new Set(['other']), history: [stepOf('other')], steps: 1, facts: EMPTY_FACTS };
    const commits: string[] = [];
    const latest: SessionLease = {
      view: newer,
      commit: async (update) => {
        commits.push(update.step.tool as string);
        return undefined;
      },
      release() {},
    };
    const store: SessionStore = {
      acquire: async () => ({ view: EMPTY_SESSION, commit: async () => latest, release() {} }),
      read: async () => EMPTY_SESSION,
      close: async () => {},
    };
    const keeper = new SessionKeeper(store, 1000);
    const planned: number[] = [];
    const out = await keeper.run('k', false, async (view) => {
      planned.push(view.steps);
      return { update: { labels: [], step: stepOf(`after-${view.steps}`) }, finish: async () => view.steps };
    });
    expect(planned).toEqual([0, 1]);
    expect(out).toBe(1);
    expect(commits).toEqual(['after-1']);
  });

  test('a confirm that finds a newer state plans again on it; a plan that throws otherwise gives the lease up', async () => {
    const newer = { labels: new Set<string>(), history: [stepOf('other')], steps: 1, facts: EMPTY_FACTS };
    let released = 0;
    const held: SessionLease = { view: newer, commit: async () => undefined, release: () => void released++ };
    const store: SessionStore = {
      acquire: async () => ({
        view: EMPTY_SESSION,
        confirm: async () => Promise.reject(new StaleView(held)),
        commit: async () => undefined,
        release: () => void released++,
      }),
      read: async () => EMPTY_SESSION,
      close: async () => {},
    };
    const keeper = new SessionKeeper(store, 1000);
    const seen: number[] = [];
    const out = await keeper.run('k', false, async (view, confirm) => {
      seen.push(view.steps);
      if (view.steps === 0) await confirm();
      return { update: { labels: [], step: stepOf('t') }, finish: async () => 'done' };
    });
    expect(seen).toEqual([0, 1]);
    expect(out).toBe('done');
    expect(released).toBe(0);
    await expect(
      keeper.run('k', false, async () => {
        throw new Error('bad');
      }),
    ).rejects.toThrow('bad');
    expect(released).toBe(1);
  });
});
