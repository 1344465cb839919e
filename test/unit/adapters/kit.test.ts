/**
 * The adapter kit: its text memory (on lru-cache: bounded; forgetting only means checking again), and the
 * constants every adapter shares from it (the held-call bound, the permit and session keys).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { MAX_HELD, PERMIT_META_KEY, SESSION_META_KEY, TextMemory } from '../../../src/adapters/kit.js';
import * as mcp from '../../../src/adapters/mcp.js';

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

const ADAPTERS = fileURLToPath(new URL('../../../src/adapters/', import.meta.url));

/** Every adapter module but the kit, as its text without comments. */
function adapterSources(): Array<[string, string]> {
  return readdirSync(ADAPTERS, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && f !== 'kit.ts')
    .map((f) => [f, readFileSync(join(ADAPTERS, f), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '')]);
}

describe('one home for what every adapter shares', () => {
  it('one bound on held calls, 10,000, for every adapter that holds calls', () => {
    expect(MAX_HELD).toBe(10_000);
    const own = adapterSources().filter(([, text]) => /\bconst\s+MAX_HELD\b/.test(text));
    expect(own.map(([f]) => f)).toEqual([]);
    const users = adapterSources().filter(([, text]) => /new TextMemory<[^>]+>\(MAX_HELD\)/.test(text));
    expect(users.map(([f]) => f).sort()).toEqual(['ai/tools.ts', 'langchain/tools.ts', 'mastra/tools.ts']);
  });

  it("the 'agent-pep/permit' and 'agent-pep/session' keys are written once, and agent-pep/mcp exports those", () => {
    expect(PERMIT_META_KEY).toBe('agent-pep/permit');
    expect(SESSION_META_KEY).toBe('agent-pep/session');
    expect(mcp.PERMIT_META_KEY).toBe(PERMIT_META_KEY);
    expect(mcp.SESSION_META_KEY).toBe(SESSION_META_KEY);
    const literal = adapterSources().filter(([, text]) => /['"]agent-pep\/(permit|session)['"]\s*[;,)\]]/.test(text));
    expect(literal.map(([f]) => f)).toEqual([]);
  });
});
