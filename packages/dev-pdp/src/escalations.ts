/**
 * Escalations held for review: an ESCALATE opens one (or finds the one already open for the identical
 * request), a reviewer resolves it (or its time runs out), and the next identical request (same agent,
 * session, stage and subject) takes the resolution once, while the resolution lasts (docs/dev-pdp.md).
 * Where they live is an {@link EscalationStore}: this process's memory (bounded, the oldest dropped and
 * counted) or Redis (shared by replicas, `escalations-redis.ts`).
 * @packageDocumentation
 */

import { canonicalJson } from 'agent-pep/internal';
import { LRUCache } from 'lru-cache';
import type { HeldSession } from './held-session.js';
import { randomId } from './signing.js';

/** A reviewer's answer. */
export type EscalationResolution = 'approve' | 'deny';

/** How an escalation ended: a reviewer's answer, or `expired` (denied when its time ran out). */
export type EscalationOutcome = EscalationResolution | 'expired';

/** Where an escalation stands, as `GET /api/escalations/{id}` answers it. */
export type EscalationStatus = 'pending' | 'approved' | 'denied' | 'expired';

/** Who resolved an escalation: the console, the HTTP endpoint, the host process, or the clock. */
export type EscalationResolver = 'console' | 'api' | 'process' | 'ttl';

/** What makes two requests identical for an escalation: for an action the tool and `act_hash`. */
export interface EscalationSubject {
  agentId: string;
  session: string;
  stage: string;
  /** Action: normalized tool name. */
  tool?: string;
  /** Action: `act_hash`; text stages: the keyed content hash. */
  hash: string;
  /** Action: the pin of the tool definition the request named, when it named one (an approval is bound to it). */
  toolPin?: string;
}

/** What a reviewer sees of the request an escalation holds. @internal */
export interface EscalationDetails {
  requestId: string;
  /** The session's labels after the step, when the PDP keeps sessions. */
  labels?: string[];
  latches: string[];
  reason?: string;
  /** Action: the args as the PDP saw them. */
  args?: Record<string, unknown>;
  /** Text stages: the content as the PDP saw it. */
  content?: string;
  /**
   * The session's intent grants and the values flowing into the args when the request was held (a
   * request in a session; absent for a sessionless one and for escalations stored before v4).
   */
  held?: HeldSession;
}

/** An open escalation. @internal */
export interface PendingEscalation extends EscalationDetails {
  id: string;
  subject: EscalationSubject;
  /** When it was opened, epoch milliseconds. */
  openedAt: number;
}

/** A resolved escalation, as the review record states it. @internal */
export interface ResolvedEscalation {
  escalation: PendingEscalation;
  outcome: EscalationOutcome;
  by: EscalationResolver;
  /** When it was resolved, epoch milliseconds. */
  at: number;
  note?: string;
}

/**
 * A resolution waiting for its identical request: the answer, the ESCALATE latches it resolved (an
 * approval lifts those and nothing else), and when it expires (epoch milliseconds). @internal
 */
export interface WaitingResolution {
  resolution: EscalationResolution;
  latches: string[];
  expiresAt: number;
}

/** Error codes of {@link EscalationError}. */
export type EscalationErrorCode = 'escalation_not_found' | 'escalation_already_resolved' | 'too_many_escalations';

