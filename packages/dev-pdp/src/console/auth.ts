/**
 * Console sign-in and sessions: the reviewer key signs in (never the agent's key), sign-in attempts are
 * limited per client address, and each session has its own CSRF token (docs/dev-pdp.md, "The reviewer
 * console"). Sessions live in memory (lru-cache), bounded in number and time.
 * @packageDocumentation
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { KeyThrottle } from '../auth.js';
import { newToken } from './csrf.js';

/** A console session: before sign-in it carries only the CSRF token of the sign-in form. @internal */
export interface ConsoleSession {
  readonly id: string;
  readonly csrf: string;
  readonly signedIn: boolean;
}

/** How a sign-in went. @internal */
export type SignInResult =
  | { ok: true; session: ConsoleSession }
  | { ok: false; why: 'wrong_key' | 'agent_key' | 'rate_limited'; retryAfterSec?: number };

/** Limits of {@link ConsoleAuth}. @internal */
export interface ConsoleAuthLimits {
  /** Failed reviewer-key attempts per client, shared with every endpoint that accepts the key. */
  throttle: KeyThrottle;
  /** A signed-in session ends after this long unused. */
  idleMs: number;
}

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/** Signs reviewers in and keeps their sessions. @internal */
export class ConsoleAuth {
  readonly #reviewer: Buffer;
  readonly #agent: Buffer | undefined;
  readonly #limits: ConsoleAuthLimits;
  /** Sessions before sign-in (the sign-in form's CSRF token): many, short. */
  readonly #visitors: LRUCache<string, ConsoleSession>;
  readonly #signedIn: LRUCache<string, ConsoleSession>;

  constructor(reviewerKey: string, agentKey: string | undefined, limits: ConsoleAuthLimits) {
    this.#reviewer = digest(reviewerKey);
    this.#agent = agentKey === undefined ? undefined : digest(agentKey);
    this.#limits = limits;
    this.#visitors = new LRUCache({ max: 2000, ttl: 30 * 60 * 1000 });
    this.#signedIn = new LRUCache({ max: 1000, ttl: limits.idleMs, updateAgeOnGet: true });
  }

  /** The session a cookie names, if it is live. */
  session(id: string | undefined): ConsoleSession | undefined {
    if (id === undefined) return undefined;
    return this.#signedIn.get(id) ?? this.#visitors.get(id);
  }

  /** A fresh session for a visitor who has not signed in (for the sign-in form's CSRF token). */
  visitor(): ConsoleSession {
    const session: ConsoleSession = { id: randomBytes(32).toString('base64url'), csrf: newToken(), signedIn: false };
    this.#visitors.set(session.id, session);
    return session;
  }

  /**
   * Checks a key for `client` (its address). The visitor session that asked is ended; on success a new
   * session (new id, new CSRF token) is made, so a session id seen before sign-in is worth nothing after.
   */
  signIn(client: string, visitorId: string, key: string): SignInResult {
    const retryAfterSec = this.#limits.throttle.blocked(client);
    if (retryAfterSec !== undefined) return { ok: false, why: 'rate_limited', retryAfterSec };
    const given = digest(key);
    const isReviewer = timingSafeEqual(given, this.#reviewer);
    const isAgent = this.#agent !== undefined && timingSafeEqual(given, this.#agent);
    if (!isReviewer || isAgent || key.length === 0) {
      this.#limits.throttle.failed(client);
      return { ok: false, why: isAgent ? 'agent_key' : 'wrong_key' };
    }
    this.#visitors.delete(visitorId);
    const session: ConsoleSession = { id: randomBytes(32).toString('base64url'), csrf: newToken(), signedIn: true };
    this.#signedIn.set(session.id, session);
    return { ok: true, session };
  }

  /** Ends a session. */
  signOut(id: string): void {
    this.#signedIn.delete(id);
    this.#visitors.delete(id);
  }
}
