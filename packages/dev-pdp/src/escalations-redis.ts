/**
 * The Redis escalation store (docs/dev-pdp.md, "Replicas"): escalations and approvals shared by PDP
 * replicas behind one Redis, so an escalation opened on one replica can be approved on another and the
 * approved call decided on a third, once. Every change is one Lua script (atomic); every command is
 * bounded by `sessionStoreTimeoutMs` and a store that cannot answer makes the caller answer 503.
 *
 * Keys (one hash tag, one cluster slot): `e:<id>` the escalation (JSON), `st:<id>` its status,
 * `o:<subject>` the id open for an identical request, `s:<session>` the open ids of a session (a sorted
 * set by opening time), `p` every open id, `w:<subject>` the resolutions waiting for their request
 * (`<expiresAt>|<resolution>|<latch,latch>`, oldest first).
 * @packageDocumentation
 */
import { createHash } from 'node:crypto';
import { beforeDeadline, deadlineIn } from 'agent-pep/internal';
import {
  EscalationError,
  type EscalationLimits,
  type EscalationStatus,
  type EscalationStore,
  type PendingEscalation,
  statusOf,
  subjectKey,
  subjectSessionKey,
  type WaitingResolution,
} from './escalations.js';
import type { SessionRedisClient } from './sessions/options.js';

/** The commands the escalation store uses, beyond those of the session store's client. @internal */
export interface EscalationRedisClient extends SessionRedisClient {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ...args: (string | number)[]): Promise<unknown>;
  mget(...keys: string[]): Promise<(string | null)[]>;
  zrevrange(key: string, start: number, stop: number): Promise<string[]>;
  zrangebyscore(
    key: string,
    min: string | number,
    max: string | number,
    ...args: (string | number)[]
  ): Promise<string[]>;
  lrange(key: string, start: number, stop: number): Promise<string[]>;
  ping(): Promise<string>;
}

/** KEYS: o, s, p, e, st. ARGV: id, json, now, escalationTtlMs, maxPerSession, keepMs. {1,id} reused, {0,id} opened, {2} too many. */
const OPEN = `local existing = redis.call('GET', KEYS[1])
if existing and redis.call('ZSCORE', KEYS[3], existing) then return {1, existing} end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', tonumber(ARGV[3]) - tonumber(ARGV[4]))
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then return {2} end
redis.call('SET', KEYS[4], ARGV[2], 'PX', ARGV[6])
redis.call('SET', KEYS[5], 'pending', 'PX', ARGV[6])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
return {0, ARGV[1]}`;

/** KEYS: st, o, s, p, w. ARGV: id, status, waiting entry, approvalTtlMs, keepMs. 1 done, 2 already resolved, 0 unknown. */
const RESOLVE = `local st = redis.call('GET', KEYS[1])
if not st then return 0 end
if st ~= 'pending' then return 2 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[5])
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('RPUSH', KEYS[5], ARGV[3])
redis.call('PEXPIRE', KEYS[5], ARGV[4])
return 1`;

/** KEYS: w. ARGV: now. The first live entry, popped (expired ones before it dropped), or false. */
const CLAIM = `while true do
  local v = redis.call('LPOP', KEYS[1])
  if not v then return false end
  local at = tonumber(string.match(v, '^(%d+)|'))
  if at and at > tonumber(ARGV[1]) then return v end
end`;

/** KEYS: w. ARGV: entry, approvalTtlMs. */
const GIVE_BACK = `redis.call('LPUSH', KEYS[1], ARGV[1])
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1`;

const sha1 = (script: string): string => createHash('sha1').update(script).digest('hex');
const SHAS = new Map([OPEN, RESOLVE, CLAIM, GIVE_BACK].map((script) => [script, sha1(script)]));
const hashOf = (text: string): string => createHash('sha256').update(text).digest('base64url');
const STATUSES: ReadonlySet<string> = new Set(['pending', 'approved', 'denied', 'expired']);

/** Why the Redis escalation store could not answer. @internal */
export class EscalationStoreError extends Error {
  override readonly name = 'EscalationStoreError';
}

function entryOf(w: WaitingResolution): string {
  return `${w.expiresAt}|${w.resolution}|${w.latches.join(',')}`;
}

function parseEntry(text: unknown): WaitingResolution | undefined {
  if (typeof text !== 'string') return undefined;
  const m = /^(\d+)\|(approve|deny)\|(.*)$/s.exec(text);
  if (m === null) throw new EscalationStoreError('a stored resolution is malformed');
  return {
    expiresAt: Number(m[1]),
    resolution: m[2] as WaitingResolution['resolution'],
    latches: m[3] === '' ? [] : (m[3] as string).split(','),
  };
}

function parseEscalation(text: string | null): PendingEscalation | undefined {
  if (text === null) return undefined;
  try {
    const e = JSON.parse(text) as PendingEscalation;
    if (typeof e?.id === 'string' && typeof e.subject === 'object' && Array.isArray(e.latches)) return e;
  } catch {
    // below
  }
  throw new EscalationStoreError('a stored escalation is malformed');
}

