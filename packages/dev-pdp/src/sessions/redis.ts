/**
 * The Redis session store (docs/dev-pdp.md): session state shared by PDP replicas. Its own connection
 * comes from ../redis-connection.ts, which loads ioredis only for a PDP started with `sessionStore: { redis }`.
 *
 * How two replicas stay in order (one decision at a time per session, each reading every earlier step):
 * - a decision takes the session's lock, `SET <lock> <token> NX PX <lease>`, and reads the labels and
 *   history in the same script (one round trip); while another holder has it, it tries again every few
 *   milliseconds until its deadline (`sessionStoreTimeoutMs`);
 * - it decides against what it read, then one script checks that the lock still holds its token, adds
 *   the labels (`SADD`), appends the step (`RPUSH`, `LTRIM` to `maxHistory`), restarts the idle expiry
 *   (`PEXPIRE`) and deletes the lock, atomically;
 * - the lease is the timeout: a replica that stops while holding the lock holds up the session for at
 *   most that long, and a decision whose lease ran out cannot commit (its token is gone), so it is
 *   answered 503 and nothing it decided is lost or written over.
 * @packageDocumentation
 */
import { createHash, randomBytes } from 'node:crypto';
import { deadlineIn, now, race, STAGES, VERDICTS } from 'agent-pep/internal';
import { openRedis } from '../redis-connection.js';
import type { SessionRedisClient, SessionStoreOption } from './options.js';
import { EMPTY_FACTS, type HistoryStep, type SessionFacts, type SessionUpdate, type SessionView } from './state.js';
import type { SessionLease, SessionLimits, SessionStore } from './store.js';

/**
 * The epoch (as in the replay store, src/replay/redis.ts): a missing epoch key means Redis lost its data
 * (a restart without persistence, a flush); the epoch becomes Redis's TIME now, with no expiry. A
 * session's state records the epoch it began in: one from another epoch outlived a loss in part.
 */
const epochOf = (key: string) => `local epoch = redis.call('GET', ${key})
if not epoch then
  local t = redis.call('TIME')
  epoch = tostring(t[1] * 1000 + math.floor(t[2] / 1000))
  redis.call('SET', ${key}, epoch)
end`;

/** KEYS: lock, labels, history, state, epoch. ARGV: token, lease ms. Returns {1, labels, history, state, epoch} or {0}. */
const ACQUIRE = `${epochOf('KEYS[5]')}
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {1, redis.call('SMEMBERS', KEYS[2]), redis.call('LRANGE', KEYS[3], 0, -1), redis.call('GET', KEYS[4]) or '', epoch}
end
return {0}`;

/** KEYS: labels, history, state, epoch. Returns {labels, history, state, epoch}. */
const READ = `${epochOf('KEYS[4]')}
return {redis.call('SMEMBERS', KEYS[1]), redis.call('LRANGE', KEYS[2], 0, -1), redis.call('GET', KEYS[3]) or '', epoch}`;

/**
 * KEYS: lock, labels, history, state. ARGV: token, ttl ms, maxHistory, step JSON, state JSON, labels...
 * Returns 1, or 0 when the lock is not ours. Labels are never trimmed: only the history is bounded.
 */
