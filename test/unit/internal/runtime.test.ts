/**
 * CONTRACT.md section 18: a runtime without process memory (workerd, Vercel Edge, one not known) has
 * no default replay store: createPermitVerifier without `replayStore` is a TypeError there, never a
 * per-isolate map; on Node it keeps the memory store.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createMemoryReplayStore, createPermitVerifier } from '../../../src/index.js';
import { hasProcessMemory } from '../../../src/internal/runtime.js';

const options = { keys: 'http://127.0.0.1:9/jwks.json', issuer: 'http://127.0.0.1:9', audience: 'svc' };

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('the default replay store by runtime', () => {
  it('Node has process memory: the memory store is the default', () => {
    expect(hasProcessMemory()).toBe(true);
    expect(() => createPermitVerifier(options)).not.toThrow();
  });

  it.each([
    ['workerd', () => vi.stubGlobal('navigator', { userAgent: 'Cloudflare-Workers' })],
    ['Vercel Edge', () => vi.stubGlobal('EdgeRuntime', 'edge-runtime')],
  ])('%s: createPermitVerifier without a replayStore is a TypeError naming replayStore', (_name, stub) => {
    stub();
    expect(hasProcessMemory()).toBe(false);
    let option: unknown;
    try {
      createPermitVerifier(options);
    } catch (err) {
      expect(err).toBeInstanceOf(TypeError);
      option = (err as { option?: unknown }).option;
    }
    expect(option).toBe('replayStore');
    expect(() => createPermitVerifier({ ...options, replayStore: createMemoryReplayStore() })).not.toThrow();
  });
});
