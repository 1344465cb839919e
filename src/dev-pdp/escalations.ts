/**
 * Escalations held for review: an ESCALATE opens one, a reviewer resolves it, and the next identical
 * request (same agent, session, stage and subject) takes the resolution once (docs/dev-pdp.md).
 * @packageDocumentation
 */
import { canonicalJson } from '../permit/hash.js';
import { randomId } from './signing.js';

/** A reviewer's answer. */
export type EscalationResolution = 'approve' | 'deny';

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

function subjectKey(subject: EscalationSubject): string {
  return canonicalJson([subject.agentId, subject.session, subject.stage, subject.tool ?? null, subject.hash]);
}

/** Open escalations and one-time resolutions waiting for their request. @internal */
export class EscalationBook {
  readonly #open = new Map<string, string>();
  readonly #resolvedIds = new Set<string>();
  readonly #waiting = new Map<string, EscalationResolution[]>();

  /** Opens a review for this subject and returns its fresh id. */
  open(subject: EscalationSubject): string {
    const id = randomId('esc_');
    this.#open.set(id, subjectKey(subject));
    return id;
  }

  /**
   * Resolves an open escalation; the next identical request takes the resolution once.
   * @throws EscalationError `escalation_not_found` or `escalation_already_resolved`
   */
  resolve(id: string, resolution: EscalationResolution): void {
    if (resolution !== 'approve' && resolution !== 'deny')
      throw new TypeError("resolution must be 'approve' or 'deny'");
    const key = typeof id === 'string' ? this.#open.get(id) : undefined;
    if (key === undefined) {
      if (typeof id === 'string' && this.#resolvedIds.has(id)) {
        throw new EscalationError('escalation_already_resolved', 'escalation already resolved');
      }
      throw new EscalationError('escalation_not_found', 'unknown escalation id');
    }
    this.#open.delete(id);
    this.#resolvedIds.add(id);
    const queue = this.#waiting.get(key);
    if (queue) queue.push(resolution);
    else this.#waiting.set(key, [resolution]);
  }

  /** The resolution waiting for this subject, if any; `consume` takes it (one use). */
  take(subject: EscalationSubject, consume: boolean): EscalationResolution | undefined {
    const key = subjectKey(subject);
    const queue = this.#waiting.get(key);
    const first = queue?.[0];
    if (!queue || first === undefined) return undefined;
    if (consume) {
      queue.shift();
      if (queue.length === 0) this.#waiting.delete(key);
    }
    return first;
  }
}
