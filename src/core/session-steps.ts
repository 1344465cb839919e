/**
 * `sessionStep` (docs/dev-pdp.md, "Session integrity"; contract section 15): per session id, the count
 * of this client's non-simulated requests the PDP decided (a 200 answer it turned into a decision). A
 * request carries the count it will make once decided (a simulated or visibility request: the count so
 * far), so a PDP that does not know a session this client has counted steps of refuses it (409
 * `session_state_lost`) rather than deciding on an empty state. A refused, failed or lost request does
 * not advance it.
 * @internal
 */
import { LRUCache } from 'lru-cache';

/** Sessions counted at once; the least recently used is forgotten (it counts from 1 again: never a false refusal). */
const MAX_SESSIONS = 10_000;

/** The counts of one client and its `withSession` clients. */
export class SessionSteps {
  readonly #counts = new LRUCache<string, number>({ max: MAX_SESSIONS });

  /** What a request of `session` carries: the count once it is decided, or the count so far (undefined: none yet). */
  stepFor(session: string, advances: boolean): number | undefined {
    const so = this.#counts.get(session) ?? 0;
    const step = advances ? so + 1 : so;
    return step >= 1 ? step : undefined;
  }

  /** Counts one decided request of `session`. */
  advance(session: string): void {
    this.#counts.set(session, (this.#counts.get(session) ?? 0) + 1);
  }
}
