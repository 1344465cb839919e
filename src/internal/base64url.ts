/**
 * base64url (RFC 4648 section 5, no padding) without `Buffer`, for runtimes that have none (workerd,
 * Vercel Edge). Where `Buffer` is, callers may use it; these give the same bytes.
 * @internal
 */

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** base64url without padding (RFC 4648 section 5) of `bytes`. */
export function base64url(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number);
    out += B64URL[n >>> 18] + (B64URL[(n >>> 12) & 63] as string) + B64URL[(n >>> 6) & 63] + B64URL[n & 63];
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = (bytes[i] as number) << 16;
    out += (B64URL[n >>> 18] as string) + B64URL[(n >>> 12) & 63];
  } else if (rest === 2) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8);
    out += (B64URL[n >>> 18] as string) + B64URL[(n >>> 12) & 63] + B64URL[(n >>> 6) & 63];
  }
  return out;
}

const DECODE: Int8Array = (() => {
  const t = new Int8Array(128).fill(-1);
  for (let i = 0; i < B64URL.length; i++) t[B64URL.charCodeAt(i)] = i;
  return t;
})();

/**
 * The bytes of a base64url string (no padding, RFC 7515 section 2), or undefined when it is not one:
 * a character outside the alphabet, or a length that leaves one character over. Bits left over at
 * the end are dropped, as `Buffer.from(text, 'base64url')` drops them.
 */
export function fromBase64url(text: string): Uint8Array | undefined {
  const n = text.length;
  if (n % 4 === 1) return undefined;
  const out = new Uint8Array(Math.floor((n * 3) / 4));
  let acc = 0;
  let bits = 0;
  let o = 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    const v = c < 128 ? (DECODE[c] as number) : -1;
    if (v < 0) return undefined;
    acc = ((acc << 6) | v) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >>> bits) & 0xff;
    }
  }
  return out;
}
