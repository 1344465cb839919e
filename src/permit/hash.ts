/**
 * The action hash that binds a permit to one tool call (CONTRACT.md section 4).
 * The only import of `canonicalize` (RFC 8785).
 * @packageDocumentation
 */
import { hash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { snapshotJsonObject } from '../internal/json.js';
import { normalizeToolName } from './normalize.js';

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

/** base64url (no padding) SHA-256 of a UTF-8 string (one-shot `crypto.hash`, Node 20.12+). @internal */
export function sha256b64url(text: string): string {
  return hash('sha256', text, 'base64url');
}

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
  const snapshot = snapshotJsonObject(args);
  return sha256b64url(canonicalJson({ tool: name, args: snapshot }));
}

/**
 * `actionHash` for args already snapshotted (skips the copy). @internal
 */
export function actionHashOfSnapshot(normalizedTool: string, snapshot: Record<string, unknown>): string {
  return sha256b64url(canonicalJson({ tool: normalizedTool, args: snapshot }));
}
