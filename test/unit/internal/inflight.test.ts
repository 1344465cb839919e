/**
 * The in-flight registry that `close()` stops (src/internal/inflight.ts).
 */
import { describe, expect, it } from 'vitest';
import type { AbortCause } from '../../../src/internal/abort.js';
import { Inflight } from '../../../src/internal/inflight.js';

describe('Inflight: the decisions close() stops', () => {
  it('stopAll calls each entry still in flight once, with the cause', () => {
    const set = new Inflight();
    const calls: string[] = [];
    const a = set.add((c) => calls.push(`a:${c}`));
    set.add((c) => calls.push(`b:${c}`));
    set.add((c) => calls.push(`c:${c}`));
    set.delete(a);
    set.stopAll('closed');
    expect(calls.sort()).toEqual(['b:closed', 'c:closed']);
  });

  it('deleting in any order keeps every other entry (swap-removal moves the last one)', () => {
    const set = new Inflight();
    const stopped: number[] = [];
    const entries = Array.from({ length: 6 }, (_, i) => set.add(() => stopped.push(i)));
    for (const i of [0, 5, 2]) set.delete(entries[i] as ReturnType<Inflight['add']>);
    expect(set.size).toBe(3);
    set.stopAll('closed');
    expect(stopped.sort()).toEqual([1, 3, 4]);
  });

  it('a second delete of one entry removes nothing else', () => {
    const set = new Inflight();
    const stopped: string[] = [];
    const a = set.add(() => stopped.push('a'));
    set.add(() => stopped.push('b'));
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
      });
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
    });
    set.add(() => {
      ran++;
    });
    expect(() => set.stopAll('closed')).not.toThrow();
    expect(ran).toBe(1);
  });
});