/** Thrown by `resolveEscalation` for an id that is unknown or already resolved. */
export class EscalationError extends Error {
  override readonly name = 'EscalationError';
  readonly code: EscalationErrorCode;
  constructor(code: EscalationErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** The limits and clock every store applies. @internal */
export interface EscalationLimits {
  /** How long a resolution waits for its request, milliseconds. */
  approvalTtlMs: number;
  /** How long an escalation stays open before it is denied, milliseconds. */
  escalationTtlMs: number;
  /** Open escalations allowed per (agent, session); one more is refused `too_many_escalations`. */
  maxPerSession: number;
  /** Memory store: escalations (open and resolved) and waiting resolutions kept, the oldest dropped. */
  maxEntries: number;
}

/**
 * Where escalations live. Every method may reject when the store cannot answer (Redis down or slow):
 * the caller answers 503, never a decision. @internal
 */
export interface EscalationStore {
  /**
   * Opens an escalation for `subject`, or returns the id of the one already open for it (`reused`).
   * @throws EscalationError `too_many_escalations` when the session has `maxPerSession` open
   */
  open(escalation: PendingEscalation): Promise<{ id: string; reused: boolean }>;
  /**
   * Resolves an open escalation once (across replicas); the resolution then waits for its request.
   * @throws EscalationError `escalation_not_found` or `escalation_already_resolved`
   */
  resolve(
    id: string,
    outcome: EscalationOutcome,
    resolution: EscalationResolution,
    expiresAt: number,
  ): Promise<PendingEscalation>;
  /** {@link resolve}, done before it returns (a memory store): errors are thrown, not rejected. */
  resolveNow?(
    id: string,
    outcome: EscalationOutcome,
    resolution: EscalationResolution,
    expiresAt: number,
  ): PendingEscalation;
  /** The first live resolution waiting for this subject, left in place (a simulated request). */
  peek(subject: EscalationSubject, now: number): Promise<WaitingResolution | undefined>;
  /** Takes the first live resolution waiting for this subject: atomic, so one resolution is used once. */
  claim(subject: EscalationSubject, now: number): Promise<WaitingResolution | undefined>;
  /** Puts a claimed resolution back in front (a decision that could not be completed). */
  giveBack(subject: EscalationSubject, waiting: WaitingResolution): Promise<void>;
  /** Open escalations, newest first, at most `limit`. */
  pending(limit: number): Promise<PendingEscalation[]>;
  /** Ids of escalations opened at or before `openedBy` and still open, oldest first, at most `limit`. */
  overdue(openedBy: number, limit: number): Promise<string[]>;
  /** Where an escalation stands; undefined when unknown (never opened, or forgotten). */
  status(id: string): Promise<EscalationStatus | undefined>;
  /** Resolves when the store answers (`/readyz`). */
  ping(): Promise<void>;
  /** What a bounded store dropped to stay in bounds. */
  dropped(): number;
  close(): Promise<void>;
}

/** The key of a subject: what makes two requests identical. @internal */
export function subjectKey(subject: EscalationSubject): string {
  const key = [subject.agentId, subject.session, subject.stage, subject.tool ?? null, subject.hash];
  return canonicalJson(subject.toolPin === undefined ? key : [...key, subject.toolPin]);
}

/** The key of a subject's session, for `maxPerSession`. @internal */
export function subjectSessionKey(subject: EscalationSubject): string {
  return canonicalJson([subject.agentId, subject.session]);
}

/** The status an outcome leaves. @internal */
export function statusOf(outcome: EscalationOutcome): EscalationStatus {
  return outcome === 'approve' ? 'approved' : outcome === 'deny' ? 'denied' : 'expired';
}

const tooMany = () => new EscalationError('too_many_escalations', 'too many open escalations in this session');
const notFound = () => new EscalationError('escalation_not_found', 'unknown escalation id');
const alreadyResolved = () => new EscalationError('escalation_already_resolved', 'escalation already resolved');

/**
 * The memory store: one process. Open escalations, statuses and waiting resolutions are each bounded
 * by `maxEntries` (lru-cache): past it the oldest is dropped, and counted in {@link EscalationStore.dropped}
 * (a dropped open escalation can no longer be approved: fail closed). @internal
 */
export function createMemoryEscalationStore(limits: EscalationLimits): EscalationStore {
  let dropped = 0;
  const onEvict = (_v: unknown, _k: unknown, reason: string) => {
    if (reason === 'evict') dropped++;
  };
  const bySubject = new Map<string, string>();
  const open = new LRUCache<string, PendingEscalation>({
    max: limits.maxEntries,
    disposeAfter: (e, id, reason) => {
      onEvict(e, id, reason);
      // a dropped escalation can no longer be found, reused or approved
      if (reason === 'evict' && bySubject.get(subjectKey(e.subject)) === id) bySubject.delete(subjectKey(e.subject));
    },
  });
  const statuses = new LRUCache<string, EscalationStatus>({ max: limits.maxEntries, disposeAfter: onEvict });
  const waiting = new LRUCache<string, WaitingResolution[]>({ max: limits.maxEntries, disposeAfter: onEvict });
  const live = (subject: EscalationSubject, now: number): WaitingResolution[] | undefined => {
    const key = subjectKey(subject);
    const queue = waiting.get(key)?.filter((w) => w.expiresAt > now);
    if (queue === undefined || queue.length === 0) {
      waiting.delete(key);
      return undefined;
    }
    waiting.set(key, queue);
    return queue;
  };
  const openIn = (sessionKey: string): number => {
    let count = 0;
    for (const e of open.values()) if (subjectSessionKey(e.subject) === sessionKey) count++;
    return count;
  };
  return {
    async open(escalation) {
      const key = subjectKey(escalation.subject);
      const existing = bySubject.get(key);
      if (existing !== undefined && open.has(existing)) return { id: existing, reused: true };
      if (openIn(subjectSessionKey(escalation.subject)) >= limits.maxPerSession) throw tooMany();
      open.set(escalation.id, escalation);
      bySubject.set(key, escalation.id);
      statuses.set(escalation.id, 'pending');
      return { id: escalation.id, reused: false };
    },
    resolveNow(id, outcome, resolution, expiresAt) {
      const e = open.peek(id);
      if (e === undefined) throw statuses.has(id) ? alreadyResolved() : notFound();
      open.delete(id);
      const key = subjectKey(e.subject);
      if (bySubject.get(key) === id) bySubject.delete(key);
      statuses.set(id, statusOf(outcome));
      const w: WaitingResolution = { resolution, latches: e.latches, expiresAt };
      waiting.set(key, [...(waiting.get(key) ?? []), w]);
      return e;
    },
    async resolve(id, outcome, resolution, expiresAt) {
      return this.resolveNow?.(id, outcome, resolution, expiresAt) as PendingEscalation;
    },
    async peek(subject, now) {
      return live(subject, now)?.[0];
    },
    async claim(subject, now) {
      const queue = live(subject, now);
      const first = queue?.shift();
      if (queue !== undefined && queue.length === 0) waiting.delete(subjectKey(subject));
      return first;
    },
    async giveBack(subject, w) {
      const key = subjectKey(subject);
      waiting.set(key, [w, ...(waiting.get(key) ?? [])]);
    },
    async pending(limit) {
      // lru-cache iterates most recently set first: newest first
      return [...open.values()].sort((a, b) => b.openedAt - a.openedAt).slice(0, limit);
    },
    async overdue(openedBy, limit) {
      const ids = [...open.values()].filter((e) => e.openedAt <= openedBy).sort((a, b) => a.openedAt - b.openedAt);
      return ids.slice(0, limit).map((e) => e.id);
    },
    async status(id) {
      return statuses.get(id);
    },
    async ping() {},
    dropped: () => dropped,
    async close() {
      open.clear();
      bySubject.clear();
      statuses.clear();
      waiting.clear();
    },
  };
}

/** Settings of an {@link EscalationBook}. @internal */
export interface EscalationBookOptions {
  limits: EscalationLimits;
  /** Where escalations live. @defaultValue a memory store with `limits` */
  store?: EscalationStore;
  /** Called (synchronously, errors contained) when an escalation opens (not when one is reused). */
  onOpen?: (escalation: PendingEscalation) => void;
  /** Called (synchronously, errors contained) when this process resolves an escalation or sees it expire. */
  onResolve?: (resolved: ResolvedEscalation) => void;
  /** The clock, epoch milliseconds. @defaultValue Date.now */
  now?: () => number;
}

function contained<T>(callback: ((value: T) => void) | undefined, value: T): void {
  try {
    callback?.(value);
  } catch {
    // an observer cannot change a review
  }
}

/** Open escalations in a list or a sweep, at most. */
const LIST_LIMIT = 500;

/** The escalations of a PDP, over its store: opening, resolving, the two TTLs, one use of a resolution. @internal */
export class EscalationBook {
  readonly store: EscalationStore;
  readonly #options: EscalationBookOptions;
  readonly #now: () => number;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: EscalationBookOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.store = options.store ?? createMemoryEscalationStore(options.limits);
  }

  /**
   * Opens a review for this subject and returns its id; the identical request already pending gets the
   * id of its open escalation (no second one).
   * @throws EscalationError `too_many_escalations`
   */
  async open(subject: EscalationSubject, details: EscalationDetails): Promise<string> {
    const escalation: PendingEscalation = { id: randomId('esc_'), subject, openedAt: this.#now(), ...details };
    const { id, reused } = await this.store.open(escalation);
    if (!reused) contained(this.#options.onOpen, escalation);
    return id;
  }

  /**
   * Resolves an open escalation; the next identical request within the approval TTL takes the
   * resolution once.
   * @throws EscalationError `escalation_not_found` or `escalation_already_resolved`
   */
  resolve(
    id: string,
    resolution: EscalationResolution,
    by: EscalationResolver = 'process',
    note?: string,
  ): Promise<void> {
    if (resolution !== 'approve' && resolution !== 'deny')
      throw new TypeError("resolution must be 'approve' or 'deny'");
    if (typeof id !== 'string') throw notFound();
    return this.#close(id, resolution, resolution, by, note);
  }

  /**
   * The resolution waiting for this subject, if any and live; `consume` takes it (one use, atomic
   * across replicas).
   */
  take(subject: EscalationSubject, consume: boolean): Promise<WaitingResolution | undefined> {
    return consume ? this.store.claim(subject, this.#now()) : this.store.peek(subject, this.#now());
  }

  /** Puts back a resolution taken by a decision that could not be completed. */
  giveBack(subject: EscalationSubject, waiting: WaitingResolution): Promise<void> {
    return this.store.giveBack(subject, waiting);
  }

  /** The open escalations, newest first (expired ones are denied first). */
  async pending(): Promise<PendingEscalation[]> {
    await this.sweep();
    return this.store.pending(LIST_LIMIT);
  }

  /** Where escalation `id` stands (expired ones are denied first); undefined when unknown. */
  async status(id: string): Promise<EscalationStatus | undefined> {
    await this.sweep();
    return this.store.status(id);
  }

  /** Denies every escalation open longer than the escalation TTL (once across replicas). */
  async sweep(): Promise<void> {
    const overdue = await this.store.overdue(this.#now() - this.#options.limits.escalationTtlMs, LIST_LIMIT);
    for (const id of overdue) {
      try {
        await this.#close(id, 'deny', 'expired', 'ttl', undefined);
      } catch (error) {
        // another replica (or a reviewer) got there first
        if (!(error instanceof EscalationError)) throw error;
      }
    }
  }

  /** Sweeps every `intervalMs` until {@link stop} (the timer does not keep the process alive). */
  start(intervalMs: number): void {
    this.stop();
    this.#timer = setInterval(() => this.sweep().catch(() => {}), intervalMs);
    this.#timer.unref();
  }

  /** Stops the sweep timer. */
  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Resolves `id` (before returning, with a memory store: its errors are thrown) and tells `onResolve`. */
  #close(
    id: string,
    resolution: EscalationResolution,
    outcome: EscalationOutcome,
    by: EscalationResolver,
    note: string | undefined,
  ): Promise<void> {
    const at = this.#now();
    const expiresAt = at + this.#options.limits.approvalTtlMs;
    const told = (escalation: PendingEscalation): void => {
      const resolved: ResolvedEscalation = { escalation, outcome, by, at };
      if (note !== undefined && note !== '') resolved.note = note;
      contained(this.#options.onResolve, resolved);
    };
    const { store } = this;
    if (store.resolveNow !== undefined) {
      told(store.resolveNow(id, outcome, resolution, expiresAt));
      return Promise.resolve();
    }
    return store.resolve(id, outcome, resolution, expiresAt).then(told);
  }
}
