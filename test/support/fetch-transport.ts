/**
 * Setup of the `fetch` test project (vitest.config.ts): every client the files make without a
 * `dispatcher` of their own sends with `transport: 'fetch'` (src/transport/fetch.ts, the transport of
 * workerd, Vercel Edge, Deno and Bun) through Node's global `fetch`, instead of undici's pool. The
 * files are the transport's fail-closed suites, run unchanged on all three transports: every rule
 * holds whichever sends the request (issue 42). A pool size (`connections`) is undici's alone, so it
 * is left out here.
 */
import { afterAll, vi } from 'vitest';
import type { PepOptions } from '../../src/index.js';

/** Requests each file sent through `fetch`: none means the mock no longer reached the files' clients. */
const sent = vi.hoisted(() => ({ count: 0 }));

vi.mock('../../src/pep.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/pep.js')>();
  return {
    ...original,
    createPep: (options: PepOptions) => {
      if (options.dispatcher !== undefined) return original.createPep(options);
      const { connections: _undicis, ...rest } = options;
      return original.createPep({
        transport: 'fetch',
        fetch: (input, init) => {
          sent.count += 1;
          return globalThis.fetch(input, init);
        },
        ...rest,
      });
    },
  };
});

afterAll(() => {
  if (sent.count === 0) throw new Error('no request of this file went out through fetch: the project tests nothing');
});
