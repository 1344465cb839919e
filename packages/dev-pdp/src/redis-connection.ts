/**
 * The dev PDP's own Redis connections (a `sessionStore.redis` URL; docs/dev-pdp.md, Sessions): one way to
 * open them for the session store and the escalation store, so both fail fast and alike.
 * @internal
 */
import type { Redis } from 'ioredis';

/**
 * Opens an ioredis connection to `url` that fails a command at once while disconnected (no offline queue,
 * no retries of a command), times commands and the connect out after `timeoutMs` milliseconds, and
 * reconnects with a capped backoff (at most 2 s). Connection errors are not logged: decisions report them
 * as 503 `session_store_unavailable`.
 * @throws Error naming the `ioredis` package when it is not installed
 */
export async function openRedis(url: string, timeoutMs: number): Promise<Redis> {
  let RedisClass: typeof import('ioredis').Redis;
  try {
    ({ Redis: RedisClass } = await import('ioredis'));
  } catch (cause) {
    throw new Error('sessionStore.redis needs the ioredis package: npm install ioredis', { cause });
  }
  const redis = new RedisClass(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: timeoutMs,
    connectTimeout: timeoutMs,
    retryStrategy: (times: number) => Math.min(50 * 2 ** Math.min(times, 10), 2000),
  });
  // without a listener ioredis logs every connection error; decisions report them as 503s instead
  redis.on('error', () => {});
  return redis;
}
