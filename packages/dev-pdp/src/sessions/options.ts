/**
 * The `sessionStore` option of `startDevPdp` (docs/dev-pdp.md): `{ redis, prefix? }`, checked
 * strictly (unknown keys are a `TypeError` with `err.option`).
 * @packageDocumentation
 */
import { optionTypeError, refuseUnknownKeys as refuseUnknownKeysOf } from 'agent-pep/internal';

const SCOPE = 'startDevPdp';
const optionError = (option: string, message: string) => optionTypeError(SCOPE, option, message);
const refuseUnknownKeys = (value: object, known: ReadonlySet<string>, path: string) =>
  refuseUnknownKeysOf(SCOPE, value, known, path);

/**
 * The part of an ioredis `Redis` or `Cluster` the session store uses (typed here so that the dev PDP's
 * types do not need ioredis installed).
 */
export interface SessionRedisClient {
  /** `'ready'` when connected (ioredis's connection status). */
  readonly status: string;
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  evalsha?(sha: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  once(event: string, listener: (...args: unknown[]) => void): unknown;
  off(event: string, listener: (...args: unknown[]) => void): unknown;
}

/** Where session state lives when not in this process's memory. */
export interface SessionStoreOption {
  /**
   * A `redis://` or `rediss://` URL (the PDP opens and closes its own connection), or an ioredis
   * `Redis` or `Cluster` the caller owns (and closes), best made with `enableOfflineQueue: false`.
   */
  redis: string | SessionRedisClient;
  /** Prepended to every key. @defaultValue 'agent-pep:session:' */
  prefix?: string;
}

const KNOWN: ReadonlySet<string> = new Set(['redis', 'prefix']);

/** Checks `sessionStore`. @throws TypeError with `option` (`sessionStore`, `sessionStore.redis`, ...) @internal */
export function resolveSessionStoreOption(value: unknown): SessionStoreOption | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw optionError('sessionStore', 'must be an object: { redis: url | client, prefix? }');
  }
  refuseUnknownKeys(value, KNOWN, 'sessionStore');
  const o = value as Partial<SessionStoreOption>;
  const redis: unknown = o.redis;
  if (typeof redis === 'string') {
    let url: URL;
    try {
      url = new URL(redis);
    } catch {
      throw optionError('sessionStore.redis', 'not a valid URL');
    }
    if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
      throw optionError('sessionStore.redis', 'expected a redis:// or rediss:// URL');
    }
  } else {
    const c = redis as { eval?: unknown; status?: unknown } | null | undefined;
    if (typeof c !== 'object' || c === null || typeof c.eval !== 'function' || typeof c.status !== 'string') {
      throw optionError('sessionStore.redis', 'expected a redis:// URL or an ioredis Redis or Cluster');
    }
  }
  if (o.prefix !== undefined && typeof o.prefix !== 'string')
    throw optionError('sessionStore.prefix', 'must be a string');
  const store: SessionStoreOption = { redis: o.redis as SessionStoreOption['redis'] };
  if (o.prefix !== undefined) store.prefix = o.prefix;
  return store;
}
