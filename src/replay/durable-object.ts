/**
 * The replay store of Cloudflare Workers (`agent-pep/replay/durable-object`, docs/runtimes.md):
 * permit ids are claimed in a Durable Object, one instance per name across every isolate and every
 * Worker bound to its namespace, so a permit is used once however many isolates verify it.
 * A Durable Object runs one event at a time, and its storage's input gates keep a `get` and the
 * `put` after it one step: of two claims of one key, exactly one gets `true`. Its storage is durable
 * (no restart or failover forgets a claim), so unlike Redis without persistence it needs no epoch.
 * Nothing here imports `cloudflare:workers` or a Node built-in: it loads anywhere and runs in workerd.
 * @packageDocumentation
 * @module replay/durable-object
 */
import { integerOption, optionError, refuseUnknownKeys } from '../internal/option-kit.js';
import type { ReplayStore } from './types.js';

/** The part of a Durable Object stub this store calls (workerd's `DurableObjectStub`). */
export interface DurableObjectStubLike {
  fetch(input: string, init: RequestInit): Promise<Response>;
}

/** The part of a Durable Object namespace binding this store calls (workerd's `DurableObjectNamespace`). */
export interface DurableObjectNamespaceLike {
  idFromName(name: string): unknown;
  get(id: never): DurableObjectStubLike;
}

/** Options of {@link createDurableObjectReplayStore}. */
export interface DurableObjectReplayStoreOptions {
  /** The namespace binding of {@link PermitReplayDurableObject} (`env.PERMIT_REPLAY`). Required. */
  namespace: DurableObjectNamespaceLike;
  /** The Durable Object's name; every verifier that must share claims uses the same. @defaultValue 'agent-pep-replay' */
  name?: string | undefined;
  /**
   * Durable Objects the keys are spread over (by a hash of the key, so one key always goes to one),
   * 1 to 256: one object serves about a thousand claims a second. @defaultValue 1
   */
  shards?: number | undefined;
}

const SCOPE = 'createDurableObjectReplayStore';
const KNOWN: ReadonlySet<string> = new Set(['namespace', 'name', 'shards']);
/** The URL the store's requests carry; the object reads only its path. */
const CLAIM_URL = 'https://agent-pep.replay/claim';
/** Longest key accepted (the verifier's keys are 43 characters; Durable Object keys may be 2 KiB). */
const MAX_KEY_LENGTH = 512;

/** FNV-1a of `key`, for the shard a key goes to (stable across isolates and releases). */
function shardOf(key: string, shards: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % shards;
}

/**
 * Builds a replay store on a Durable Object namespace bound to {@link PermitReplayDurableObject}.
 * @param options - `namespace` (required), `name?`, `shards?`
 * @returns a {@link ReplayStore} whose `claim` resolves true only for the first claim of a key, across
 *   every isolate bound to the namespace
 * @throws TypeError with `err.option` for a missing or bad option, or an unknown key
 * @remarks A claim that cannot be made (the object unreachable, an answer that is not its own) rejects:
 *   the verifier refuses the permit (`permit_store_unavailable`), within its `storeTimeoutMs`.
 * @example
 * ```ts
 * import { createPermitVerifier } from 'agent-pep';
 * import { createDurableObjectReplayStore, PermitReplayDurableObject } from 'agent-pep/replay/durable-object';
 * export { PermitReplayDurableObject }; // wrangler: durable_objects.bindings [{ name: 'PERMIT_REPLAY', class_name: 'PermitReplayDurableObject' }]
 * export default {
 *   async fetch(request: Request, env: { PERMIT_REPLAY: DurableObjectNamespaceLike }) {
 *     const verifier = createPermitVerifier({
 *       keys: 'https://pdp.example/.well-known/jwks.json', issuer: 'https://pdp.example', audience: 'payments',
 *       replayStore: createDurableObjectReplayStore({ namespace: env.PERMIT_REPLAY }),
 *     });
 *     // ... await verifier.verify(permit, { tool, args }), then run the effect
 *     return new Response('ok');
 *   },
 * };
 * ```
 */
