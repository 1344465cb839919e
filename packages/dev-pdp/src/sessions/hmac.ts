/**
 * HMAC-SHA-256 (RFC 2104, FIPS 180-4) of many short messages under one key, in plain JavaScript: the
 * same bytes as node:crypto's `createHmac('sha256', key)`, without a native call and two objects per
 * message. The user's words are a keyed hash per run of words, about 900 for a 40-word input
 * (./words.ts); through node:crypto those calls were half of an input decision's CPU (issue 41). The
 * key's inner and outer blocks are compressed once per key, so a message under 56 bytes costs two
 * compressions. The compression is the SDK's (`sha256Compress`, agent-pep/internal).
 * @packageDocumentation
 */
import { SHA256_IV, sha256, sha256Compress } from 'agent-pep/internal';

/** The state after one 64-byte block of the key XOR `pad`. */
function padState(key: Uint8Array, pad: number, w: Int32Array): Int32Array {
  const block = new Uint8Array(64).fill(pad);
  for (let i = 0; i < key.length; i++) block[i] = (key[i] as number) ^ pad;
  const state = SHA256_IV.slice();
  sha256Compress(state, block, 0, w);
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
  for (let i = 0; i < blocks; i++) sha256Compress(state, buf, i * 64, w);
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
  const k = key.length > 64 ? sha256(key) : key;
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
