/**
 * What the runtime offers, asked at run time rather than imported (docs/runtimes.md): Node's built-in
 * modules come through `process.getBuiltinModule` (Node 20.16+, Deno 2, Bun), so no module of the
 * client entry or the permit verifier has a static `node:` import, and the same files load on
 * Cloudflare Workers (workerd, where `process` is undefined) and Vercel Edge, which have no Node
 * built-ins. Where there are, Node's own crypto keeps the hot paths as fast as before.
 * @internal
 */
import type * as NodeCrypto from 'node:crypto';

/** The part of `process` read here (absent on workerd without `nodejs_compat`). */
interface ProcessLike {
  getBuiltinModule?: (id: string) => unknown;
  versions?: { node?: unknown };
}

function processLike(): ProcessLike | undefined {
  const p = (globalThis as { process?: unknown }).process;
  return typeof p === 'object' && p !== null ? (p as ProcessLike) : undefined;
}

/**
 * A Node built-in module (`'node:crypto'`, `'node:module'`, ...), or undefined where the runtime has
 * none (workerd, Vercel Edge) or refuses it. Never throws.
 * @param id - the module's `node:` specifier
 */
export function nodeBuiltin<T>(id: string): T | undefined {
  try {
    const get = processLike()?.getBuiltinModule;
    return typeof get === 'function' ? ((get(id) as T | undefined) ?? undefined) : undefined;
  } catch {
    return undefined;
  }
}

/** `node:crypto` where the runtime has it (Node, Deno, Bun, workerd with `nodejs_compat`), else undefined. */
export const nodeCrypto: typeof NodeCrypto | undefined = nodeBuiltin<typeof NodeCrypto>('node:crypto');

/** A random (version 4) UUID: Node's `randomUUID` where it is, else WebCrypto's. */
export const randomUUID: () => string =
  typeof nodeCrypto?.randomUUID === 'function'
    ? nodeCrypto.randomUUID
    : () => (globalThis as unknown as { crypto: { randomUUID(): string } }).crypto.randomUUID();

/**
 * Whether this runtime keeps one process's memory across all its requests: Node, Deno and Bun do;
 * Cloudflare Workers (workerd) and Vercel Edge run many isolates whose memory is not shared, and an
 * unknown runtime is taken for one of those (fail closed: a per-isolate replay store would let a
 * permit be used once in every isolate). Read by `createPermitVerifier` to choose its default store.
 */
export function hasProcessMemory(): boolean {
  const g = globalThis as { navigator?: { userAgent?: unknown }; EdgeRuntime?: unknown };
  if (typeof g.EdgeRuntime === 'string') return false;
  if (g.navigator?.userAgent === 'Cloudflare-Workers') return false;
  const p = processLike();
  return typeof p?.versions?.node === 'string' || 'Deno' in globalThis || 'Bun' in globalThis;
}
