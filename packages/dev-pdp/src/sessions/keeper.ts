/**
 * One decision at a time per session, in the order this PDP received them (docs/dev-pdp.md): each
 * decision reads the state as it was before its step, then its labels and step are committed before
 * the next decision of the session reads. Every wait on the store is bounded by
 * `sessionStoreTimeoutMs` from the request's arrival; past it the request is answered 503
 * `session_store_unavailable`, never decided on a missing state.
 * @packageDocumentation
 */
import { beforeDeadline, deadlineIn } from 'agent-pep/internal';
import { HttpError } from '../http.js';
import { EMPTY_SESSION, type SessionUpdate, type SessionView } from './state.js';
import { type SessionLease, type SessionStore, StaleView } from './store.js';

/** What a decision does with the state it read: the change to commit, then the rest of its work. @internal */
export interface SessionPlan<T> {
  /** Absent for a simulated request: nothing is written. */
  update?: SessionUpdate;
  /** Runs after the commit, still before the session's next decision. */
  finish(): Promise<T>;
}

/**
 * Called by a plan before it does something it cannot take back (takes an approval, opens an
 * escalation): afterwards no other replica commits to the session before this decision does.
 * @throws StaleView when the state changed since the plan read it (the keeper plans again on the latest)
 * @throws HttpError 503 `session_store_unavailable`
 * @internal
 */
export type Confirm = () => Promise<void>;

const NO_CONFIRM: Confirm = () => Promise.resolve();

/** The 503 of a store that could not answer in time. @internal */
export function storeUnavailable(): HttpError {
  return new HttpError(503, 'session_store_unavailable', 'the session store did not answer in time');
}

/**
 * `promise`, or the 503 when it rejects or has not settled by `deadline` (a `now()` value of the one
 * deadline clock, src/internal/deadline.ts).
 */
function by<T>(promise: Promise<T>, deadline: number): Promise<T> {
  const unavailable = promise.catch((): never => {
    throw storeUnavailable();
  });
  return beforeDeadline(unavailable, deadline, storeUnavailable);
}

/** As {@link by}, but a {@link StaleView} goes through: the decision starts again on the latest state. */
function confirmedBy(lease: SessionLease, deadline: number): Promise<void> {
  if (lease.confirm === undefined) return Promise.resolve();
  const confirming = lease.confirm().catch((error: unknown): never => {
    throw error instanceof StaleView ? error : storeUnavailable();
  });
  return beforeDeadline(confirming, deadline, storeUnavailable);
}

/** Serializes the decisions of each session and bounds their waits on the store. @internal */
export class SessionKeeper {
  readonly #store: SessionStore;
  readonly #timeoutMs: number;
  /** Per session key: settles when the last queued decision of that session is done. */
  readonly #tails = new Map<string, Promise<void>>();

  constructor(store: SessionStore, timeoutMs: number) {
    this.#store = store;
    this.#timeoutMs = timeoutMs;
  }

  /**
   * Runs one decision of session `key` (none: an empty state, nothing written).
   * @throws HttpError 503 `session_store_unavailable` when the store (or the decisions queued before
   *   this one) did not answer within the timeout; whatever `plan` or `finish` throws
   */
  async run<T>(
    key: string | undefined,
    simulated: boolean,
    plan: (view: SessionView, confirm: Confirm) => Promise<SessionPlan<T>>,
  ): Promise<T> {
    if (key === undefined) return (await plan(EMPTY_SESSION, NO_CONFIRM)).finish();
    const deadline = deadlineIn(this.#timeoutMs);
    const previous = this.#tails.get(key) ?? Promise.resolve();
    let done!: () => void;
    const mine = new Promise<void>((resolve) => {
      done = resolve;
    });
    // the next decision waits for this one and for every one before it, even if this one gives up early
    const tail = previous.then(() => mine);
    this.#tails.set(key, tail);
    try {
      await by(previous, deadline);
      return simulated ? await this.#simulated(key, deadline, plan) : await this.#decided(key, deadline, plan);
    } finally {
      done();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }

  async #simulated<T>(
    key: string,
    deadline: number,
    plan: (view: SessionView, confirm: Confirm) => Promise<SessionPlan<T>>,
  ) {
    const view = await by(this.#store.read(key), deadline);
    // a simulated request takes nothing and writes nothing: there is nothing to confirm
    return (await plan(view, NO_CONFIRM)).finish();
  }

  async #decided<T>(
    key: string,
    deadline: number,
    plan: (view: SessionView, confirm: Confirm) => Promise<SessionPlan<T>>,
  ) {
    const acquiring = this.#store.acquire(key);
    let lease: SessionLease;
    try {
      lease = await by(acquiring, deadline);
    } catch (error) {
      // a lease that comes after the deadline is given up at once, so it holds up nobody
      acquiring.then((late) => late.release()).catch(() => {});
      throw error;
    }
    // a decision is planned again only when its plan did nothing it cannot take back: it confirmed
    // nothing (a confirmed lease commits or fails), or its confirm found a newer state
    for (;;) {
      const current = lease;
      let planned: SessionPlan<T>;
      try {
        // each wait on the store has its own deadline: the time spent planning (policy evaluation of a
        // long text on a loaded machine) is not time waiting for the store
        planned = await plan(current.view, () => confirmedBy(current, deadlineIn(this.#timeoutMs)));
      } catch (error) {
        if (error instanceof StaleView) {
          lease = error.lease;
          continue;
        }
        current.release();
        throw error;
      }
      if (planned.update === undefined) {
        current.release();
        return planned.finish();
      }
      const newer = await by(current.commit(planned.update), deadlineIn(this.#timeoutMs));
      if (newer === undefined) return planned.finish();
      lease = newer;
    }
  }

  /** Closes the store. */
  close(): Promise<void> {
    return this.#store.close();
  }
}
