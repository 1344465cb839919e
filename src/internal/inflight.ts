/**
 * The decisions in flight on one client: each with its deadline, for `close()` to stop them all and
 * for the one timer that stops each at its deadline.
 * @internal
 */
import type { AbortCause } from './abort.js';
import { now } from './deadline.js';

/** One decision in flight: how to stop it, when, and its neighbours in the deadline order. */
export interface InflightEntry {
  readonly stop: (cause: AbortCause) => void;
  /** Its deadline, a `performance.now()` value (`internal/deadline.ts`). */
  readonly deadlineAt: number;
  /** False once deleted or stopped. */
  live: boolean;
  prev: InflightEntry | undefined;
  next: InflightEntry | undefined;
}

/**
 * Milliseconds after the deadline the timer was set for within which an entry's deadline is due too
 * when it fires: Node's timers count whole milliseconds from the event loop's cached clock, so a timer
 * of the entry's own would have fired then as well.
 */
const EARLY_MS = 1;

/**
 * Lets a timer hold the process open (`true`) or not: Node's, Deno's and Bun's timers have
 * `ref`/`unref`; workerd's and Vercel Edge's `setTimeout` returns a number, and no process waits there.
 */
function hold(timer: ReturnType<typeof setTimeout> | undefined, on: boolean): void {
  const t = timer as { ref?: unknown; unref?: unknown } | undefined;
  if (on ? typeof t?.ref === 'function' : typeof t?.unref === 'function') {
    if (on) (t as { ref(): void }).ref();
    else (t as { unref(): void }).unref();
  }
}

/**
 * The in-flight decisions of one client (and its `withSession` clients), in deadline order: added when
 * an exchange starts, deleted when it ends, each stopped with `'deadline'` when its deadline passes,
 * and all stopped by `close()`.
 *
 * One timer for the whole client, not one per decision: a client's decisions share `timeoutMs`, so they
 * arrive nearly in deadline order (an entry goes in from the back, O(1) as a rule) and a decision that
 * ends unlinks itself in O(1). The timer stays set for the earliest deadline it was set for; when it
 * fires it stops every entry that is due and is set again for the earliest one left, so each deadline
 * is met as a timer of its own would meet it. A `setTimeout` and `clearTimeout` per decision cost about
 * a microsecond of client CPU at 64 decisions in flight (BENCHMARKS.md). The timer keeps the process
 * alive only while an entry is in flight, as the per-decision timers did.
 */
export class Inflight {
  #head: InflightEntry | undefined = undefined;
  #tail: InflightEntry | undefined = undefined;
  #size = 0;
  #timer: NodeJS.Timeout | undefined = undefined;
  /** The deadline the timer is set for (Infinity when it is not set). */
  #armedFor = Number.POSITIVE_INFINITY;
  readonly #onTimer = (): void => this.#expire();

  /** How many decisions are in flight. */
  get size(): number {
    return this.#size;
  }

  /**
   * Registers a decision that `stop('deadline')` ends at `deadlineAt` (a `performance.now()` value),
   * unless it is deleted first; keep the entry to {@link Inflight.delete} it.
   */
  add(stop: (cause: AbortCause) => void, deadlineAt: number): InflightEntry {
    const entry: InflightEntry = { stop, deadlineAt, live: true, prev: undefined, next: undefined };
    // From the back: the new deadline is the latest as a rule.
    let after = this.#tail;
    while (after !== undefined && after.deadlineAt > deadlineAt) after = after.prev;
    if (after === undefined) {
      entry.next = this.#head;
      if (this.#head) this.#head.prev = entry;
      else this.#tail = entry;
      this.#head = entry;
    } else {
      entry.prev = after;
      entry.next = after.next;
      if (after.next) after.next.prev = entry;
      else this.#tail = entry;
      after.next = entry;
    }
    if (this.#size++ === 0) hold(this.#timer, true);
    if (deadlineAt < this.#armedFor) this.#arm(deadlineAt);
    return entry;
  }

  /** Removes an entry. A second delete of one entry does nothing. */
  delete(entry: InflightEntry): void {
    if (!entry.live) return;
    entry.live = false;
    const { prev, next } = entry;
    if (prev) prev.next = next;
    else this.#head = next;
    if (next) next.prev = prev;
    else this.#tail = prev;
    entry.prev = entry.next = undefined;
    // With nothing in flight, the timer (still set) must not hold the process open.
    if (--this.#size === 0) hold(this.#timer, false);
  }

  /**
   * Stops every decision in flight now with `cause`, each once; an entry added meanwhile is not
   * stopped. A `stop` that throws cannot keep the others from running.
   */
  stopAll(cause: AbortCause): void {
    const entries: InflightEntry[] = [];
    for (let e = this.#head; e !== undefined; e = e.next) entries.push(e);
    for (const entry of entries) {
      if (!entry.live) continue;
      this.delete(entry);
      try {
        entry.stop(cause);
      } catch {
        // one decision cannot keep the others from being stopped
      }
    }
    if (this.#size === 0 && this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#armedFor = Number.POSITIVE_INFINITY;
    }
  }

  /** Sets the one timer for `deadlineAt`, in place of the one set for a later deadline. */
  #arm(deadlineAt: number): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#armedFor = deadlineAt;
    this.#timer = setTimeout(this.#onTimer, Math.max(0, deadlineAt - now()));
    if (this.#size === 0) hold(this.#timer, false);
  }

  /**
   * The timer fired: stops every entry due (its deadline at most {@link EARLY_MS} after the one the
   * timer was set for, or after now), then sets the timer for the earliest one left. Node may fire a
   * timer a little before its time (whole milliseconds from the loop's cached clock); what a timer of
   * the entry's own would have stopped then is stopped now, never set again for the rest of a millisecond.
   */
  #expire(): void {
    const due = Math.max(this.#armedFor, now()) + EARLY_MS;
    this.#timer = undefined;
    this.#armedFor = Number.POSITIVE_INFINITY;
    for (let e = this.#head; e !== undefined && e.deadlineAt <= due; e = this.#head) {
      this.delete(e);
      try {
        e.stop('deadline');
      } catch {
        // one decision cannot keep the others from being stopped
      }
    }
    if (this.#head !== undefined) this.#arm(this.#head.deadlineAt);
  }
}
