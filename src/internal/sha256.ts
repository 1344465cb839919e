/**
 * SHA-256 (FIPS 180-4) in plain JavaScript, synchronous, for runtimes without `node:crypto`
 * (workerd, Vercel Edge): `actionHash` is synchronous, and WebCrypto's `digest` is not. Where
 * `node:crypto` is, `permit/hash.ts` uses it instead (OpenSSL, several times faster).
 * `test/unit/internal/sha256.test.ts` holds it to `node:crypto` on random input.
 * @internal
 */
import { base64url } from './base64url.js';

const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

const utf8 = new TextEncoder();

/** The message padded to a whole number of 64-byte blocks, with its bit length at the end (section 5.1.1). */
function padded(bytes: Uint8Array): Uint8Array {
  const n = bytes.length;
  const total = Math.ceil((n + 9) / 64) * 64;
  const out = new Uint8Array(total);
  out.set(bytes);
  out[n] = 0x80;
  const view = new DataView(out.buffer);
  view.setUint32(total - 8, Math.floor(n / 0x20000000));
  view.setUint32(total - 4, (n << 3) >>> 0);
  return out;
}

const rotr = (x: number, n: number): number => (x >>> n) | (x << (32 - n));

/** SHA-256's initial state (section 5.3.3), to copy (`SHA256_IV.slice()`) before compressing into it. */
export const SHA256_IV: Readonly<Int32Array> = new Int32Array([
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
]);

/**
 * One SHA-256 compression (section 6.2.2) of the 64 bytes of `block` at `at` into `state` (8 words);
 * `w` is a 64-word scratch array the caller may reuse. The one compression of the SDK's SHA-256 and
 * of the dev PDP's keyed hashes (`agent-pep/internal`), which precompute a key's blocks with it.
 */
export function sha256Compress(state: Int32Array, block: Uint8Array, at: number, w: Int32Array): void {
  for (let i = 0; i < 16; i++) {
    const j = at + i * 4;
    w[i] =
      ((block[j] as number) << 24) |
      ((block[j + 1] as number) << 16) |
      ((block[j + 2] as number) << 8) |
      (block[j + 3] as number);
  }
  for (let i = 16; i < 64; i++) {
    const a = w[i - 15] as number;
    const b = w[i - 2] as number;
    const s0 = rotr(a, 7) ^ rotr(a, 18) ^ (a >>> 3);
    const s1 = rotr(b, 17) ^ rotr(b, 19) ^ (b >>> 10);
    w[i] = ((w[i - 16] as number) + s0 + (w[i - 7] as number) + s1) | 0;
  }
  let a = state[0] as number;
  let b = state[1] as number;
  let c = state[2] as number;
  let d = state[3] as number;
  let e = state[4] as number;
  let f = state[5] as number;
  let g = state[6] as number;
  let h = state[7] as number;
  for (let i = 0; i < 64; i++) {
    const t1 =
      (h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + (K[i] as number) + (w[i] as number)) | 0;
    const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  state[0] = ((state[0] as number) + a) | 0;
  state[1] = ((state[1] as number) + b) | 0;
  state[2] = ((state[2] as number) + c) | 0;
  state[3] = ((state[3] as number) + d) | 0;
  state[4] = ((state[4] as number) + e) | 0;
  state[5] = ((state[5] as number) + f) | 0;
  state[6] = ((state[6] as number) + g) | 0;
  state[7] = ((state[7] as number) + h) | 0;
}

/** SHA-256 of `bytes`: 32 bytes. */
export function sha256(bytes: Uint8Array): Uint8Array {
  const state = SHA256_IV.slice();
  const msg = padded(bytes);
  const w = new Int32Array(64);
  for (let off = 0; off < msg.length; off += 64) sha256Compress(state, msg, off, w);
  const out = new Uint8Array(32);
  const view = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) view.setInt32(i * 4, state[i] as number);
  return out;
}

/** base64url (no padding) SHA-256 of the UTF-8 of `text`. A lone surrogate encodes as U+FFFD (TextEncoder). */
export function sha256Base64url(text: string): string {
  return base64url(sha256(utf8.encode(text)));
}
