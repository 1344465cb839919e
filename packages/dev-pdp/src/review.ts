/**
 * The review side of the dev PDP: the escalation book with its two TTLs, a chained evidence record for
 * every resolution (who, how, when), and the `notifyUrl` webhook when an escalation opens
 * (docs/dev-pdp.md, "The reviewer console").
 * @packageDocumentation
 */
import type { EvidenceRecord } from 'agent-pep/internal';
import { deadlineIn, race } from 'agent-pep/internal';
import { createNotifier, type Notifier } from './console/notify.js';
import { DEV_PDP_DEFAULTS } from './defaults.js';
import { EscalationBook, type EscalationLimits, type EscalationStore, type ResolvedEscalation } from './escalations.js';
import { createRedisEscalationStore, type EscalationRedisClient } from './escalations-redis.js';
import type { EvidenceLog, ReviewEntry } from './evidence.js';
import type { RefusedRequest } from './log.js';
import { optionError, type ResolvedDevPdpOptions } from './options.js';
import { openRedis } from './redis-connection.js';

/** The escalation book, and what stops its timer and webhook. @internal */
export interface Review {
  escalations: EscalationBook;
  close(): void;
}

/** The limits of the escalation store the options give. @internal */
export function escalationLimits(o: ResolvedDevPdpOptions): EscalationLimits {
  return {
    approvalTtlMs: o.approvalTtlSec * 1000,
    escalationTtlMs: o.escalationTtlSec * 1000,
    maxPerSession: o.maxEscalationsPerSession,
    maxEntries: o.maxEscalations,
  };
}

/** An escalation store and what closes the connection it opened. @internal */
export interface OpenedEscalationStore {
  store: EscalationStore;
  close(): Promise<void>;
}

/** The prefix of escalation keys: beside the session keys of the same `prefix`. */
function escalationPrefix(prefix: string | undefined): string {
  return prefix === undefined ? 'agent-pep:esc:' : `${prefix}esc:`;
}

/**
 * The Redis escalation store of a PDP whose sessions are in Redis (the same Redis: replicas then share
 * escalations and approvals), or undefined (memory). A URL opens a connection of its own, closed by
 * `close()`; a client is used as given (the caller closes it).
 * @throws TypeError (`option` 'sessionStore.redis') for a client without the commands it needs
 * @internal
 */
export async function openEscalationStore(o: ResolvedDevPdpOptions): Promise<OpenedEscalationStore | undefined> {
  const option = o.sessionStore;
  if (option === undefined) return undefined;
  const limits = escalationLimits(o);
  const prefix = escalationPrefix(option.prefix);
  if (typeof option.redis !== 'string') {
    const client = option.redis as EscalationRedisClient;
    for (const command of ['get', 'set', 'mget', 'zrevrange', 'zrangebyscore', 'lrange', 'ping'] as const) {
      if (typeof client[command] !== 'function') {
        throw optionError('sessionStore.redis', `the client has no ${command}(): pass an ioredis Redis or Cluster`);
      }
    }
    return {
      store: createRedisEscalationStore(client, limits, prefix, o.sessionStoreTimeoutMs),
      close: async () => {},
    };
  }
  const timeoutMs = o.sessionStoreTimeoutMs;
  const redis = await openRedis(option.redis, timeoutMs);
  // the first decisions should not find the connection still opening (a Redis down is a 503 later)
  await race(new Promise((resolve) => redis.once('ready', resolve)), deadlineIn(timeoutMs));
  const client = redis as unknown as EscalationRedisClient;
  return {
    store: createRedisEscalationStore(client, limits, prefix, timeoutMs),
    async close() {
      await race(
        redis.quit().catch(() => {}),
        deadlineIn(timeoutMs),
      );
      redis.disconnect();
    },
  };
}

/** The review record of a resolution. @internal */
export function reviewEntry(resolved: ResolvedEscalation): ReviewEntry {
  const { escalation: e } = resolved;
  const entry: ReviewEntry = {
    escalationId: e.id,
    outcome: resolved.outcome,
    by: resolved.by,
    requestId: e.requestId,
    agentId: e.subject.agentId,
    session: e.subject.session,
    latches: e.latches,
  };
  if (resolved.note !== undefined) entry.note = resolved.note;
  if (e.subject.tool !== undefined) entry.tool = e.subject.tool;
  if (e.subject.toolPin !== undefined) entry.toolPin = e.subject.toolPin;
  if (e.subject.stage === 'action') entry.argsHash = e.subject.hash;
  else entry.contentHash = e.subject.hash;
  return entry;
}

/**
 * Makes the escalation book of a PDP: resolutions (and expiries) are appended to `evidence` and shown to
 * `onDecision`; openings are POSTed to `notifyUrl` when there is one. The sweep timer runs until `close()`.
 * @internal
 */
export function reviewing(
  o: ResolvedDevPdpOptions,
  evidence: EvidenceLog,
  log: (refusal: RefusedRequest) => void,
  baseUrl: () => string,
  store?: EscalationStore,
): Review {
  let notifier: Notifier | undefined;
  const escalations = new EscalationBook({
    limits: escalationLimits(o),
    ...(store !== undefined ? { store } : {}),
    onOpen: (e) => {
      const notice = { escalationId: e.id, agentId: e.subject.agentId, session: e.subject.session };
      notifier?.send({
        ...notice,
        ...(e.subject.tool !== undefined ? { tool: e.subject.tool } : {}),
        ...(e.reason !== undefined ? { reason: e.reason } : {}),
      });
    },
    onResolve: (resolved) => {
      // seq is taken now, in resolution order; a failed write is the log's own failure (it stops)
      evidence.appendReview(reviewEntry(resolved)).then(
        (record: EvidenceRecord) => {
          try {
            o.onDecision?.(structuredClone(record));
          } catch {
            // an observer cannot change a review
          }
        },
        () => {},
      );
    },
  });
  if (o.notifyUrl !== undefined) {
    const url = o.notifyUrl;
    const withConsole = o.console && o.reviewerApiKey !== undefined;
    notifier = createNotifier({
      url,
      get consoleUrl() {
        return withConsole ? `${baseUrl()}/console` : undefined;
      },
      timeoutMs: DEV_PDP_DEFAULTS.notifyTimeoutMs,
      concurrency: DEV_PDP_DEFAULTS.notifyConcurrency,
      log,
    });
  }
  escalations.start(DEV_PDP_DEFAULTS.escalationSweepMs);
  return {
    escalations,
    close() {
      escalations.stop();
      notifier?.close();
    },
  };
}
