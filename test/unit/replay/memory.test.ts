import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DEFAULTS } from '../../../src/options/pep.js';
import { REPLAY_MARGIN_SEC } from '../../../src/permit/verifier.js';
import { createMemoryReplayStore, MEMORY_STORE_DEFAULTS, ReplayStoreFullError } from '../../../src/replay/memory.js';
import { optionOf } from '../../support/options.js';

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
    expect(store.claim('a', T0 + 1000)).toBe(true);
    expect(store.claim('a', T0 + 1000)).toBe(false);
    expect(store.claim('a', T0 + 99_000)).toBe(false);
    expect(store.claim('b', T0 + 1000)).toBe(true);
  });

  it('concurrent claims of one key: exactly one true', async () => {
    const store = createMemoryReplayStore();
    const results = await Promise.all(Array.from({ length: 50 }, () => store.claim('k', T0 + 1000)));
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('a key can be claimed again after it has expired', async () => {
    const store = createMemoryReplayStore();
    expect(store.claim('a', T0 + 1000)).toBe(true);
    vi.setSystemTime(T0 + 1000);
    expect(store.claim('a', T0 + 5000)).toBe(true);
    expect(store.claim('a', T0 + 5000)).toBe(false);
  });

  it('a claim whose expiresAtMs is already past resolves false and stores nothing', async () => {
    const store = createMemoryReplayStore({ maxEntries: 1 });
    expect(store.claim('old', T0 - 1)).toBe(false);
    expect(store.claim('old', T0)).toBe(false);
    // nothing was stored: the single slot is still free
    expect(store.claim('new', T0 + 1000)).toBe(true);
  });

  it('is bounded: full of unexpired entries, it refuses (rejects) instead of evicting', async () => {
    const store = createMemoryReplayStore({ maxEntries: 3 });
    for (const k of ['a', 'b', 'c']) expect(store.claim(k, T0 + 60_000)).toBe(true);
    expect(() => store.claim('d', T0 + 60_000)).toThrow(ReplayStoreFullError);
    // the live entries are all still held
    for (const k of ['a', 'b', 'c']) expect(store.claim(k, T0 + 60_000)).toBe(false);
  });

  it('sweeps expired entries when full, then accepts again', async () => {
    const store = createMemoryReplayStore({ maxEntries: 3 });
    await store.claim('a', T0 + 1000);
    await store.claim('b', T0 + 60_000);
    await store.claim('c', T0 + 1000);
    expect(() => store.claim('d', T0 + 60_000)).toThrow();
    vi.setSystemTime(T0 + 2000);
    expect(store.claim('d', T0 + 60_000)).toBe(true);
    expect(store.claim('e', T0 + 60_000)).toBe(true);
    expect(() => store.claim('f', T0 + 60_000)).toThrow();
    expect(store.claim('b', T0 + 60_000)).toBe(false);
  });

  it('sweeps expired entries as it goes, so steady traffic never fills it', async () => {
    const store = createMemoryReplayStore({ maxEntries: 100 });
    for (let i = 0; i < 10_000; i++) {
      vi.setSystemTime(T0 + i * 10);
      expect(store.claim(`k${i}`, T0 + i * 10 + 500)).toBe(true);
    }
  });

  it('rejects a key that is not a string or an expiry that is not a finite number', async () => {
    const store = createMemoryReplayStore();
    expect(() => store.claim(1 as unknown as string, T0 + 1000)).toThrow(TypeError);
    expect(() => store.claim('a', Number.NaN)).toThrow(TypeError);
    expect(() => store.claim('a', '1' as unknown as number)).toThrow(TypeError);
  });

  it('answers synchronously (a boolean, not a promise), so the verifier needs no timer for it', () => {
    const store = createMemoryReplayStore();
    expect(store.claim('sync', T0 + 1000)).toBe(true);
    expect(store.claim('sync', T0 + 1000)).toBe(false);
  });

  it.each([0, -1, 1.5, Number.NaN, '10'])(
    'maxEntries %j: TypeError naming maxEntries at construction',
    (maxEntries) => {
      expect(optionOf(() => createMemoryReplayStore({ maxEntries: maxEntries as number }))).toBe('maxEntries');
    },
  );

  it('an unknown option (a typo of maxEntries) is a TypeError naming it, never ignored', () => {
    expect(optionOf(() => createMemoryReplayStore({ maxEntry: 10 } as never))).toBe('maxEntry');
  });

  it('options that are not an object: TypeError', () => {
    expect(optionOf(() => createMemoryReplayStore(null as never))).toBe('(options)');
  });
});

describe('createMemoryReplayStore sizing: an id is held until exp + 360 s, not for the lifetime', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(T0);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('the default maxEntries sustains 150 permits a second at the longest lifetime (300 s + 360 s held)', () => {
    expect(MEMORY_STORE_DEFAULTS.maxEntries).toBeGreaterThanOrEqual(
      150 * (DEFAULTS.maxPermitLifetimeSec + REPLAY_MARGIN_SEC),
    );
  });

  it('rate x (lifetime + margin) entries are enough for a steady flow; rate x lifetime are not', () => {
    // 2 permits a second, 10 s lifetime, held until exp + 360 s: 2 x 370 = 740 entries in flight
    const rate = 2;
    const lifetimeSec = 10;
    const run = (maxEntries: number): boolean => {
      vi.setSystemTime(T0);
      const store = createMemoryReplayStore({ maxEntries });
      try {
        for (let i = 0; i < rate * 1000; i++) {
          const now = T0 + (i * 1000) / rate;
          vi.setSystemTime(now);
          store.claim(`k${i}`, now + (lifetimeSec + REPLAY_MARGIN_SEC) * 1000);
        }
        return true;
      } catch (e) {
        expect(e).toBeInstanceOf(ReplayStoreFullError);
        return false;
      }
    };
    expect(run(rate * (lifetimeSec + REPLAY_MARGIN_SEC) + 1)).toBe(true);
    expect(run(rate * lifetimeSec)).toBe(false);
  });
});
