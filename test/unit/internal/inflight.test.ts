/**
 * The in-flight registry that `close()` stops and whose one timer stops each decision at its deadline
 * (src/internal/inflight.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AbortCause } from '../../../src/internal/abort.js';
import { now } from '../../../src/internal/deadline.js';
import { Inflight } from '../../../src/internal/inflight.js';

/** A deadline far enough away that no test here reaches it. */
const far = (): number => now() + 60_000;
const timeouts = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('Inflight: the decisions close() stops', () => {
  const sets: Inflight[] = [];
  afterEach(() => {
    for (const set of sets.splice(0)) set.stopAll('closed');
  });
  /** A registry stopped after the test, the names its entries were stopped with, and the time it started. */
  const timed = () => {
    const set = new Inflight();
    sets.push(set);
    return { set, stopped: [] as string[], t0: now() };
  };

  it('stopAll calls each entry still in flight once, with the cause', () => {
    const set = new Inflight();
    const calls: string[] = [];
    const a = set.add((c) => calls.push(`a:${c}`), far());
    set.add((c) => calls.push(`b:${c}`), far());
    set.add((c) => calls.push(`c:${c}`), far());
    set.delete(a);
    set.stopAll('closed');
    expect(calls.sort()).toEqual(['b:closed', 'c:closed']);
  });

  it('deleting in any order keeps every other entry', () => {
    const set = new Inflight();
    const stopped: number[] = [];
    const entries = Array.from({ length: 6 }, (_, i) => set.add(() => stopped.push(i), far()));
    for (const i of [0, 5, 2]) set.delete(entries[i] as ReturnType<Inflight['add']>);
    expect(set.size).toBe(3);
    set.stopAll('closed');
    expect(stopped.sort()).toEqual([1, 3, 4]);
  });

  it('a second delete of one entry removes nothing else', () => {
    const set = new Inflight();
    const stopped: string[] = [];
    const a = set.add(() => stopped.push('a'), far());
    set.add(() => stopped.push('b'), far());
    set.delete(a);
    set.delete(a);
    expect(set.size).toBe(1);
    set.stopAll('deadline');
    expect(stopped).toEqual(['b']);
  });

  it('an entry that deletes itself while being stopped (as a decision does) lets the others run', () => {
    const set = new Inflight();
    const stopped: AbortCause[] = [];
    const entries: ReturnType<Inflight['add']>[] = [];
    for (let i = 0; i < 4; i++) {
      const e = set.add((c) => {
        stopped.push(c);
        set.delete(e);
      }, far());
      entries.push(e);
    }
    set.stopAll('closed');
    expect(stopped).toHaveLength(4);
    expect(set.size).toBe(0);
  });

  it('a throwing entry cannot keep the others from being stopped', () => {
    const set = new Inflight();
    let ran = 0;
    set.add(() => {
      throw new Error('boom');
    }, far());
    set.add(() => {
      ran++;
    }, far());
    expect(() => set.stopAll('closed')).not.toThrow();
    expect(ran).toBe(1);
  });

  it('each decision is stopped with deadline at its own deadline, in deadline order, whatever the order it came in', async () => {
    const { set, stopped, t0 } = timed();
    set.add((c) => stopped.push(`late:${c}`), t0 + 120);
    set.add((c) => stopped.push(`early:${c}`), t0 + 30);
    set.add((c) => stopped.push(`mid:${c}`), t0 + 60);
    set.add((c) => stopped.push(`never:${c}`), far());
    await sleep(45);
    expect(stopped).toEqual(['early:deadline']);
    await sleep(40);
    expect(stopped).toEqual(['early:deadline', 'mid:deadline']);
    await sleep(80);
    expect(stopped).toEqual(['early:deadline', 'mid:deadline', 'late:deadline']);
    expect(set.size).toBe(1);
  });

  it('a decision deleted before its deadline is never stopped by the timer', async () => {
    const { set, stopped, t0 } = timed();
    const a = set.add(() => stopped.push('a'), t0 + 20);
    set.add(() => stopped.push('b'), t0 + 40);
    set.delete(a);
    await sleep(70);
    expect(stopped).toEqual(['b']);
    expect(set.size).toBe(0);
  });

  it('an earlier deadline added after a later one is still met (the timer is set again for it)', async () => {
    const { set, stopped, t0 } = timed();
    set.add(() => stopped.push('later'), t0 + 500);
    set.add(() => stopped.push('sooner'), t0 + 20);
    await sleep(60);
    expect(stopped).toEqual(['sooner']);
  });

  it('the timer holds the process open only while a decision is in flight', () => {
    const before = timeouts();
    const set = new Inflight();
    sets.push(set);
    const a = set.add(() => undefined, far());
    expect(timeouts()).toBe(before + 1);
    set.delete(a);
    expect(timeouts()).toBe(before);
    const b = set.add(() => undefined, far());
    expect(timeouts()).toBe(before + 1);
    set.stopAll('closed');
    expect(timeouts()).toBe(before);
    expect(b.live).toBe(false);
  });

  it('a stop that throws at its deadline cannot keep the next one from being stopped', async () => {
    const { set, stopped, t0 } = timed();
    set.add(() => {
      throw new Error('boom');
    }, t0 + 15);
    set.add(() => stopped.push('next'), t0 + 15);
    await sleep(50);
    expect(stopped).toEqual(['next']);
    expect(set.size).toBe(0);
  });

  it('a timer that fires before its time stops what it was set for, as a timer of its own would (not a millisecond later)', () => {
    // Node fires timers by whole milliseconds of the loop's cached clock, so a little early by
    // performance.now(). Faked setTimeout (the real clock stays) fires as early as we like.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const { set, stopped, t0 } = timed();
      set.add((c) => stopped.push(`due:${c}`), t0 + 50);
      set.add((c) => stopped.push(`later:${c}`), t0 + 5_000);
      vi.advanceTimersByTime(50);
      expect(stopped).toEqual(['due:deadline']);
      expect(set.size).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });
});
