/**
 * The transport options of createPep (CONTRACT.md section 18): `transport` and `fetch` are validated,
 * and the pairs that cannot go together are a TypeError naming the option, never a silent fallback.
 */
import { describe, expect, it } from 'vitest';
import { createPep, type PepOptions } from '../../../src/index.js';

const base = { pdpUrl: 'http://127.0.0.1:9', agentId: 'a', session: 's' };

function optionOf(extra: Record<string, unknown>): unknown {
  try {
    createPep({ ...base, ...extra } as PepOptions);
    return 'accepted';
  } catch (err) {
    expect(err).toBeInstanceOf(TypeError);
    return (err as TypeError & { option?: string }).option;
  }
}

describe('createPep transport options', () => {
  it('accepts undici, fetch, and an injected fetch', () => {
    expect(optionOf({ transport: 'undici' })).toBe('accepted');
    expect(optionOf({ transport: 'fetch' })).toBe('accepted');
    expect(optionOf({ fetch: globalThis.fetch })).toBe('accepted');
  });

  it('refuses an unknown transport and a fetch that is not a function', () => {
    expect(optionOf({ transport: 'xhr' })).toBe('transport');
    expect(optionOf({ fetch: 'fetch' })).toBe('fetch');
  });

  it("refuses a fetch with transport 'undici', and a dispatcher or pool size on fetch", () => {
    expect(optionOf({ transport: 'undici', fetch: globalThis.fetch })).toBe('fetch');
    const dispatcher = { dispatch: () => true };
    expect(optionOf({ transport: 'fetch', dispatcher })).toBe('dispatcher');
    expect(optionOf({ fetch: globalThis.fetch, dispatcher })).toBe('dispatcher');
    expect(optionOf({ transport: 'fetch', connections: 2 })).toBe('connections');
  });
});

describe('the fetch transport', () => {
  /** A fetch double answering each request with `respond()`. */
  function pepWith(respond: () => Response | Promise<Response>) {
    const seen: RequestInit[] = [];
    const pep = createPep({
      ...base,
      retries: 0,
      fetch: async (_url, init) => {
        seen.push(init);
        return respond();
      },
    });
    return { pep, seen };
  }

  it("sends with redirect: 'manual' and a signal of its own", async () => {
    const { pep, seen } = pepWith(() => Response.json({ verdict: 'ALLOW' }));
    const d = await pep.checkInput('hi');
    expect(d.verdict).toBe('ALLOW');
    expect(seen[0]?.redirect).toBe('manual');
    expect(seen[0]?.signal).toBeInstanceOf(AbortSignal);
  });

  it('an opaque redirect (what browsers give for redirect: manual) is pdp_status', async () => {
    const opaque = { type: 'opaqueredirect', status: 0, headers: new Headers(), body: null } as unknown as Response;
    const { pep } = pepWith(() => opaque);
    expect((await pep.checkInput('hi')).synthesized?.code).toBe('pdp_status');
  });

  it('stops reading a body past maxResponseBytes and cancels its stream', async () => {
    let cancelled = false;
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(ctrl) {
        pulled += 1;
        ctrl.enqueue(new Uint8Array(1024).fill(0x20));
      },
      cancel() {
        cancelled = true;
      },
    });
    const pep = createPep({
      ...base,
      retries: 0,
      maxResponseBytes: 4096,
      fetch: async () => new Response(endless, { headers: { 'content-type': 'application/json' } }),
    });
    expect((await pep.checkInput('hi')).synthesized?.code).toBe('invalid_response');
    expect(cancelled).toBe(true);
    expect(pulled).toBeLessThan(10);
  });

  it('a fetch that rejects is pdp_unreachable; one that never settles ends at the deadline', async () => {
    const { pep } = pepWith(() => Promise.reject(new TypeError('network error')));
    expect((await pep.checkInput('hi')).synthesized?.code).toBe('pdp_unreachable');
    const hung = createPep({ ...base, retries: 0, timeoutMs: 100, fetch: () => new Promise<Response>(() => {}) });
    expect((await hung.checkInput('hi')).synthesized?.code).toBe('pdp_timeout');
  });

  it('close() ends a request in flight and refuses later ones', async () => {
    const { pep } = pepWith(() => new Promise<Response>(() => {}));
    const pending = pep.checkInput('hi');
    await pep.close();
    expect((await pending).synthesized?.code).toBe('pdp_unreachable');
    expect((await pep.checkInput('again')).synthesized?.code).toBe('pdp_unreachable');
  });
});
