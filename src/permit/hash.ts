/**
 * The action hash that binds a permit to one tool call (docs/permits.md).
 * The only import of `canonicalize` (RFC 8785).
 * @packageDocumentation
 */
import canonicalize from 'canonicalize';
import { snapshotJsonObject } from '../internal/json.js';
import { nodeCrypto } from '../internal/runtime.js';
import { sha256Base64url } from '../internal/sha256.js';
import { normalizeToolName } from '../internal/tool-name.js';

/**
 * RFC 8785 (JSON Canonicalization Scheme) text of a JSON value.
 * @throws TypeError when the value is not JSON
 * @internal
 */
export function canonicalJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = canonicalize(value);
  } catch (cause) {
    throw new TypeError('value cannot be canonicalized as JSON', { cause });
  }
  if (text === undefined) throw new TypeError('value cannot be canonicalized as JSON');
  return text;
}

/** Node's one-shot `crypto.hash` (Node 20.12+, Deno, Bun), or undefined where there is none. */
const nodeHash = typeof nodeCrypto?.hash === 'function' ? nodeCrypto.hash : undefined;

/**
 * base64url (no padding) SHA-256 of a UTF-8 string: Node's one-shot `crypto.hash` where it is, else
 * the synchronous JavaScript SHA-256 of `internal/sha256.ts` (workerd, Vercel Edge: `actionHash` is
 * synchronous, WebCrypto's digest is not). Both give the same text. @internal
 */
export const sha256b64url: (text: string) => string = nodeHash
  ? (text) => nodeHash('sha256', text, 'base64url')
  : sha256Base64url;

/**
 * Computes `act_hash`: base64url (no padding) of SHA-256 over the UTF-8 of the RFC 8785 canonical
 * JSON of `{ "tool": normalizeToolName(tool), "args": args }`.
 *
 * @param tool - the tool name, in any spelling (it is normalized first)
 * @param args - the call's arguments: a plain object of JSON values
 * @returns 43 base64url characters
 * @throws TypeError when `tool` normalizes to nothing or `args` is not a plain object of JSON values
 *   (no `undefined`, BigInt, NaN/Infinity, functions, symbols, cycles, class instances, lone surrogates)
 * @remarks Key order does not matter (RFC 8785 sorts keys); `1` and `1.0` hash alike (both are the
 * number 1), while `1` and `"1"` do not.
 * @example
 * ```ts
 * actionHash('refundPayment', { orderId: 'ord_1842', amount: 129 });
 * ```
 */
export function actionHash(tool: string, args: Record<string, unknown>): string {
  const name = normalizeToolName(tool);
  return actionHashOfSnapshot(name, snapshotJsonObject(args));
}

/** A character that JSON escapes in a string: a quote, a backslash or a control character (RFC 8259 section 7). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f]/;

/**
 * RFC 8785 text of a snapshot (`snapshotJson`'s output: plain objects, dense arrays, finite numbers,
 * well-formed strings, no cycles), without {@link canonicalJson}'s checks, which the snapshot already
 * made. For such values it is the same text as `canonicalize` (RFC 8785 serializes strings and
 * numbers as `JSON.stringify` does and sorts keys by UTF-16 code units, as `Array.prototype.sort`
 * does); `test/property/canonical.property.test.ts` holds it to that.
 * @internal
 */
export function canonicalSnapshotJson(value: unknown): string {
  if (typeof value !== 'object' || value === null) return leafJson(value);
  if (Array.isArray(value)) {
    const n = value.length;
    if (n === 0) return '[]';
    let out = '[';
    for (let i = 0; i < n; i++) {
      const v: unknown = value[i];
      if (i > 0) out += ',';
      out += typeof v === 'object' && v !== null ? canonicalSnapshotJson(v) : leafJson(v);
    }
    return `${out}]`;
  }
  const keys = Object.keys(value);
  if (keys.length === 0) return '{}';
  sortKeys(keys);
  const obj = value as Record<string, unknown>;
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const v = obj[key];
    if (i > 0) out += ',';
    // A key with nothing to escape is its own JSON text between quotes (most keys): no JSON.stringify.
    out += NEEDS_ESCAPE.test(key) ? JSON.stringify(key) : `"${key}"`;
    out += ':';
    out += typeof v === 'object' && v !== null ? canonicalSnapshotJson(v) : leafJson(v);
  }
  return `${out}}`;
}

