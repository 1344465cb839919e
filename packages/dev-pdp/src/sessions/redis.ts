/**
 * The Redis session store (docs/dev-pdp.md): session state shared by PDP replicas. Its own connection
 * comes from ../redis-connection.ts, which loads ioredis only for a PDP started with `sessionStore: { redis }`.
 *
 * How replicas stay in order (one decision at a time per session, each reading every earlier step),
 * with one round trip a decision in the common case (issue 41):
 * - a replica keeps the state it last committed for a session (a bounded cache) and decides on it
 *   without asking Redis; a session it holds no state for is read first (`READ`, one script);
 * - one script (`COMMIT`) checks that the session is as the decision read it (the state key begins
 *   with the same step count and epoch, the epoch key is unchanged, no other replica holds the
 *   session), then adds the labels (`SADD`), appends the step (`RPUSH`, `LTRIM` to `maxHistory`),
 *   restarts the idle expiry (`PEXPIRE`) and writes the state, atomically; when another replica
 *   committed first it writes nothing and answers the state as it is now, and the decision is made
 *   again on it;
 * - a decision about to do what it cannot take back (take an approval, open an escalation) first
 *   holds the session, `SET <lock> <token> NX PX <lease>`, checking in the same script that its state
 *   is the latest (`HOLD`); while another holder has it, it tries again every few milliseconds until
 *   its deadline (`sessionStoreTimeoutMs`), and no other replica commits to the session until the
 *   holder's commit deletes the lock;
 * - the lease is the timeout: a replica that stops while holding the lock holds up the session for at
 *   most that long, and a decision whose lease ran out cannot commit (its token is gone), so it is
 *   answered 503 and nothing it decided is lost or written over.
 * @packageDocumentation
 */
import { createHash, randomBytes } from 'node:crypto';
import { deadlineIn, now, race, STAGES, VERDICTS } from 'agent-pep/internal';
import { LRUCache } from 'lru-cache';
import { openRedis } from '../redis-connection.js';
import type { SessionRedisClient, SessionStoreOption } from './options.js';
import { EMPTY_FACTS, type HistoryStep, type SessionFacts, type SessionUpdate, type SessionView } from './state.js';
import { type SessionLease, type SessionLimits, type SessionStore, StaleView } from './store.js';

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

/** KEYS: labels, history, state, epoch. Returns {labels, history, state, epoch}. */
const READ = `${epochOf('KEYS[4]')}
return {redis.call('SMEMBERS', KEYS[1]), redis.call('LRANGE', KEYS[2], 0, -1), redis.call('GET', KEYS[3]) or '', epoch}`;

/**
 * Whether the session is as a decision read it. KEYS: lock, labels, history, state, epoch; ARGV[1]: the
 * decision's token ('' when it holds no lock), ARGV[2]: how its state key began (`{"steps":n,"epoch":e,`;
 * '' for a session that had none), ARGV[3]: the epoch it was read in. Sets `same`, `lock` and `fresh()`.
 */
const SAME = `${epochOf('KEYS[5]')}
local function fresh()
  return {redis.call('SMEMBERS', KEYS[2]), redis.call('LRANGE', KEYS[3], 0, -1), redis.call('GET', KEYS[4]) or '', epoch}
end
local lock = redis.call('GET', KEYS[1])
local state = redis.call('GET', KEYS[4])
local same
if ARGV[2] == '' then
  same = (not state) and redis.call('EXISTS', KEYS[2], KEYS[3]) == 0
else
  same = state and string.sub(state, 1, #ARGV[2]) == ARGV[2]
end
same = same and epoch == ARGV[3]`;

/**
 * Holds the session for a decision. ARGV (after SAME's): lease ms. Returns {1} (held, the state is as
 * read), {0, labels, history, state, epoch} (held, the state is newer), or {2} (another holder has it).
 */
const HOLD = `${SAME}
if lock and lock ~= ARGV[1] then return {2} end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[4])
if same then return {1} end
local out = fresh()
return {0, out[1], out[2], out[3], out[4]}`;

/**
 * Commits a step. ARGV (after SAME's): ttl ms, maxHistory, step JSON, state JSON, labels...
 * Returns {1} (committed), {0, labels, history, state, epoch} (another replica committed first: nothing
 * written, this decision's lock, if any, deleted), {2} (another holder has the session) or {3} (this
 * decision's lock is gone). Labels are never
 * trimmed: only the history is bounded.
 */
const COMMIT = `${SAME}
if ARGV[1] ~= '' then
  if lock ~= ARGV[1] then return {3} end
elseif lock then
  return {2}
end
if not same then
  if lock then redis.call('DEL', KEYS[1]) end
  local out = fresh()
  return {0, out[1], out[2], out[3], out[4]}
end
for i = 8, #ARGV do redis.call('SADD', KEYS[2], ARGV[i]) end
redis.call('RPUSH', KEYS[3], ARGV[6])
redis.call('LTRIM', KEYS[3], -tonumber(ARGV[5]), -1)
redis.call('PEXPIRE', KEYS[3], ARGV[4])
redis.call('SET', KEYS[4], ARGV[7], 'PX', ARGV[4])
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[4]) end
if lock then redis.call('DEL', KEYS[1]) end
return {1}`;

