/**
 * Where session state lives (docs/dev-pdp.md): the interface both stores implement, in this
 * process's memory (the default) or in Redis (shared by PDP replicas).
 * @packageDocumentation
 */
import type { SessionUpdate, SessionView } from './state.js';

/**
 * One decision's use of a session's state, from `acquire` until `commit` or `release`. A store shared
 * by replicas (Redis) may hand out the state it last wrote without asking (no lock): the commit then
 * checks that nobody wrote since, and a decision that lost that race is decided again on the state as
 * it is now. A decision that is about to do something it cannot take back (take an approval, open an
 * escalation) first calls `confirm`, which holds the session until its commit.
 * @internal
 */
export interface SessionLease {
  /** The state as it was when the lease was taken. */
  readonly view: SessionView;
  /**
   * Makes sure `view` is the session's latest state and that no other holder commits before this
   * lease does (absent, or a no-op, for a store that hands one decision per session at a time).
   * @throws {@link StaleView} with a lease, already confirmed, on the latest state: decide again on it
   * @throws Error when the store cannot (it is down, slow, or the session stayed held)
   */
  confirm?(): Promise<void>;
  /**
   * Adds the labels and appends the step (the oldest dropped past `maxHistory`), restarts the idle
   * expiry, and gives the lease up, atomically.
   * @returns nothing when committed; a new lease on the latest state when another holder committed
   *   first (nothing was written: decide again on it)
   * @throws Error when the store cannot (it is down, slow, or the lease was lost): nothing changed
   */
  commit(update: SessionUpdate): Promise<SessionLease | undefined>;
  /** Gives the lease up without a change (best effort, never throws). */
  release(): void;
}

/** Thrown by {@link SessionLease.confirm} when the state changed since the lease was taken. @internal */
export class StaleView extends Error {
  override readonly name = 'StaleView';
  /** A confirmed lease on the latest state. */
  readonly lease: SessionLease;

  constructor(lease: SessionLease) {
    super('the session changed since it was read');
    this.lease = lease;
  }
}

/** A session store. Keys are opaque strings made by {@link sessionKey}. @internal */
export interface SessionStore {
  /** Takes the session for one decision (see {@link SessionLease}). */
  acquire(key: string): Promise<SessionLease>;
  /** Reads the state without taking the session (a simulated request). */
  read(key: string): Promise<SessionView>;
  /** Releases what the store opened itself. */
  close(): Promise<void>;
}

/** Limits every store applies. @internal */
export interface SessionLimits {
  /** Steps kept, the oldest dropped. */
  maxHistory: number;
  /** Idle expiry after the last non-simulated step, in seconds. */
  sessionTtlSec: number;
}

/** The key of one (agent, session) pair: neither part can be mistaken for the other. @internal */
export function sessionKey(agentId: string, session: string): string {
  return JSON.stringify([agentId, session]);
}
