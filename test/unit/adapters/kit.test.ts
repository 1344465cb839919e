/** The adapter kit's text memory (on lru-cache): bounded; forgetting only means checking again. */
import { describe, expect, it } from 'vitest';
import { TextMemory } from '../../../src/adapters/kit.js';

describe('TextMemory: bounded, the entry set longest ago forgotten first', () => {
  it('keeps at most max entries, dropping the one set longest ago', () => {
    const memory = new TextMemory<string>(2);
    memory.set('a', 'A');
    memory.set('b', 'B');
    memory.set('c', 'C');
    expect(memory.size).toBe(2);
    expect(memory.get('a')).toBeUndefined();
    expect(memory.get('b')).toBe('B');
    expect(memory.get('c')).toBe('C');
  });

  it('reading an entry does not keep it longer; setting it again does', () => {
    const read = new TextMemory<string>(2);
    read.set('a', 'A');
    read.set('b', 'B');
    expect(read.get('a')).toBe('A');
    read.set('c', 'C');
    expect(read.get('a')).toBeUndefined();

    const renewed = new TextMemory<string>(2);
    renewed.set('a', 'A');
    renewed.set('b', 'B');
    renewed.set('a', 'A2');
    renewed.set('c', 'C');
    expect(renewed.get('a')).toBe('A2');
    expect(renewed.get('b')).toBeUndefined();
  });

  it('max 0 remembers nothing; an undefined key is never remembered', () => {
    const none = new TextMemory<string>(0);
    none.set('a', 'A');
    expect(none.size).toBe(0);
    expect(none.get('a')).toBeUndefined();
    const memory = new TextMemory<string>(5);
    memory.set(undefined, 'A');
    expect(memory.size).toBe(0);
    expect(memory.get(undefined)).toBeUndefined();
  });

  it('keeps null as a value (an outcome "send the original"), unlike absent', () => {
    const memory = new TextMemory<string | null>(2);
    memory.set('k', null);
    expect(memory.get('k')).toBeNull();
    expect(memory.get('other')).toBeUndefined();
  });

  it('a very large max allocates nothing up front (maxRemembered accepts any safe integer)', () => {
    const memory = new TextMemory<string>(Number.MAX_SAFE_INTEGER);
    memory.set('a', 'A');
    expect(memory.get('a')).toBe('A');
    memory.delete('a');
    expect(memory.size).toBe(0);
  });
});