const COMMIT = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
for i = 6, #ARGV do redis.call('SADD', KEYS[2], ARGV[i]) end
redis.call('RPUSH', KEYS[3], ARGV[4])
redis.call('LTRIM', KEYS[3], -tonumber(ARGV[3]), -1)
redis.call('PEXPIRE', KEYS[3], ARGV[2])
redis.call('SET', KEYS[4], ARGV[5], 'PX', ARGV[2])
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[2]) end
redis.call('DEL', KEYS[1])
return 1`;

/** KEYS: lock. ARGV: token. */
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

const sha1 = (script: string): string => createHash('sha1').update(script).digest('hex');
const SHAS = new Map([ACQUIRE, READ, COMMIT, RELEASE].map((script) => [script, sha1(script)]));

/** Why the Redis store could not answer. @internal */
export class SessionStoreError extends Error {
  override readonly name = 'SessionStoreError';
}

/** Runs a script by its SHA-1, sending it whole only when Redis does not hold it. */
async function runScript(client: SessionRedisClient, script: string, keys: string[], args: (string | number)[]) {
  if (typeof client.evalsha === 'function') {
    try {
      return await client.evalsha(SHAS.get(script) as string, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error && error.message.startsWith('NOSCRIPT'))) throw error;
    }
  }
  return client.eval(script, keys.length, ...keys, ...args);
}

const STAGE_SET: ReadonlySet<string> = new Set(STAGES);
const VERDICT_SET: ReadonlySet<string> = new Set(VERDICTS);

/** Reads one stored step; anything else means the state cannot be trusted. */
function parseStep(text: unknown): HistoryStep {
  const bad = () => new SessionStoreError('a stored session step is malformed');
  if (typeof text !== 'string') throw bad();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw bad();
  }
  const v = value as Record<string, unknown> | null;
  if (typeof v !== 'object' || v === null) throw bad();
  const { stage, verdict, tool, latches } = v;
  if (typeof stage !== 'string' || !STAGE_SET.has(stage) || typeof verdict !== 'string' || !VERDICT_SET.has(verdict))
    throw bad();
  if (tool !== undefined && typeof tool !== 'string') throw bad();
  if (!Array.isArray(latches) || !latches.every((l) => typeof l === 'string')) throw bad();
  return { stage, verdict, latches, ...(tool !== undefined ? { tool } : {}) } as HistoryStep;
}

/** What the state key holds: the count of committed steps, the epoch the session began in, its facts. */
interface StoredState {
  steps: number;
  epoch: string;
  facts: SessionFacts;
}

function parseState(text: unknown): StoredState | undefined {
  if (text === '' || text === undefined || text === null) return undefined;
  if (typeof text !== 'string') throw new SessionStoreError('unexpected reply from Redis');
  try {
    const v = JSON.parse(text) as StoredState;
    if (!Number.isSafeInteger(v.steps) || typeof v.epoch !== 'string' || typeof v.facts !== 'object') throw 0;
    if (!Array.isArray(v.facts.grants) || !Array.isArray(v.facts.words) || !Array.isArray(v.facts.values)) throw 0;
    return v;
  } catch {
    throw new SessionStoreError('a stored session state is malformed');
  }
}

/** The view, and the state record to write back: steps one more, the epoch the session began in. */
function viewOf(reply: readonly unknown[]): { view: SessionView; epoch: string } {
  const [labels, history, stateText, epoch] = reply;
  if (
    !Array.isArray(labels) ||
    !labels.every((l) => typeof l === 'string') ||
    !Array.isArray(history) ||
    typeof epoch !== 'string'
  ) {
    throw new SessionStoreError('unexpected reply from Redis');
  }
  const state = parseState(stateText);
  // a session whose state is gone while its labels or history remain, or that began in another epoch,
  // outlived a data loss in part: it is lost, never read as if it were whole
  const partial = state === undefined && (labels.length > 0 || history.length > 0);
  const stale = state !== undefined && state.epoch !== epoch;
  const view: SessionView = {
    labels: new Set(labels as string[]),
    history: history.map(parseStep),
    steps: state?.steps ?? 0,
    facts: state?.facts ?? EMPTY_FACTS,
    ...(partial || stale ? { lost: true } : {}),
  };
  return { view, epoch: state?.epoch ?? epoch };
}

/** Resolves once the client is connected; rejects at once when it is known to be down. */
function ready(client: SessionRedisClient): Promise<void> {
  const status = client.status;
  if (status === 'ready') return Promise.resolve();
  if (status !== 'connecting' && status !== 'connect') {
    return Promise.reject(new SessionStoreError('Redis is not connected'));
  }
  return new Promise<void>((resolve, reject) => {
    const onReady = () => {
      client.off('end', onEnd);
      resolve();
    };
    const onEnd = () => {
      client.off('ready', onReady);
      reject(new SessionStoreError('the Redis connection is closed'));
    };
    client.once('ready', onReady);
    client.once('end', onEnd);
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Redis keys of one session; the hash tag keeps them in one slot of a cluster. */
function keysOf(prefix: string, key: string) {
  const tag = createHash('sha256').update(key).digest('base64url');
  return {
    lock: `${prefix}{${tag}}:lock`,
    labels: `${prefix}{${tag}}:labels`,
    history: `${prefix}{${tag}}:history`,
    state: `${prefix}{${tag}}:state`,
    // one epoch per prefix (on a cluster, give the prefix a hash tag as the replay store asks)
    epoch: `${prefix}epoch`,
  };
}

/**
 * Creates the Redis store.
 * @param option - `{ redis: url | client, prefix? }`, already checked
 * @param timeoutMs - `sessionStoreTimeoutMs`: the lease of a lock, the command timeout of an own connection
 * @throws Error naming the `ioredis` package when it is not installed (a URL only)
 * @internal
 */
export async function createRedisSessionStore(
  option: SessionStoreOption,
  limits: SessionLimits,
  timeoutMs: number,
  prefix: string,
): Promise<SessionStore> {
  let client: SessionRedisClient;
  let owned: { quit(): Promise<unknown>; disconnect(): void } | undefined;
  if (typeof option.redis === 'string') {
    const redis = await openRedis(option.redis, timeoutMs);
    client = redis as unknown as SessionRedisClient;
    owned = redis;
  } else {
    client = option.redis;
  }
  const ttlMs = String(limits.sessionTtlSec * 1000);
  const lease = String(timeoutMs);

  async function acquire(key: string): Promise<SessionLease> {
    const k = keysOf(prefix, key);
    const token = randomBytes(16).toString('base64url');
    const until = deadlineIn(timeoutMs);
    await ready(client);
    for (let attempt = 0; ; attempt++) {
      const reply = (await runScript(
        client,
        ACQUIRE,
        [k.lock, k.labels, k.history, k.state, k.epoch],
        [token, lease],
      )) as unknown[];
      if (!Array.isArray(reply)) throw new SessionStoreError('unexpected reply from Redis');
      if (reply[0] === 1) {
        const { view, epoch } = viewOf(reply.slice(1));
        return {
          view,
          async commit(update: SessionUpdate) {
            const state: StoredState = { steps: view.steps + 1, epoch, facts: update.facts ?? view.facts };
            const args = [
              token,
              ttlMs,
              String(limits.maxHistory),
              JSON.stringify(update.step),
              JSON.stringify(state),
              ...update.labels,
            ];
            const done = await runScript(client, COMMIT, [k.lock, k.labels, k.history, k.state], args);
            if (done !== 1) throw new SessionStoreError('the session lock was lost before the commit');
          },
          release() {
            runScript(client, RELEASE, [k.lock], [token]).catch(() => {});
          },
        };
      }
      // another replica holds the session (for a few milliseconds, one decision): try again soon
      if (now() >= until) throw new SessionStoreError('the session stayed locked');
      await sleep(1 + Math.random() * Math.min(2 + attempt, 8));
    }
  }

  return {
    acquire,
    async read(key: string): Promise<SessionView> {
      const k = keysOf(prefix, key);
      await ready(client);
      const reply = (await runScript(client, READ, [k.labels, k.history, k.state, k.epoch], [])) as unknown[];
      if (!Array.isArray(reply)) throw new SessionStoreError('unexpected reply from Redis');
      return viewOf(reply).view;
    },
    async close() {
      if (owned === undefined) return;
      // a QUIT that gets no answer in time is cut short by the disconnect
      await race(
        owned.quit().catch(() => {}),
        deadlineIn(timeoutMs),
      );
      owned.disconnect();
    },
  };
}