/** Keys up to which {@link sortKeys} sorts in place: `Array.prototype.sort` allocates work arrays per call. */
const INSERTION_SORT_MAX = 16;

/**
 * Sorts object keys by UTF-16 code units (RFC 8785 section 3.2.3), as `Array.prototype.sort` without a
 * comparator does for strings: in place for a few keys (most args), else with `sort`.
 */
function sortKeys(keys: string[]): void {
  const n = keys.length;
  if (n > INSERTION_SORT_MAX) {
    keys.sort();
    return;
  }
  for (let i = 1; i < n; i++) {
    const k = keys[i] as string;
    let j = i - 1;
    // `<` and `>` on strings compare UTF-16 code units, as the default sort does.
    while (j >= 0 && (keys[j] as string) > k) {
      keys[j + 1] = keys[j] as string;
      j--;
    }
    keys[j + 1] = k;
  }
}

/**
 * The JSON text of a snapshot's string, finite number, boolean or null (as `JSON.stringify` writes it).
 * A snapshot's string is well formed (no lone surrogate, which `JSON.stringify` would escape), so one
 * with no quote, backslash or control character is its own JSON text between quotes: about 40 ns
 * less than `JSON.stringify` a string (three strings a call in the bench's args).
 */
function leafJson(v: unknown): string {
  // A snapshot's numbers are finite: `String` is then Number::toString, which `JSON.stringify` uses.
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string') return NEEDS_ESCAPE.test(v) ? JSON.stringify(v) : `"${v}"`;
  return v === true ? 'true' : v === false ? 'false' : 'null';
}

/**
 * `act_hash` by the reference implementation (`canonicalize`, with its checks), for args that are not
 * a snapshot this process took. The dev PDP signs with it, so that every end-to-end test compares the
 * client's fast path ({@link actionHashOfSnapshot}) with the reference.
 * @throws TypeError when `{ tool, args }` is not JSON
 * @internal
 */
export function referenceActionHash(normalizedTool: string, args: Record<string, unknown>): string {
  return sha256b64url(canonicalJson({ tool: normalizedTool, args }));
}

/**
 * `actionHash` for args already snapshotted (skips the copy and the checks the snapshot made): the
 * canonical text of `{ tool, args }` is `{"args":...,"tool":...}` ("args" sorts before "tool"). @internal
 */
export function actionHashOfSnapshot(normalizedTool: string, snapshot: Record<string, unknown>): string {
  return actionHashOfCanonical(normalizedTool, canonicalSnapshotJson(snapshot));
}

/**
 * `actionHash` from the RFC 8785 text of the args ({@link canonicalSnapshotJson} of a snapshot), for
 * a caller that already wrote it (the client sends that text and hashes it once). The tool is written
 * between quotes as it is: a normalized name is `[a-z0-9_]` only, which JSON never escapes (a name
 * that is not normalized is escaped, so the text stays RFC 8785 whatever comes in). @internal
 */
export function actionHashOfCanonical(normalizedTool: string, argsJson: string): string {
  return sha256b64url(`{"args":${argsJson},"tool":${toolNameJson(normalizedTool)}}`);
}

/** A normalized tool name (`normalizeToolName`'s output): nothing JSON escapes. */
const NORMALIZED_NAME = /^[a-z0-9_]+$/;

/**
 * The JSON text of a tool name: between quotes as it is for a normalized name (no `JSON.stringify`,
 * about 70 ns a call), `JSON.stringify` for anything else. @internal
 */
export function toolNameJson(name: string): string {
  return NORMALIZED_NAME.test(name) ? `"${name}"` : JSON.stringify(name);
}
