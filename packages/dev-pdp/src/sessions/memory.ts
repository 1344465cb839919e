/**
 * The default session store: this process's memory (docs/dev-pdp.md). One PDP process only; use the
 * Redis store for replicas.
 * @packageDocumentation
 */
import { LRUCache } from 'lru-cache';
import { DEV_PDP_DEFAULTS } from '../defaults.js';
import {
  EMPTY_FACTS,
  EMPTY_SESSION,
  type HistoryStep,
  type SessionFacts,
  type SessionUpdate,
  type SessionView,
} from './state.js';
import type { SessionLease, SessionLimits, SessionStore } from './store.js';

interface Entry {
  labels: Set<string>;
  history: HistoryStep[];
  steps: number;
  facts: SessionFacts;
  /** Epoch milliseconds. */
  expiresAt: number;
}

/** Commits between two sweeps of expired sessions. */
const SWEEP_EVERY = 1024;

/** How many sessions the memory store keeps, and who counts those it drops. @internal */
export interface MemorySessionBound {
  /** Sessions kept; past it the least recently used is dropped. */
  maxSessions: number;
  /** Called once per session dropped to stay within `maxSessions` (not for expiry). */
  onDrop(): void;
}

/**
 * Creates the memory store. Its callers (the session keeper) hand it one decision per session at a
 * time, so a lease needs no lock here. Bounded (lru-cache) when `bound` is given.
 * @internal
 */
export function createMemorySessionStore(
  limits: SessionLimits,
  now: () => number = Date.now,
  bound?: MemorySessionBound,
): SessionStore {
  const sessions = new LRUCache<string, Entry>({
    max: bound?.maxSessions ?? DEV_PDP_DEFAULTS.maxSessions,
    disposeAfter: (_entry, _key, reason) => {
      if (reason === 'evict') bound?.onDrop();
    },
  });
  let commits = 0;

  function live(key: string): Entry | undefined {
    const entry = sessions.get(key);
    if (entry !== undefined && entry.expiresAt <= now()) {
      sessions.delete(key);
      return undefined;
    }
    return entry;
  }

  function sweep(): void {
    const t = now();
    for (const [key, entry] of sessions) if (entry.expiresAt <= t) sessions.delete(key);
  }

  function viewOf(entry: Entry | undefined): SessionView {
    return entry === undefined
      ? EMPTY_SESSION
      : { labels: entry.labels, history: entry.history, steps: entry.steps, facts: entry.facts };
  }

  function commit(key: string, update: SessionUpdate): void {
    let entry = live(key);
    if (entry === undefined) {
      entry = { labels: new Set(), history: [], steps: 0, facts: EMPTY_FACTS, expiresAt: 0 };
      sessions.set(key, entry);
    }
    for (const label of update.labels) entry.labels.add(label);
    entry.steps += 1;
    if (update.facts !== undefined) entry.facts = update.facts;
    // labels are never dropped: only the history is bounded
    entry.history.push(update.step);
    if (entry.history.length > limits.maxHistory) entry.history.splice(0, entry.history.length - limits.maxHistory);
    entry.expiresAt = now() + limits.sessionTtlSec * 1000;
    if (++commits % SWEEP_EVERY === 0) sweep();
  }

  return {
    async acquire(key: string): Promise<SessionLease> {
      // no copy: nothing changes the entry until this lease commits (one decision per session at a time)
      return {
        view: viewOf(live(key)),
        async commit(update: SessionUpdate) {
          commit(key, update);
          return undefined;
        },
        release() {},
      };
    },
    async read(key: string): Promise<SessionView> {
      return viewOf(live(key));
    },
    async close() {
      sessions.clear();
    },
  };
}
