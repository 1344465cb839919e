/**
 * Tool names: the one length limit and the one normalization (docs/permits.md), shared by the client,
 * the permit verifier, telemetry and the adapters (so telemetry needs nothing from permit/).
 * @packageDocumentation
 */
import { LRUCache } from 'lru-cache';

/**
 * Most UTF-16 code units of a tool name as the agent proposed it (docs/api.md): a longer one is a synthesized
 * BLOCK `invalid_request` from a stage method, a `TypeError` from `guardTool`. The dev PDP refuses the same.
 */
export const MAX_TOOL_NAME_LENGTH = 256;

const CAMEL_BOUNDARY = /([a-z0-9])([A-Z])/g;
const NON_ALNUM_RUN = /[^a-z0-9]+/g;
const EDGE_UNDERSCORES = /^_+|_+$/g;

/**
 * Agents use a handful of tool names, normalized on every decision and every verification: remember
 * the last few hundred (names only, never args). Cleared when full, so it stays bounded.
 */
const CACHE_MAX = 512;
const CACHE_NAME_MAX = 128;
const cache = new LRUCache<string, string>({ max: CACHE_MAX });

/**
 * Normalizes a tool name so that spellings of one tool compare equal.
 *
 * Steps, in order: Unicode NFKC; an `_` between an ASCII `[a-z0-9]` and the ASCII `[A-Z]` after it;
 * `toLowerCase()`; every run of characters outside `[a-z0-9]` becomes one `_`; leading and trailing
 * `_` removed.
 *
 * @param name - the tool name as the agent proposed it
 * @returns the normalized name, matching `^[a-z0-9]+(_[a-z0-9]+)*$`
 * @throws TypeError when `name` is not a string or normalizes to the empty string
 * @example
 * ```ts
 * normalizeToolName('refundPayment');     // 'refund_payment'
 * normalizeToolName(' refund.payment ');  // 'refund_payment'
 * normalizeToolName('ＲｅｆｕｎｄPayment'); // 'refund_payment' (full-width letters via NFKC)
 * ```
 */
export function normalizeToolName(name: string): string {
  if (typeof name !== 'string') throw new TypeError('tool name must be a string');
  const cached = cache.get(name);
  if (cached !== undefined) return cached;
  const out = name
    .normalize('NFKC')
    .replace(CAMEL_BOUNDARY, '$1_$2')
    .toLowerCase()
    .replace(NON_ALNUM_RUN, '_')
    .replace(EDGE_UNDERSCORES, '');
  if (out.length === 0) throw new TypeError('tool name normalizes to nothing');
  if (name.length <= CACHE_NAME_MAX) {
    cache.set(name, out);
  }
  return out;
}
