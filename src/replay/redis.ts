/**
 * `agent-pep/redis`: a replay store shared by every replica of a service, on ioredis.
 * The only import of ioredis (an optional peer dependency: only users of this entry install it).
 * @packageDocumentation
 * @module replay/redis
 */
import { hash } from 'node:crypto';
import { type Cluster, Redis } from 'ioredis';
import { beforeDeadline, deadlineIn } from '../internal/deadline.js';
import { msOption, optionError, refuseUnknownKeys } from '../internal/option-kit.js';
import { type ReplayStore, ReplayUnknownError } from './types.js';

export { type ReplayStore, ReplayUnknownError } from './types.js';

/** Options of {@link createRedisReplayStore}: exactly one of `url` and `client`. */
export interface RedisReplayStoreOptions {
  /** A `redis://` or `rediss://` URL; the store opens (and `close()` closes) its own connection. */
  url?: string | undefined;
  /**
   * An ioredis `Redis` or `Cluster` the caller owns (and closes). Best created with
   * `enableOfflineQueue: false` so that nothing queues while Redis is away.
   */
  client?: Redis | Cluster | undefined;
  /**
   * Prepended to every key, the epoch key (`<prefix>epoch`) included. With a Redis Cluster it must
   * hold a hash tag (`'{agent-pep}:permit:'`), so that the epoch and every claim live on one node.
   * @defaultValue `'agent-pep:permit:'`
   */
  prefix?: string | undefined;
  /**
   * How far before the epoch (when Redis last lost its data) a permit's `iat` may be and still be
   * claimed, in seconds, 0 to 300: the skew allowed between the PDP's clock and Redis's. Give it your
   * verifiers' `clockToleranceSec`. @defaultValue 5
   */
  clockToleranceSec?: number | undefined;
  /**
   * Deadline of one claim, waiting for the connection included, in milliseconds; a claim that takes
   * longer rejects. @defaultValue 500
   */
  commandTimeoutMs?: number | undefined;
  /** Deadline of one connection attempt (`url` only), in milliseconds. @defaultValue 1000 */
  connectTimeoutMs?: number | undefined;
}

/** A {@link ReplayStore} on Redis; `close()` releases a connection the store opened itself. */
export interface RedisReplayStore extends ReplayStore {
  /**
   * Claims `key` until `expiresAtMs` (Unix epoch milliseconds) in one atomic script that checks the
   * epoch first (docs/permits.md).
   * @param issuedAtMs - the permit's `iat` in Unix epoch milliseconds (the verifier passes it); when
   *   absent, the key alone is claimed
   * @returns a promise of true only for the first claim of an unexpired key
   * @throws ReplayUnknownError (as a rejection) when `issuedAtMs` is before the epoch less the clock
   *   tolerance: Redis lost its data since, and may have forgotten a claim of this permit
   */
  claim(key: string, expiresAtMs: number, issuedAtMs?: number): Promise<boolean>;
  /** Closes the connection made from `url`; does nothing to a `client` the caller passed in. */
  close(): Promise<void>;
}

/** Defaults of the Redis store. @internal */
export const REDIS_STORE_DEFAULTS = Object.freeze({
  prefix: 'agent-pep:permit:',
  clockToleranceSec: 5,
  commandTimeoutMs: 500,
  connectTimeoutMs: 1000,
  /** Longest wait between reconnection attempts, in milliseconds. */
  maxReconnectDelayMs: 2000,
});

/** Why a Redis claim did not answer: not connected, too slow, closed, or an unexpected reply. */
export class RedisReplayStoreError extends Error {
  override readonly name = 'RedisReplayStoreError';
}

type Client = Redis | Cluster;

/**
 * The claim, atomic on the server. KEYS: the claim key, the epoch key; ARGV: expiresAtMs, issuedAtMs
 * (or ''), the clock tolerance in ms.
 * 1. The epoch: a missing epoch key means Redis lost its data (a restart without persistence, a failover
 *    to an empty replica, a flush) or never had any, so every claim made before now may be forgotten:
 *    the epoch becomes Redis's TIME now, with no expiry.
 * 2. A permit issued before the epoch less the tolerance may have been claimed before the loss: -1
 *    (`permit_replay_unknown`).
 * 3. `SET key 1 NX PXAT expiresAtMs`, refused (0) when that expiry is already past by Redis's own clock.
 *    Redis answers OK to a SET with a past PXAT and stores nothing, so without this check every claim of
 *    a permit near its expiry (or from a service whose clock lags Redis's) would count as the first one.
 */
