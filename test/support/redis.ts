/**
 * Redis for the tests.
 *
 * - `REDIS_URL` set (CI's `.ci/run` starts redis-server and exports it): shared tests use it.
 * - else, a `redis-server` binary on PATH (or `REDIS_SERVER_BIN`): a private server is spawned on
 *   127.0.0.1, a free port, without persistence.
 * - else: with `CI` set the tests FAIL (Redis tests are never skipped in CI); locally they skip,
 *   saying why.
 *
 * Tests that stop Redis always spawn a private server, never touch `REDIS_URL`.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createConnection, createServer } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';

const BIN = process.env.REDIS_SERVER_BIN ?? 'redis-server';

/** A Redis the tests can use. */
export interface RedisHandle {
  /** `redis://127.0.0.1:<port>` (or `REDIS_URL`). */
  url: string;
  /** The port, for restarting a private server on the same one. */
  port: number;
  /** The spawned process, when this handle owns one. */
  process: ChildProcess | undefined;
  /** Stops a spawned server (SIGTERM, then SIGKILL); does nothing to `REDIS_URL`. */
  stop(): Promise<void>;
}

/** Whether a `redis-server` binary can run here. */
export function hasRedisServer(): boolean {
  const r = spawnSync(BIN, ['--version'], { stdio: 'ignore' });
  return r.status === 0;
}

/** Why Redis tests cannot run, or undefined when they can; throws in CI instead of skipping. */
export function redisUnavailableReason(needsBinary: boolean): string | undefined {
  if (!needsBinary && process.env.REDIS_URL) return undefined;
  if (hasRedisServer()) return undefined;
  const why = needsBinary
    ? `no '${BIN}' binary on PATH (these tests stop Redis, so they need a private server)`
    : `REDIS_URL is not set and there is no '${BIN}' binary on PATH`;
  if (process.env.CI) {
    throw new Error(`Redis tests must run in CI, but ${why}. Install redis-server (apt-get install -y redis-server).`);
  }
  console.warn(`[agent-pep tests] skipping Redis tests: ${why}. Install redis-server or set REDIS_URL.`);
  return why;
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** Resolves true when something at 127.0.0.1:port answers PING with PONG. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let data = '';
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      data += chunk.toString();
      if (data.includes('\r\n')) done(data.startsWith('+PONG'));
    });
  });
}

/** Spawns a private redis-server on `port` (a free one by default) and waits until it answers. */
export async function spawnRedis(port?: number): Promise<RedisHandle> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const p = port ?? (await freePort());
    const child = spawn(
      BIN,
      [
        '--port',
        String(p),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--daemonize',
        'no',
        '--loglevel',
        'warning',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let exited = false;
    child.once('exit', () => {
      exited = true;
    });
    child.stderr?.resume();
    const killOnExit = (): void => {
      child.kill('SIGKILL');
    };
    process.once('exit', killOnExit);
    const deadline = Date.now() + 10_000;
    while (!exited && Date.now() < deadline) {
      if (await ping(p)) {
        return {
          url: `redis://127.0.0.1:${p}`,
          port: p,
          process: child,
          stop: () => stopChild(child, killOnExit),
        };
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    await stopChild(child, killOnExit);
    if (port !== undefined) break; // a fixed port that did not work will not work on retry
  }
  throw new Error(`could not start ${BIN}`);
}

async function stopChild(child: ChildProcess, killOnExit: () => void): Promise<void> {
  process.off('exit', killOnExit);
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGCONT'); // in case a test paused it
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
  await exited;
  clearTimeout(timer);
}

/** `REDIS_URL` when set, else a spawned private server. Call only when `redisUnavailableReason(false)` is undefined. */
export async function sharedRedis(): Promise<RedisHandle> {
  const url = process.env.REDIS_URL;
  if (url) {
    return { url, port: Number(new URL(url).port || 6379), process: undefined, stop: async () => {} };
  }
  return spawnRedis();
}

/**
 * Registers `beforeAll`/`afterAll` for a describe block on the shared Redis: the handle and a
 * connected admin client, and on teardown every key under `prefix` deleted and both closed.
 */
export function useSharedRedis(prefix: string): { readonly redis: RedisHandle; readonly admin: Redis } {
  let redis: RedisHandle | undefined;
  let admin: Redis | undefined;
  beforeAll(async () => {
    redis = await sharedRedis();
    admin = new Redis(redis.url, { lazyConnect: true });
    await admin.connect();
  });
  afterAll(async () => {
    if (admin !== undefined) {
      const keys = await admin.keys(`${prefix}*`);
      if (keys.length > 0) await admin.del(...keys);
      admin.disconnect();
    }
    await redis?.stop();
  });
  return {
    get redis() {
      return redis as RedisHandle;
    },
    get admin() {
      return admin as Redis;
    },
  };
}
