import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createMemoryReplayStore, ReplayStoreFullError } from '../../src/replay/memory.js';

const T0 = Date.UTC(2030, 0, 1);

describe('createMemoryReplayStore', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(T0);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('true for the first claim of a key, false while it is unexpired', async () => {
    const store = createMemoryReplayStore();
    await expect(store.claim('a', T0 + 1000)).resolves.toBe(true);
    await expect(store.claim('a', T0 + 1000)).resolves.toBe(false);
    await expect(store.claim('a', T0 + 99_000)).resolves.toBe(false);
    await expect(store.claim('b', T0 + 1000)).resolves.toBe(true);
  });

  it('concurrent claims of one key: exactly one true', async () => {
    const store = createMemoryReplayStore();
    const results = await Promise.all(Array.from({ length: 50 }, () => store.claim('k', T0 + 1000)));
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('a key can be claimed again after it has expired', async () => {
    const store = createMemoryReplayStore();
    await expect(store.claim('a', T0 + 1000)).resolves.toBe(true);
    vi.setSystemTime(T0 + 1000);
    await expect(store.claim('a', T0 + 5000)).resolves.toBe(true);
    await expect(store.claim('a', T0 + 5000)).resolves.toBe(false);
  });

  it('a claim whose expiresAtMs is already past resolves false and stores nothing', async () => {
    const store = createMemoryReplayStore({ maxEntries: 1 });
    await expect(store.claim('old', T0 - 1)).resolves.toBe(false);
    await expect(store.claim('old', T0)).resolves.toBe(false);
    // nothing was stored: the single slot is still free
    await expect(store.claim('new', T0 + 1000)).resolves.toBe(true);
  });

  it('is bounded: full of unexpired entries, it refuses (rejects) instead of evicting', async () => {
    const store = createMemoryReplayStore({ maxEntries: 3 });
    for (const k of ['a', 'b', 'c']) await expect(store.claim(k, T0 + 60_000)).resolves.toBe(true);
    await expect(store.claim('d', T0 + 60_000)).rejects.toBeInstanceOf(ReplayStoreFullError);
    // the live entries are all still held
    for (const k of ['a', 'b', 'c']) await expect(store.claim(k, T0 + 60_000)).resolves.toBe(false);
  });

  it('sweeps expired entries when full, then accepts again', async () => {
    const store = createMemoryReplayStore({ maxEntries: 3 });
    await store.claim('a', T0 + 1000);
    await store.claim('b', T0 + 60_000);
    await store.claim('c', T0 + 1000);
    await expect(store.claim('d', T0 + 60_000)).rejects.toThrow();
    vi.setSystemTime(T0 + 2000);
    await expect(store.claim('d', T0 + 60_000)).resolves.toBe(true);
    await expect(store.claim('e', T0 + 60_000)).resolves.toBe(true);
    await expect(store.claim('f', T0 + 60_000)).rejects.toThrow();
    await expect(store.claim('b', T0 + 60_000)).resolves.toBe(false);
  });

  it('sweeps expired entries as it goes, so steady traffic never fills it', async () => {
    const store = createMemoryReplayStore({ maxEntries: 100 });
    for (let i = 0; i < 10_000; i++) {
      vi.setSystemTime(T0 + i * 10);
      await expect(store.claim(`k${i}`, T0 + i * 10 + 500)).resolves.toBe(true);
    }
  });

  it('rejects a key that is not a string or an expiry that is not a finite number', async () => {
    const store = createMemoryReplayStore();
    await expect(store.claim(1 as unknown as string, T0 + 1000)).rejects.toBeInstanceOf(TypeError);
    await expect(store.claim('a', Number.NaN)).rejects.toBeInstanceOf(TypeError);
    await expect(store.claim('a', '1' as unknown as number)).rejects.toBeInstanceOf(TypeError);
  });

  it.each([0, -1, 1.5, Number.NaN, '10'])('maxEntries %j: TypeError at construction', (maxEntries) => {
    expect(() => createMemoryReplayStore({ maxEntries: maxEntries as number })).toThrow(TypeError);
  });
});
