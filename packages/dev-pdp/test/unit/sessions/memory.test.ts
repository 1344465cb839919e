import { describe, expect, test } from 'vitest';
import { createMemorySessionStore } from '../../../src/sessions/memory.js';
import type { HistoryStep } from '../../../src/sessions/state.js';

const step = (tool: string): HistoryStep => ({ stage: 'action', tool, verdict: 'ALLOW', latches: [] });

describe('the memory session store', () => {
  test('labels only grow; the history keeps the last maxHistory steps, oldest first', async () => {
    const store = createMemorySessionStore({ maxHistory: 3, sessionTtlSec: 60 });
    for (const [i, labels] of [['a'], [], ['b', 'a'], [], ['c']].entries()) {
      await (await store.acquire('k')).commit({ labels, step: step(`t${i}`) });
    }
    const view = await store.read('k');
    expect([...view.labels].sort()).toEqual(['a', 'b', 'c']);
    expect(view.history.map((s) => s.tool)).toEqual(['t2', 't3', 't4']);
    expect((await store.read('other')).history).toEqual([]);
  });

  test('a session expires sessionTtlSec after its last committed step; reads do not keep it alive', async () => {
    let now = 1_000_000;
    const store = createMemorySessionStore({ maxHistory: 10, sessionTtlSec: 60 }, () => now);
    await (await store.acquire('k')).commit({ labels: ['a'], step: step('t') });
    now += 59_000;
    expect([...(await store.read('k')).labels]).toEqual(['a']);
    await (await store.acquire('k')).commit({ labels: [], step: step('t') });
    now += 59_000;
    expect((await store.read('k')).history).toHaveLength(2);
    now += 1_000;
    expect((await store.read('k')).labels.size).toBe(0);
    expect((await store.acquire('k')).view.history).toEqual([]);
  });
});
