/**
 * The user's own words, for the `fromUser` grant constraint (docs/dev-pdp.md, "Intent grants"): input
 * text is normalized (Unicode NFKC, then case folded), cut into words (runs of letters and digits), and
 * every run of up to {@link MAX_RUN} consecutive words is kept as a keyed hash, written two ways (words
 * joined by one space, and joined with nothing, so "DE89 3704" and "DE893704" meet). A value occurs in
 * the user's words when its own words, joined either way, are one of those runs. Never plaintext.
 * @packageDocumentation
 */
import { hmacSha256 } from './hmac.js';

/** Longest run of words kept, and the most words a `fromUser` value may have. @internal */
export const MAX_RUN = 12;

/** Most word hashes a session keeps; the oldest are dropped past it. @internal */
export const MAX_WORDS = 4096;

/** NFKC, then case folded (lower case of the upper case, so that `ß` and `SS` meet). @internal */
export function foldText(text: string): string {
  return text.normalize('NFKC').toUpperCase().toLowerCase();
}

/** The words of a text, folded: runs of letters, marks and digits. @internal */
export function wordsOf(text: string): string[] {
  return foldText(text).match(/[\p{L}\p{M}\p{N}]+/gu) ?? [];
}

/** One keyed function per secret (./hmac.ts: the bytes of node:crypto's HMAC-SHA-256, at a fraction of the cost). */
const hmacs = new WeakMap<Uint8Array, (message: Uint8Array) => Uint8Array>();
const encoder = new TextEncoder();

/** The keyed hash of one run: base64url of HMAC-SHA-256(key, "w" NUL run), its first 22 characters. @internal */
export function runHash(key: Uint8Array, run: string): string {
  let hmac = hmacs.get(key);
  if (hmac === undefined) {
    hmac = hmacSha256(key);
    hmacs.set(key, hmac);
  }
  const digest = hmac(encoder.encode(`w\u0000${run}`));
  // 18 bytes are 24 characters; the first 22 are those of the whole digest's
  return Buffer.from(digest.buffer, digest.byteOffset, 18).toString('base64url').slice(0, 22);
}

/** The hashes of every run of up to {@link MAX_RUN} words of `text`, each way of joining, each once. @internal */
export function wordRuns(key: Uint8Array, text: string): string[] {
  const words = wordsOf(text);
  const out = new Set<string>();
  for (let i = 0; i < words.length; i++) {
    for (let n = 1; n <= MAX_RUN && i + n <= words.length; n++) {
      const run = words.slice(i, i + n);
      out.add(runHash(key, run.join(' ')));
      if (n > 1) out.add(runHash(key, run.join('')));
    }
  }
  return [...out];
}

/** The words kept after adding `added`: each once, the newest {@link MAX_WORDS}. @internal */
export function mergeWords(kept: readonly string[], added: readonly string[]): string[] {
  if (added.length === 0) return [...kept];
  const set = new Set(kept);
  for (const hash of added) {
    set.delete(hash);
    set.add(hash);
  }
  const all = [...set];
  return all.length > MAX_WORDS ? all.slice(all.length - MAX_WORDS) : all;
}

/**
 * True when `value` (a string, or a finite number written in decimal) occurs in the user's words: its
 * own words, joined by a space or with nothing, are a kept run.
 * @internal
 */
export function occursInWords(key: Uint8Array, words: ReadonlySet<string>, value: unknown): boolean {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'number' && Number.isFinite(value)) text = String(value);
  else return false;
  const own = wordsOf(text);
  if (own.length === 0 || own.length > MAX_RUN) return false;
  return words.has(runHash(key, own.join(' '))) || words.has(runHash(key, own.join('')));
}
