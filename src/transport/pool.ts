/**
 * undici's `Pool`, loaded when a client first makes its own pool (a client given a `dispatcher` never
 * loads it). It comes from its own module, `undici/lib/dispatcher/pool.js`, the one undici's index
 * exports as `Pool`: the index also loads all the rest of undici (fetch, WebSocket, the cache, the
 * mocks), which no client uses, about half of the start of a hook process (issue 30). The transport
 * uses only `dispatch`, `destroy` and `destroyed`, which the class has without the index. Should that
 * path ever move or be something else, the index's `Pool` is used.
 * @internal
 */
import type { Pool } from 'undici';
import { nodeBuiltin } from '../internal/runtime.js';

/** Where undici's index takes `Pool` from (undici 6 and 7). */
export const POOL_MODULE = 'undici/lib/dispatcher/pool.js';

let loaded: typeof Pool | undefined;

/**
 * undici's `Pool` class, loaded once.
 * @throws Error where it cannot load: a runtime without `node:module` (workerd, Vercel Edge), or
 *   undici missing or broken
 */
export function poolClass(): typeof Pool {
  if (loaded !== undefined) return loaded;
  // node:module is fetched here, not imported: the client entry loads on runtimes without it.
  const nodeModule = nodeBuiltin<typeof import('node:module')>('node:module');
  if (nodeModule === undefined) throw new Error('undici cannot load here: the runtime has no node:module');
  const require = nodeModule.createRequire(import.meta.url);
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

/** Whether undici's `Pool` loads here (it does on Node, Deno and Bun; not on workerd or Vercel Edge). */
export function undiciLoads(): boolean {
  try {
    return typeof poolClass() === 'function';
  } catch {
    return false;
  }
}