export function createDurableObjectReplayStore(options: DurableObjectReplayStoreOptions): ReplayStore {
  if (typeof options !== 'object' || options === null) optionError(SCOPE, '(options)', 'expected an object');
  refuseUnknownKeys(SCOPE, options, KNOWN);
  const { namespace } = options;
  if (
    typeof namespace !== 'object' ||
    namespace === null ||
    typeof namespace.idFromName !== 'function' ||
    typeof namespace.get !== 'function'
  ) {
    optionError(SCOPE, 'namespace', 'expected a Durable Object namespace binding');
  }
  const name = options.name ?? 'agent-pep-replay';
  if (typeof name !== 'string' || name.length === 0 || name.length > 200) {
    optionError(SCOPE, 'name', 'expected a non-empty string of at most 200 characters');
  }
  const shards = integerOption(SCOPE, 'shards', options.shards, 1, 1);
  if (shards > 256) optionError(SCOPE, 'shards', 'at most 256');
  const stubs = new Map<number, DurableObjectStubLike>();
  const stubOf = (shard: number): DurableObjectStubLike => {
    let stub = stubs.get(shard);
    if (stub === undefined) {
      stub = namespace.get(namespace.idFromName(shards === 1 ? name : `${name}:${shard}`) as never);
      stubs.set(shard, stub);
    }
    return stub;
  };
  return {
    async claim(key: string, expiresAtMs: number): Promise<boolean> {
      if (typeof key !== 'string' || key.length === 0 || key.length > MAX_KEY_LENGTH) {
        throw new TypeError('replay key must be a non-empty string of at most 512 characters');
      }
      if (!Number.isFinite(expiresAtMs)) throw new TypeError('expiresAtMs must be a finite number');
      const res = await stubOf(shardOf(key, shards)).fetch(CLAIM_URL, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ key, expiresAtMs }),
      });
      const answer = res.status === 200 ? ((await res.json()) as { claimed?: unknown }) : undefined;
      if (typeof answer?.claimed !== 'boolean') throw new Error(`the replay Durable Object answered ${res.status}`);
      return answer.claimed;
    },
  };
}

/** The part of workerd's `DurableObjectStorage` the object uses. */
export interface DurableObjectStorageLike {
  get<T>(key: string): Promise<T | undefined>;
  put<T>(key: string, value: T): Promise<void>;
  delete(keys: string[]): Promise<number>;
  list<T>(options: { prefix: string; limit: number; startAfter?: string }): Promise<Map<string, T>>;
  getAlarm(): Promise<number | null>;
  setAlarm(scheduledTimeMs: number): Promise<void>;
}

/** The part of workerd's `DurableObjectState` the object uses. */
export interface DurableObjectStateLike {
  storage: DurableObjectStorageLike;
}

/** Stored claims are under this prefix; the value is the claim's expiry (epoch milliseconds). */
const PREFIX = 'claim:';
/** Expired claims are swept at most this often, in milliseconds. */
const SWEEP_EVERY_MS = 60_000;
/** Claims swept per storage call. */
const SWEEP_BATCH = 512;

/**
 * The Durable Object class that holds the claims: export it from your Worker and bind it (wrangler:
 * `durable_objects.bindings`, and a migration with `new_sqlite_classes` or `new_classes`). It answers
 * `POST /claim` with `{ claimed }`, and sweeps expired claims with an alarm.
 */
export class PermitReplayDurableObject {
  readonly #storage: DurableObjectStorageLike;

  /** Called by workerd with the object's state (and the Worker's env, unused). */
  constructor(state: DurableObjectStateLike, _env?: unknown) {
    this.#storage = state.storage;
  }

  /** `POST /claim` with `{ key, expiresAtMs }`: `{ claimed: true }` for the first unexpired claim of `key`. */
  async fetch(request: Request): Promise<Response> {
    if (request.method !== 'POST' || new URL(request.url).pathname !== '/claim') {
      return new Response(null, { status: 404 });
    }
    let input: { key?: unknown; expiresAtMs?: unknown };
    try {
      input = (await request.json()) as typeof input;
    } catch {
      return new Response(null, { status: 400 });
    }
    const { key, expiresAtMs } = input;
    if (typeof key !== 'string' || key.length === 0 || key.length > MAX_KEY_LENGTH) {
      return new Response(null, { status: 400 });
    }
    if (typeof expiresAtMs !== 'number' || !Number.isFinite(expiresAtMs)) return new Response(null, { status: 400 });
    return Response.json({ claimed: await this.claim(key, expiresAtMs) });
  }

  /** Claims `key` until `expiresAtMs`: true only when no unexpired claim of it is stored. */
  async claim(key: string, expiresAtMs: number): Promise<boolean> {
    const stored = await this.#storage.get<number>(PREFIX + key);
    if (stored !== undefined && stored > Date.now()) return false;
    await this.#storage.put(PREFIX + key, expiresAtMs);
    if ((await this.#storage.getAlarm()) === null) await this.#storage.setAlarm(Date.now() + SWEEP_EVERY_MS);
    return true;
  }

  /** Deletes expired claims; runs again while any claim is stored. */
  async alarm(): Promise<void> {
    const now = Date.now();
    let left = false;
    let startAfter: string | undefined;
    for (;;) {
      const page = await this.#storage.list<number>({
        prefix: PREFIX,
        limit: SWEEP_BATCH,
        ...(startAfter === undefined ? {} : { startAfter }),
      });
      const expired: string[] = [];
      for (const [k, exp] of page) {
        if (exp <= now) expired.push(k);
        else left = true;
        startAfter = k;
      }
      if (expired.length > 0) await this.#storage.delete(expired);
      if (page.size < SWEEP_BATCH) break;
    }
    if (left) await this.#storage.setAlarm(now + SWEEP_EVERY_MS);
  }
}
