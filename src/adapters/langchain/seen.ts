/**
 * What the LangChain adapter remembers between model calls, without LangChain: which messages were
 * already checked and what to send in their place, per session, in a bounded map, and the session of
 * a run. Forgetting an entry only means the message is checked again (never that it passes unchecked).
 * @internal
 */

import { createHash } from 'node:crypto';
import { sessionOf } from '../../internal/session.js';
import { TextMemory } from '../kit.js';

/**
 * What was decided for one message, and for which text (`text`, a digest): a message whose id is
 * known but whose text changed (an edit keeps the id) is new, and checked again.
 */
export type Seen = (
  | { kind: 'pass' } // ALLOW, or written by the adapter itself
  | { kind: 'replace'; content: string }
) & { text?: string }; // WARN: transformedContent; or a BLOCK's denial text in later requests

/** Most messages remembered by one middleware (oldest forgotten first). */
export const MAX_SEEN = 10_000;

/** A bounded memory of checked messages (a {@link TextMemory}), keyed by session and message id. */
export class SeenMessages {
  readonly #entries: TextMemory<Seen>;

  constructor(max = MAX_SEEN) {
    this.#entries = new TextMemory<Seen>(max);
  }

  static key(session: string, id: unknown): string | undefined {
    return typeof id === 'string' && id !== '' ? `${session}\u0000${id}` : undefined;
  }

  /** The digest a {@link Seen} entry keeps of the text it was decided for. */
  static digest(text: string): string {
    return createHash('sha256').update(text).digest('base64url');
  }

  get(key: string | undefined): Seen | undefined {
    return this.#entries.get(key);
  }

  /**
   * The entry for `key` when it was decided for this very `text` (or `text` is its replacement already),
   * else undefined: the message is new, or was edited under the same id, and must be checked.
   */
  match(key: string | undefined, text: string): Seen | undefined {
    const entry = this.get(key);
    if (entry?.text === undefined) return undefined;
    if (entry.text === SeenMessages.digest(text)) return entry;
    return entry.kind === 'replace' && entry.content === text ? entry : undefined;
  }

  set(key: string | undefined, seen: Seen): void {
    this.#entries.set(key, seen);
  }

  get size(): number {
    return this.#entries.size;
  }
}

/**
 * The session of a run: LangGraph's `configurable.thread_id` (a non-empty string, or a finite number
 * as its decimal text), else `undefined` (the client's own session applies).
 */
export function threadSession(configurable: unknown): string | undefined {
  try {
    if (typeof configurable !== 'object' || configurable === null) return undefined;
    return sessionOf({ thread: (configurable as { thread_id?: unknown }).thread_id });
  } catch {
    return undefined;
  }
}
