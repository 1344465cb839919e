/**
 * HMAC-SHA-256 (RFC 2104, FIPS 180-4) of many short messages under one key, in plain JavaScript: the
 * same bytes as node:crypto's `createHmac('sha256', key)`, without a native call and two objects per
 * message. The user's words are a keyed hash per run of words, about 900 for a 40-word input
 * (./words.ts); through node:crypto those calls were half of an input decision's CPU (issue 41). The
 * key's inner and outer blocks are compressed once per key, so a message under 56 bytes costs two
 * compressions.
 * @packageDocumentation
 */
import { createHash } from 'node:crypto';

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

const IV = new Int32Array([
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
]);

const rotr = (x: number, n: number): number => (x >>> n) | (x << (32 - n));

/** One SHA-256 compression of the 64 bytes of `block` at `at` into `state`; `w` is scratch. */
function compress(state: Int32Array, block: Uint8Array, at: number, w: Int32Array): void {
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

/** The state after one 64-byte block of the key XOR `pad`. */
function padState(key: Uint8Array, pad: number, w: Int32Array): Int32Array {
  const block = new Uint8Array(64).fill(pad);
  for (let i = 0; i < key.length; i++) block[i] = (key[i] as number) ^ pad;
  const state = IV.slice();
  compress(state, block, 0, w);
  return state;
}

/**
 * Finishes a SHA-256 that already compressed one block (`from`), over `length` more bytes of `data`:
 * padding, the bit length (of 64 + length bytes), the digest into `out` (32 bytes).
 */
function finish(from: Int32Array, data: Uint8Array, length: number, out: Uint8Array, w: Int32Array, buf: Uint8Array) {
  const state = from.slice();
  const blocks = Math.ceil((length + 9) / 64);
  buf.fill(0, 0, blocks * 64);
  buf.set(data.subarray(0, length), 0);
  buf[length] = 0x80;
  const bits = (64 + length) * 8;
  const end = blocks * 64;
  buf[end - 4] = bits >>> 24;
  buf[end - 3] = bits >>> 16;
  buf[end - 2] = bits >>> 8;
  buf[end - 1] = bits;
  buf[end - 5] = Math.floor(bits / 2 ** 32);
  for (let i = 0; i < blocks; i++) compress(state, buf, i * 64, w);
  for (let i = 0; i < 8; i++) {
    const v = state[i] as number;
    out[i * 4] = v >>> 24;
    out[i * 4 + 1] = v >>> 16;
    out[i * 4 + 2] = v >>> 8;
    out[i * 4 + 3] = v;
  }
}

/**
 * A keyed function: HMAC-SHA-256 of a message under `key`, the digest's 32 bytes (a view reused by the
 * next call: copy what you keep). Messages of any length; keys over 64 bytes are hashed first (RFC 2104).
 * @internal
 */
export function hmacSha256(key: Uint8Array): (message: Uint8Array) => Uint8Array {
  const w = new Int32Array(64);
  const k = key.length > 64 ? new Uint8Array(createHash('sha256').update(key).digest()) : key;
  const inner = padState(k, 0x36, w);
  const outer = padState(k, 0x5c, w);
  const digest = new Uint8Array(32);
  let buf = new Uint8Array(128);
  return (message) => {
    if (buf.length < message.length + 72) buf = new Uint8Array(message.length + 136);
    finish(inner, message, message.length, digest, w, buf);
    finish(outer, digest, 32, digest, w, buf);
    return digest;
  };
}
