/**
 * Where session state lives (docs/dev-pdp.md): the interface both stores implement, in this
 * process's memory (the default) or in Redis (shared by PDP replicas).
 * @packageDocumentation
 */
import type { SessionUpdate, SessionView } from './state.js';

/** Exclusive use of one session's state, from `acquire` until `commit` or `release`. @internal */
export interface SessionLease {
  /** The state as it was when the lease was taken. */
  readonly view: SessionView;
  /**
   * Adds the labels and appends the step (the oldest dropped past `maxHistory`), restarts the idle
   * expiry, and gives the lease up, atomically.
   * @throws Error when the store cannot (it is down, slow, or the lease was lost): nothing changed
   */
  commit(update: SessionUpdate): Promise<void>;
  /** Gives the lease up without a change (best effort, never throws). */
  release(): void;
}

/** A session store. Keys are opaque strings made by {@link sessionKey}. @internal */
export interface SessionStore {
  /** Takes the session for one decision; waits while another holder (another replica) has it. */
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
