/**
 * The Durable Object replay store (src/replay/durable-object.ts): its options are validated, a key is
 * claimed once until it expires, and an answer that is not the object's own rejects (the verifier then
 * refuses the permit). workerd itself: test/integration/runtimes/workerd.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  createDurableObjectReplayStore,
  type DurableObjectNamespaceLike,
  type DurableObjectStorageLike,
  PermitReplayDurableObject,
} from '../../../src/replay/durable-object.js';

/** Storage as a Map (one event at a time, as a Durable Object runs). */
function memoryStorage(): DurableObjectStorageLike & { map: Map<string, unknown> } {
  const map = new Map<string, unknown>();
  let alarm: number | null = null;
  return {
    map,
    get: async <T>(k: string) => map.get(k) as T | undefined,
    put: async (k, v) => {
      map.set(k, v);
    },
    delete: async (keys) => keys.filter((k) => map.delete(k)).length,
    list: async <T>({ prefix }: { prefix: string }) =>
      new Map([...map].filter(([k]) => k.startsWith(prefix)) as [string, T][]),
    getAlarm: async () => alarm,
    setAlarm: async (t) => {
      alarm = t;
    },
  };
}

function namespaceOf(
  object: { fetch(r: Request): Promise<Response> },
  names: string[] = [],
): DurableObjectNamespaceLike {
  return {
    idFromName: (name) => {
      names.push(name);
      return name;
    },
    get: () => ({ fetch: (input, init) => object.fetch(new Request(input, init)) }),
  };
}

describe('createDurableObjectReplayStore', () => {
  it('refuses a missing namespace, bad shards and unknown keys, naming the option', () => {
    const option = (o: unknown) => {
      try {
        createDurableObjectReplayStore(o as never);
        return 'accepted';
      } catch (err) {
        expect(err).toBeInstanceOf(TypeError);
        return (err as { option?: string }).option;
      }
    };
    const namespace = namespaceOf(new PermitReplayDurableObject({ storage: memoryStorage() }));
    expect(option({})).toBe('namespace');
    expect(option({ namespace, shards: 0 })).toBe('shards');
    expect(option({ namespace, shards: 257 })).toBe('shards');
    expect(option({ namespace, replayStore: 1 })).toBe('replayStore');
    expect(option({ namespace })).toBe('accepted');
  });

  it('claims a key once until it expires', async () => {
    const storage = memoryStorage();
    const store = createDurableObjectReplayStore({
      namespace: namespaceOf(new PermitReplayDurableObject({ storage })),
    });
    const later = Date.now() + 60_000;
    expect(await store.claim('k1', later)).toBe(true);
    expect(await store.claim('k1', later)).toBe(false);
    expect(await store.claim('k2', later)).toBe(true);
    storage.map.set('claim:k3', Date.now() - 1);
    expect(await store.claim('k3', later)).toBe(true);
  });

  it('sends one key always to one shard', async () => {
    const names: string[] = [];
    const store = createDurableObjectReplayStore({
      namespace: namespaceOf(new PermitReplayDurableObject({ storage: memoryStorage() }), names),
      shards: 8,
    });
    await store.claim('same', Date.now() + 1000);
    await store.claim('same', Date.now() + 1000);
    expect(new Set(names).size).toBe(1);
  });

  it('rejects when the object answers anything but its own answer', async () => {
    for (const res of [new Response('{}'), new Response(null, { status: 500 }), Response.json({ claimed: 'yes' })]) {
      const store = createDurableObjectReplayStore({ namespace: namespaceOf({ fetch: async () => res }) });
      await expect(store.claim('k', Date.now() + 1000)).rejects.toThrow();
    }
  });

  it('the object sweeps expired claims with its alarm and keeps the rest', async () => {
    const storage = memoryStorage();
    const object = new PermitReplayDurableObject({ storage });
    storage.map.set('claim:old', Date.now() - 1);
    storage.map.set('claim:new', Date.now() + 60_000);
    await object.alarm();
    expect([...storage.map.keys()]).toEqual(['claim:new']);
  });
});
