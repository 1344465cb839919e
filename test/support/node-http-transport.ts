/**
 * Setup of the `node-http` test project (vitest.config.ts): every client the files make without a
 * `dispatcher` of their own sends on {@link NodeHttpDispatcher} (node:http), the transport of
 * `agent-pep hook`, instead of undici's pool. The files are the transport's fail-closed suites, run
 * unchanged on both: every rule holds whichever sends the request (issue 30).
 */
import { afterAll, vi } from 'vitest';
import type { PepOptions } from '../../src/index.js';
import { NodeHttpDispatcher } from '../../src/transport/node-http.js';

/** Requests each file sent on node:http: none means the mock no longer reached the files' clients. */
const sent = vi.hoisted(() => ({ count: 0 }));

vi.mock('../../src/pep.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/pep.js')>();
  return {
    ...original,
    createPep: (options: PepOptions) => {
      const dispatcher = new NodeHttpDispatcher();
      const dispatch = dispatcher.dispatch.bind(dispatcher);
      dispatcher.dispatch = (...args) => {
        sent.count += 1;
        return dispatch(...args);
      };
      return original.createPep({
        dispatcher: dispatcher as unknown as NonNullable<PepOptions['dispatcher']>,
        ...options,
      });
    },
  };
});

afterAll(() => {
  if (sent.count === 0) throw new Error('no request of this file went out on node:http: the project tests nothing');
});