/**
 * The Redis escalation store over `client` (the caller connects and closes it).
 * @param prefix - prepended to every key
 * @param timeoutMs - every call settles within it, else rejects (`sessionStoreTimeoutMs`)
 * @internal
 */
export function createRedisEscalationStore(
  client: EscalationRedisClient,
  limits: EscalationLimits,
  prefix: string,
  timeoutMs: number,
): EscalationStore {
  const k = (name: string) => `${prefix}{esc}:${name}`;
  const subjectHash = (s: PendingEscalation['subject']) => hashOf(subjectKey(s));
  // an escalation and its status outlive it by the approval TTL: `status` and `already resolved` answer
  const keepMs = String(limits.escalationTtlMs + limits.approvalTtlMs);
  const bounded = <T>(work: () => Promise<T>): Promise<T> =>
    beforeDeadline(
      work(),
      deadlineIn(timeoutMs),
      () => new EscalationStoreError('the escalation store did not answer in time'),
    );
  const run = async (script: string, keys: string[], args: (string | number)[]): Promise<unknown> => {
    if (client.status !== 'ready') throw new EscalationStoreError('Redis is not connected');
    if (typeof client.evalsha === 'function') {
      try {
        return await client.evalsha(SHAS.get(script) as string, keys.length, ...keys, ...args);
      } catch (error) {
        if (!(error instanceof Error && error.message.startsWith('NOSCRIPT'))) throw error;
      }
    }
    return client.eval(script, keys.length, ...keys, ...args);
  };
  return {
    open: (e) =>
      bounded(async () => {
        const keys = [
          k(`o:${subjectHash(e.subject)}`),
          k(`s:${hashOf(subjectSessionKey(e.subject))}`),
          k('p'),
          k(`e:${e.id}`),
          k(`st:${e.id}`),
        ];
        const args = [e.id, JSON.stringify(e), e.openedAt, limits.escalationTtlMs, limits.maxPerSession, keepMs];
        const reply = (await run(OPEN, keys, args)) as unknown[];
        if (!Array.isArray(reply)) throw new EscalationStoreError('unexpected reply from Redis');
        if (reply[0] === 2)
          throw new EscalationError('too_many_escalations', 'too many open escalations in this session');
        return { id: String(reply[1]), reused: reply[0] === 1 };
      }),
    resolve: (id, outcome, resolution, expiresAt) =>
      bounded(async () => {
        const e = parseEscalation(await client.get(k(`e:${id}`)));
        if (e === undefined) throw new EscalationError('escalation_not_found', 'unknown escalation id');
        const keys = [
          k(`st:${id}`),
          k(`o:${subjectHash(e.subject)}`),
          k(`s:${hashOf(subjectSessionKey(e.subject))}`),
          k('p'),
          k(`w:${subjectHash(e.subject)}`),
        ];
        const entry = entryOf({ resolution, latches: e.latches, expiresAt });
        const done = await run(RESOLVE, keys, [id, statusOf(outcome), entry, limits.approvalTtlMs, keepMs]);
        if (done === 2) throw new EscalationError('escalation_already_resolved', 'escalation already resolved');
        if (done !== 1) throw new EscalationError('escalation_not_found', 'unknown escalation id');
        return e;
      }),
    peek: (subject, now) =>
      bounded(async () => {
        const entries = await client.lrange(k(`w:${hashOf(subjectKey(subject))}`), 0, 63);
        for (const text of entries) {
          const w = parseEntry(text);
          if (w !== undefined && w.expiresAt > now) return w;
        }
        return undefined;
      }),
    claim: (subject, now) =>
      bounded(async () => parseEntry(await run(CLAIM, [k(`w:${hashOf(subjectKey(subject))}`)], [now]))),
    giveBack: (subject, w) =>
      bounded(async () => {
        await run(GIVE_BACK, [k(`w:${hashOf(subjectKey(subject))}`)], [entryOf(w), limits.approvalTtlMs]);
      }),
    pending: (limit) =>
      bounded(async () => {
        const ids = await client.zrevrange(k('p'), 0, limit - 1);
        if (ids.length === 0) return [];
        const texts = await client.mget(...ids.map((id) => k(`e:${id}`)));
        return texts.map(parseEscalation).filter((e): e is PendingEscalation => e !== undefined);
      }),
    overdue: (openedBy, limit) => bounded(() => client.zrangebyscore(k('p'), '-inf', openedBy, 'LIMIT', 0, limit)),
    status: (id) =>
      bounded(async () => {
        const st = await client.get(k(`st:${id}`));
        return st !== null && STATUSES.has(st) ? (st as EscalationStatus) : undefined;
      }),
    ping: () =>
      bounded(async () => {
        if ((await client.ping()) !== 'PONG') throw new EscalationStoreError('unexpected reply from Redis');
      }),
    dropped: () => 0,
    async close() {},
  };
}