const CLAIM_SCRIPT = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local epoch = tonumber(redis.call('GET', KEYS[2]))
if not epoch then
  epoch = now
  redis.call('SET', KEYS[2], tostring(now))
end
if ARGV[2] ~= '' and tonumber(ARGV[2]) < epoch - tonumber(ARGV[3]) then return -1 end
if tonumber(ARGV[1]) <= now then return 0 end
return redis.call('SET', KEYS[1], '1', 'NX', 'PXAT', ARGV[1])`;
/** The script's SHA-1, as Redis names it in its script cache (EVALSHA). */
const CLAIM_SHA = hash('sha1', CLAIM_SCRIPT, 'hex');

/** True for Redis's answer to an EVALSHA of a script it does not hold (after SCRIPT FLUSH or a restart). */
function isNoScript(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('NOSCRIPT');
}

const SCOPE = 'createRedisReplayStore';
const KNOWN_OPTIONS: ReadonlySet<string> = new Set([
  'url',
  'client',
  'prefix',
  'clockToleranceSec',
  'commandTimeoutMs',
  'connectTimeoutMs',
]);

/** True when `prefix` holds a Redis Cluster hash tag (`{...}` with something inside). */
function hasHashTag(prefix: string): boolean {
  const open = prefix.indexOf('{');
  return open >= 0 && prefix.indexOf('}', open + 1) > open + 1;
}

/** Throws the option `TypeError` for `path` (in `err.option`). */
function fail(path: string, problem: string): never {
  optionError(SCOPE, path, problem);
}

function positiveMs(v: unknown, name: string, dflt: number): number {
  return msOption(SCOPE, name, v, dflt);
}

/**
 * Waits for `client` to be ready, sharing one pair of listeners between every waiting claim.
 * Refuses at once when the connection is known to be down (between reconnection attempts) or ended;
 * waits (until the claim's deadline) only while a connection attempt is in progress.
 */
function readiness(client: Client): () => Promise<void> {
  let pending: Promise<void> | undefined;
  return () => {
    const status = client.status;
    if (status === 'ready' || status === 'wait') return Promise.resolve();
    if (status === 'end') return Promise.reject(new RedisReplayStoreError('the Redis connection is closed'));
    if (status !== 'connecting' && status !== 'connect') {
      return Promise.reject(new RedisReplayStoreError('Redis is not connected'));
    }
    pending ??= new Promise<void>((resolve, reject) => {
      const onReady = (): void => {
        cleanup();
        resolve();
      };
      const onEnd = (): void => {
        cleanup();
        reject(new RedisReplayStoreError('the Redis connection is closed'));
      };
      function cleanup(): void {
        pending = undefined;
        client.off('ready', onReady);
        client.off('end', onEnd);
      }
      client.once('ready', onReady);
      client.once('end', onEnd);
    });
    // a rejection nobody awaits any more (every claim timed out) must not become unhandled
    pending.catch(() => {});
    return pending;
  };
}

/** Rejects when `promise` has not settled by `deadline` (a `deadlineIn` value: the one deadline helper and clock). */
function before<T>(promise: Promise<T>, deadline: number): Promise<T> {
  return beforeDeadline(promise, deadline, () => new RedisReplayStoreError('Redis did not answer in time'));
}

/** The store's options, checked, with defaults; `client` is connected or made from `url`. */
function resolveStore(options: RedisReplayStoreOptions): {
  client: Client;
  owned: boolean;
  prefix: string;
  toleranceMs: string;
  commandTimeoutMs: number;
} {
  if (typeof options !== 'object' || options === null) fail('(options)', 'expected an object');
  refuseUnknownKeys(SCOPE, options, KNOWN_OPTIONS);
  const { url, client: given } = options;
  if (url === undefined && given === undefined) fail('url', 'give exactly one of url and client (neither was given)');
  if (url !== undefined && given !== undefined) fail('client', 'give exactly one of url and client (both were given)');
  const prefix = options.prefix ?? REDIS_STORE_DEFAULTS.prefix;
  if (typeof prefix !== 'string') fail('prefix', 'expected a string');
  const tolerance = options.clockToleranceSec ?? REDIS_STORE_DEFAULTS.clockToleranceSec;
  if (typeof tolerance !== 'number' || !Number.isInteger(tolerance) || tolerance < 0 || tolerance > 300) {
    fail('clockToleranceSec', 'expected an integer number of seconds from 0 to 300');
  }
  const commandTimeoutMs = positiveMs(
    options.commandTimeoutMs,
    'commandTimeoutMs',
    REDIS_STORE_DEFAULTS.commandTimeoutMs,
  );
  const connectTimeoutMs = positiveMs(
    options.connectTimeoutMs,
    'connectTimeoutMs',
    REDIS_STORE_DEFAULTS.connectTimeoutMs,
  );
  const common = { prefix, toleranceMs: String(tolerance * 1000), commandTimeoutMs };
  if (url !== undefined) return { ...common, client: connect(url, commandTimeoutMs, connectTimeoutMs), owned: true };
  const c = given as Partial<Client> | null;
  if (typeof c !== 'object' || c === null || typeof c.eval !== 'function' || typeof c.status !== 'string') {
    fail('client', 'expected an ioredis Redis or Cluster');
  }
  if ((c as { isCluster?: unknown }).isCluster === true && !hasHashTag(prefix)) {
    fail(
      'prefix',
      "a Redis Cluster needs a prefix with a hash tag, e.g. '{agent-pep}:permit:', so that the epoch and every claim live on one node",
    );
  }
  return { ...common, client: c as Client, owned: false };
}

/** A connection of the store's own, made from `url`, that fails fast and reconnects in the background. */
function connect(url: string, commandTimeoutMs: number, connectTimeoutMs: number): Redis {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    fail('url', 'not a valid URL');
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') fail('url', 'expected redis:// or rediss://');
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: commandTimeoutMs,
    connectTimeout: connectTimeoutMs,
    retryStrategy: (times: number) => Math.min(50 * 2 ** Math.min(times, 10), REDIS_STORE_DEFAULTS.maxReconnectDelayMs),
  });
  // without a listener ioredis logs every connection error; claims report them instead
  redis.on('error', () => {});
  return redis;
}

/**
 * Creates a {@link ReplayStore} on Redis, for many replicas of a service sharing one set of used
 * permit ids (docs/permits.md).
 *
 * @param options - exactly one of `url` (`redis://` / `rediss://`) and `client` (a connected ioredis
 *   `Redis` or `Cluster`); `prefix?` (default `'agent-pep:permit:'`; a Cluster needs a hash tag in it);
 *   `clockToleranceSec?` (s, 0 to 300, default 5); `commandTimeoutMs?` (ms, default 500);
 *   `connectTimeoutMs?` (ms, default 1000, `url` only)
 * @returns a store with `claim(key, expiresAtMs, issuedAtMs?)` and `close()`
 * @throws TypeError synchronously, for bad options, with `err.option` naming it (`'url'` when neither
 *   `url` nor `client` is given or the URL is not `redis://`/`rediss://`, `'client'` when both are or it
 *   is not an ioredis client, `'prefix'`, `'commandTimeoutMs'`, `'connectTimeoutMs'`, or an unknown key)
 * @throws RedisReplayStoreError (as a rejection of `claim`) when Redis is not connected, does not
 *   answer within `commandTimeoutMs`, or replies unexpectedly; any ioredis error is passed through.
 *   The verifier turns every rejection into `permit_store_unavailable`.
 * @throws ReplayUnknownError (as a rejection of `claim`) for a permit issued (`issuedAtMs`) before the
 *   epoch less `clockToleranceSec`; the verifier answers `permit_replay_unknown`
 * @remarks
 * - Data loss is a refusal, never a replay: the epoch key `<prefix>epoch` holds Redis's `TIME` (ms, no
 *   expiry); the claim script sets it anew when it is missing (Redis restarted without persistence,
 *   failed over to an empty replica, or was flushed), and refuses a permit issued before it, less the
 *   tolerance, since Redis may have forgotten its claim (docs/permits.md).
 * - One atomic script per claim: the epoch check, then `SET <prefix><key> 1 NX PXAT <expiresAtMs>` (Redis 6.2 or later),
 *   true only when Redis answers `OK`; `nil` (the key exists) is false. Redis removes the key itself
 *   at `expiresAtMs`, so nothing needs sweeping.
 * - Fails closed in bounded time: a connection made from `url` uses `enableOfflineQueue: false`,
 *   `maxRetriesPerRequest: 0`, `commandTimeout` and `connectTimeout`, and keeps reconnecting in the
 *   background; every claim, for either kind of client, rejects once `commandTimeoutMs` has passed,
 *   waiting for the connection included. Between reconnection attempts (Redis known to be down) a
 *   claim rejects at once. A claim never resolves true unless Redis said `OK`.
 *   A claim that timed out may still reach Redis later and use the key up; the permit has been
 *   refused either way.
 * - A claim whose `expiresAtMs` is already past (by this process's clock) resolves false without
 *   asking Redis, as the memory store does: an expired permit never counts as a first use.
 * - Connection errors of a store-owned connection are swallowed (not logged); a claim reports them.
 * @example
 * ```ts
 * import { createPermitVerifier } from 'agent-pep';
 * import { createRedisReplayStore } from 'agent-pep/redis';
 *
 * const replayStore = createRedisReplayStore({ url: process.env.REDIS_URL });
 * const verifier = createPermitVerifier({ keys: jwksUrl, issuer, audience: 'payments', replayStore });
 * // on shutdown
 * await replayStore.close();
 * ```
 */
export function createRedisReplayStore(options: RedisReplayStoreOptions): RedisReplayStore {
  const { client, owned, prefix, toleranceMs, commandTimeoutMs } = resolveStore(options);
  let closed = false;
  const whenReady = readiness(client);

  /**
   * Runs the claim script by its SHA-1 (EVALSHA: Redis neither receives nor hashes the script again),
   * sending it whole (EVAL) only when Redis does not hold it.
   */
  const epochKey = `${prefix}epoch`;
  async function evalClaim(key: string, expiresAt: string, issuedAt: string): Promise<unknown> {
    const args = [2, key, epochKey, expiresAt, issuedAt, toleranceMs] as const;
    if (typeof client.evalsha !== 'function') return client.eval(CLAIM_SCRIPT, ...args);
    try {
      return await client.evalsha(CLAIM_SHA, ...args);
    } catch (err) {
      if (!isNoScript(err)) throw err;
      return client.eval(CLAIM_SCRIPT, ...args);
    }
  }

  async function claim(key: string, expiresAtMs: number, issuedAtMs?: number): Promise<boolean> {
    if (typeof key !== 'string') throw new TypeError('replay key must be a string');
    if (typeof expiresAtMs !== 'number' || !Number.isFinite(expiresAtMs)) {
      throw new TypeError('expiresAtMs must be a finite number');
    }
    if (issuedAtMs !== undefined && (typeof issuedAtMs !== 'number' || !Number.isFinite(issuedAtMs))) {
      throw new TypeError('issuedAtMs must be a finite number');
    }
    if (closed) throw new RedisReplayStoreError('the store is closed');
    if (expiresAtMs <= Date.now()) return false;
    const deadline = deadlineIn(commandTimeoutMs);
    // A connected client is not waited for (no timer); one that is connecting is, until the deadline.
    if (client.status !== 'ready') await before(whenReady(), deadline);
    const issuedAt = issuedAtMs === undefined ? '' : String(Math.floor(issuedAtMs));
    const reply: unknown = await before(evalClaim(prefix + key, String(Math.ceil(expiresAtMs)), issuedAt), deadline);
    if (reply === 'OK') return true;
    if (reply === null || reply === 0) return false;
    if (reply === -1) throw new ReplayUnknownError('the permit was issued before Redis lost its data');
    throw new RedisReplayStoreError('unexpected reply from Redis');
  }

  return {
    claim,
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      if (!owned) return;
      try {
        await before(client.quit(), deadlineIn(commandTimeoutMs));
      } catch {
        // not connected or too slow: drop the connection
      }
      client.disconnect();
    },
  };
}