/** KEYS: lock. ARGV: token. */
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

const sha1 = (script: string): string => createHash('sha1').update(script).digest('hex');
const SHAS = new Map([READ, HOLD, COMMIT, RELEASE].map((script) => [script, sha1(script)]));

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
function viewOf(reply: readonly unknown[]): Known {
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

/** Sessions whose committed state a replica keeps, the least recently used dropped (read again when needed). */
const CACHED_SESSIONS = 1024;

/** A session's state as read or committed, with the epoch it began in. */
interface Known {
  view: SessionView;
  epoch: string;
}

/** What every lease of one store shares. */
interface LeaseContext {
  client: SessionRedisClient;
  /** Per session key: the state this replica last committed. */
  cache: LRUCache<string, Known>;
  ttlMs: string;
  leaseMs: string;
  timeoutMs: number;
  maxHistory: number;
}

type Keys = ReturnType<typeof keysOf>;

/** How the state key of `known` begins (`''`: a session with no state key); the commit compares it. */
function versionOf(known: Known): string {
  return known.view.steps === 0 ? '' : `{"steps":${known.view.steps},"epoch":${JSON.stringify(known.epoch)},`;
}

/** The state after a commit, as Redis now holds it. */
function committed(known: Known, update: SessionUpdate, state: StoredState, maxHistory: number): Known {
  const labels = new Set(known.view.labels);
  for (const label of update.labels) labels.add(label);
  const history = [...known.view.history, update.step];
  if (history.length > maxHistory) history.splice(0, history.length - maxHistory);
  return { view: { labels, history, steps: state.steps, facts: state.facts }, epoch: known.epoch };
}

/** Runs HOLD or COMMIT until it answers something but "another holder has it" (code 2), or the deadline. */
async function untilFree(ctx: LeaseContext, script: string, keys: string[], args: string[]): Promise<unknown[]> {
  const until = deadlineIn(ctx.timeoutMs);
  for (let attempt = 0; ; attempt++) {
    const reply = (await runScript(ctx.client, script, keys, args)) as unknown[];
    if (!Array.isArray(reply)) throw new SessionStoreError('unexpected reply from Redis');
    if (reply[0] !== 2) return reply;
    // another replica holds the session (for a few milliseconds, one decision): try again soon
    if (now() >= until) throw new SessionStoreError('the session stayed locked');
    await sleep(1 + Math.random() * Math.min(2 + attempt, 8));
  }
}

/** A lease on `known`: held (a lock with `token`) when `token` is not empty. */
function leaseOf(ctx: LeaseContext, key: string, k: Keys, known: Known, token: string): SessionLease {
  const keys = [k.lock, k.labels, k.history, k.state, k.epoch];
  let held = token;
  return {
    view: known.view,
    async confirm() {
      if (held !== '') return;
      const mine = randomBytes(16).toString('base64url');
      const reply = await untilFree(ctx, HOLD, keys, [mine, versionOf(known), known.epoch, ctx.leaseMs]);
      if (reply[0] === 1) {
        held = mine;
        return;
      }
      ctx.cache.delete(key);
      throw new StaleView(leaseOf(ctx, key, k, viewOf(reply.slice(1)), mine));
    },
    async commit(update: SessionUpdate) {
      const state: StoredState = {
        steps: known.view.steps + 1,
        epoch: known.epoch,
        facts: update.facts ?? known.view.facts,
      };
      const args = [held, versionOf(known), known.epoch, ctx.ttlMs, String(ctx.maxHistory)];
      args.push(JSON.stringify(update.step), JSON.stringify(state), ...update.labels);
      const reply = await untilFree(ctx, COMMIT, keys, args);
      if (reply[0] === 1) {
        ctx.cache.set(key, committed(known, update, state, ctx.maxHistory));
        return undefined;
      }
      ctx.cache.delete(key);
      // a held session cannot change under its holder; if it did, what the decision took is given back (503)
      if (reply[0] === 0 && held === '') return leaseOf(ctx, key, k, viewOf(reply.slice(1)), '');
      throw new SessionStoreError('the session lock was lost before the commit');
    },
    release() {
      if (held !== '') runScript(ctx.client, RELEASE, [k.lock], [held]).catch(() => {});
    },
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
  const ctx: LeaseContext = {
    client,
    cache: new LRUCache<string, Known>({ max: CACHED_SESSIONS }),
    ttlMs: String(limits.sessionTtlSec * 1000),
    leaseMs: String(timeoutMs),
    timeoutMs,
    maxHistory: limits.maxHistory,
  };

  async function acquire(key: string): Promise<SessionLease> {
    await ready(client);
    const k = keysOf(prefix, key);
    // the state this replica last committed: decided on at once, checked by the commit
    const known = ctx.cache.get(key);
    if (known !== undefined) return leaseOf(ctx, key, k, known, '');
    const reply = (await runScript(client, READ, [k.labels, k.history, k.state, k.epoch], [])) as unknown[];
    if (!Array.isArray(reply)) throw new SessionStoreError('unexpected reply from Redis');
    return leaseOf(ctx, key, k, viewOf(reply), '');
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
