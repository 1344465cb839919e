/**
 * undici's `Pool`, loaded when a client first makes its own pool (a client given a `dispatcher` never
 * loads it). It comes from its own module, `undici/lib/dispatcher/pool.js`, the one undici's index
 * exports as `Pool`: the index also loads all the rest of undici (fetch, WebSocket, the cache, the
 * mocks), which no client uses, about half of the start of a hook process (issue 30). The transport
 * uses only `dispatch`, `destroy` and `destroyed`, which the class has without the index. Should that
 * path ever move or be something else, the index's `Pool` is used.
 * @internal
 */
import { createRequire } from 'node:module';
import type { Pool } from 'undici';

/** Where undici's index takes `Pool` from (undici 6 and 7). */
export const POOL_MODULE = 'undici/lib/dispatcher/pool.js';

let loaded: typeof Pool | undefined;

/** undici's `Pool` class, loaded once. */
export function poolClass(): typeof Pool {
  if (loaded !== undefined) return loaded;
  const require = createRequire(import.meta.url);
  let own: unknown;
  try {
    own = require(POOL_MODULE);
  } catch {
    own = undefined;
  }
  loaded =
    typeof own === 'function' && own.name === 'Pool'
      ? (own as typeof Pool)
      : (require('undici') as typeof import('undici')).Pool;
  return loaded;
}
