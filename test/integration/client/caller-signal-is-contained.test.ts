/**
 * Defect probe: a caller signal whose removeEventListener throws makes `finish` throw before
 * `resolve`, so the stage method never resolves (and the throw escapes as an unhandled rejection /
 * uncaught exception). Contract section 2: "The five stage methods never reject. Whatever happens
 * (..., caller abort, arguments that cannot be serialized), they resolve with a PolicyDecision";
 * section 3: "a decision resolves within timeoutMs plus a few milliseconds".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPep } from '../../../src/index.js';
import { type FakePdp, startFakePdp } from '../../support/fake-pdp.js';

let pdp: FakePdp;
beforeAll(async () => {
  pdp = await startFakePdp();
});
afterAll(async () => {
  await pdp.close();
});

function nastySignal(): AbortSignal {
  // A genuine AbortSignal (instanceof holds); only its removeEventListener is shadowed.
  const signal = new AbortController().signal;
  Object.defineProperty(signal, 'removeEventListener', {
    value: () => {
      throw new Error('removeEventListener exploded');
    },
  });
  return signal;
}

function within<T>(p: Promise<T>, ms: number): Promise<T | 'HUNG'> {
  return Promise.race([p, new Promise<'HUNG'>((r) => setTimeout(r, ms, 'HUNG').unref())]);
}

describe('caller signal with a throwing removeEventListener', () => {
  it('a normal ALLOW still resolves (it must not hang)', async () => {
    const errors: unknown[] = [];
    const onUnhandled = (e: unknown) => errors.push(e);
    process.on('unhandledRejection', onUnhandled);
    const pep = createPep({ pdpUrl: pdp.url, agentId: 'support-ai', session: 's1', timeoutMs: 300, retries: 0 });
    try {
      const d = await within(pep.checkInput('hello', { signal: nastySignal() }), 1000);
      expect(d).not.toBe('HUNG');
      await new Promise((r) => setTimeout(r, 20));
      expect(errors).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await pep.close();
    }
  });

  it('a signal whose addEventListener throws resolves BLOCK invalid_request, and nothing hangs', async () => {
    const signal = new AbortController().signal;
    Object.defineProperty(signal, 'addEventListener', {
      value: () => {
        throw new Error('addEventListener exploded');
      },
    });
    const pep = createPep({ pdpUrl: pdp.url, agentId: 'support-ai', session: 's1', timeoutMs: 300, retries: 0 });
    try {
      const d = await within(pep.checkInput('hello', { signal }), 1000);
      expect(d).not.toBe('HUNG');
      expect((d as { synthesized?: { code: string } }).synthesized?.code).toBe('invalid_request');
    } finally {
      await pep.close();
    }
  });
});
