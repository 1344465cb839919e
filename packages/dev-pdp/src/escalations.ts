/**
 * Escalations held for review: an ESCALATE opens one, a reviewer resolves it (or its time runs out), and
 * the next identical request (same agent, session, stage and subject) takes the resolution once, while
 * the resolution lasts (docs/dev-pdp.md).
 * @packageDocumentation
 */
import { canonicalJson } from 'agent-pep/internal';
import { randomId } from './signing.js';

/** A reviewer's answer. */
export type EscalationResolution = 'approve' | 'deny';

/** How an escalation ended: a reviewer's answer, or `expired` (denied when its time ran out). */
export type EscalationOutcome = EscalationResolution | 'expired';

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
}

/** What a reviewer sees of the request an escalation holds (in memory only). @internal */
export interface EscalationDetails {
  requestId: string;
  latches: string[];
  reason?: string;
  /** Action: the args as the PDP saw them. */
  args?: Record<string, unknown>;
  /** Text stages: the content as the PDP saw it. */
  content?: string;
}

/** An open escalation. @internal */
export interface PendingEscalation extends EscalationDetails {
  id: string;
  subject: EscalationSubject;
  /** When it was opened, epoch milliseconds. */
  openedAt: number;
  /** The session's labels after the step, when the PDP keeps sessions. */
  labels?: string[];
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

/** Error codes of {@link EscalationError}. */
export type EscalationErrorCode = 'escalation_not_found' | 'escalation_already_resolved';

/** Thrown by `resolveEscalation` for an id that is unknown or already resolved. */
export class EscalationError extends Error {
  override readonly name = 'EscalationError';
  readonly code: EscalationErrorCode;
  constructor(code: EscalationErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** Settings of an {@link EscalationBook}. @internal */
export interface EscalationBookOptions {
  /** How long a resolution waits for its request, milliseconds. */
  approvalTtlMs: number;
  /** How long an escalation stays open before it is denied, milliseconds. */
  escalationTtlMs: number;
  /** Called (synchronously, errors contained) when an escalation opens. */
  onOpen?: (escalation: PendingEscalation) => void;
  /** Called (synchronously, errors contained) when an escalation is resolved or expires. */
  onResolve?: (resolved: ResolvedEscalation) => void;
  /** The clock, epoch milliseconds. @defaultValue Date.now */
  now?: () => number;
}

interface Waiting {
  resolution: EscalationResolution;
  expiresAt: number;
}

/** How many resolved ids are remembered to answer `escalation_already_resolved`. */
const RESOLVED_IDS_KEPT = 10_000;

function subjectKey(subject: EscalationSubject): string {
  return canonicalJson([subject.agentId, subject.session, subject.stage, subject.tool ?? null, subject.hash]);
}

function contained<T>(callback: ((value: T) => void) | undefined, value: T): void {
  try {
    callback?.(value);
  } catch {
    // an observer cannot change a review
  }
}

/** Open escalations and one-time resolutions waiting for their request. @internal */
export class EscalationBook {
  readonly #open = new Map<string, PendingEscalation>();
  readonly #resolvedIds = new Set<string>();
  readonly #waiting = new Map<string, Waiting[]>();
  readonly #options: EscalationBookOptions;
  readonly #now: () => number;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: EscalationBookOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Opens a review for this subject and returns its fresh id (a simulated request opens one too: an
   * adapter asks first with a simulated request and resumes the call once it is approved).
   */
  open(subject: EscalationSubject, details: EscalationDetails): string {
    const id = randomId('esc_');
    this.sweep();
    const escalation: PendingEscalation = { id, subject, openedAt: this.#now(), ...details };
    this.#open.set(id, escalation);
    contained(this.#options.onOpen, escalation);
    return id;
  }

  /** Records the session's labels on an open escalation (from its evidence record). */
  label(id: string, labels: readonly string[] | undefined): void {
    const escalation = this.#open.get(id);
    if (escalation !== undefined && Array.isArray(labels)) escalation.labels = [...labels];
  }

  /**
   * Resolves an open escalation; the next identical request within the approval TTL takes the
   * resolution once.
   * @throws EscalationError `escalation_not_found` or `escalation_already_resolved`
   */
  resolve(id: string, resolution: EscalationResolution, by: EscalationResolver = 'process', note?: string): void {
    if (resolution !== 'approve' && resolution !== 'deny')
      throw new TypeError("resolution must be 'approve' or 'deny'");
    this.sweep();
    const escalation = typeof id === 'string' ? this.#open.get(id) : undefined;
    if (escalation === undefined) {
      if (typeof id === 'string' && this.#resolvedIds.has(id)) {
        throw new EscalationError('escalation_already_resolved', 'escalation already resolved');
      }
      throw new EscalationError('escalation_not_found', 'unknown escalation id');
    }
    this.#close(escalation, resolution, resolution, by, note);
  }

  /** The resolution waiting for this subject, if any and not expired; `consume` takes it (one use). */
  take(subject: EscalationSubject, consume: boolean): EscalationResolution | undefined {
    const key = subjectKey(subject);
    const queue = this.#waiting.get(key);
    if (queue === undefined) return undefined;
    const now = this.#now();
    while (queue.length > 0 && (queue[0] as Waiting).expiresAt <= now) queue.shift();
    const first = queue[0];
    if (first === undefined) {
      this.#waiting.delete(key);
      return undefined;
    }
    if (consume) {
      queue.shift();
      if (queue.length === 0) this.#waiting.delete(key);
    }
    return first.resolution;
  }

  /** The open escalations, newest first (expired ones are denied first). */
  pending(): PendingEscalation[] {
    this.sweep();
    return [...this.#open.values()].reverse();
  }

  /** Denies every escalation open longer than the escalation TTL and drops expired resolutions. */
  sweep(): void {
    const now = this.#now();
    for (const escalation of this.#open.values()) {
      // insertion order is opening order: the first one still in time ends the sweep
      if (now - escalation.openedAt < this.#options.escalationTtlMs) break;
      this.#close(escalation, 'deny', 'expired', 'ttl', undefined);
    }
    for (const [key, queue] of this.#waiting) {
      const live = queue.filter((w) => w.expiresAt > now);
      if (live.length === 0) this.#waiting.delete(key);
      else if (live.length !== queue.length) this.#waiting.set(key, live);
    }
  }

  /** Sweeps every `intervalMs` until {@link stop} (the timer does not keep the process alive). */
  start(intervalMs: number): void {
    this.stop();
    this.#timer = setInterval(() => this.sweep(), intervalMs);
    this.#timer.unref();
  }

  /** Stops the sweep timer. */
  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #close(
    escalation: PendingEscalation,
    resolution: EscalationResolution,
    outcome: EscalationOutcome,
    by: EscalationResolver,
    note: string | undefined,
  ): void {
    const at = this.#now();
    this.#open.delete(escalation.id);
    this.#resolvedIds.add(escalation.id);
    if (this.#resolvedIds.size > RESOLVED_IDS_KEPT) {
      const oldest = this.#resolvedIds.values().next().value;
      if (oldest !== undefined) this.#resolvedIds.delete(oldest);
    }
    const key = subjectKey(escalation.subject);
    const waiting: Waiting = { resolution, expiresAt: at + this.#options.approvalTtlMs };
    const queue = this.#waiting.get(key);
    if (queue) queue.push(waiting);
    else this.#waiting.set(key, [waiting]);
    const resolved: ResolvedEscalation = { escalation, outcome, by, at };
    if (note !== undefined && note !== '') resolved.note = note;
    contained(this.#options.onResolve, resolved);
  }
}
