/**
 * Decoding a permit before any key is touched (checks 1 to 4 of the verifier): the compact JWS
 * shape, the `alg` allow-list, the `kid`, a JSON payload. Nothing here is trusted yet.
 * @internal
 */
import { fromBase64url } from '../internal/base64url.js';
import { nonEmptyString, refuse } from './refuse.js';

/** Longest compact JWS accepted, in characters; longer input is `permit_malformed` unread. */
export const MAX_PERMIT_LENGTH = 16_384;

const B64URL = /^[A-Za-z0-9_-]*$/;
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
/** Node's, Deno's and Bun's `Buffer` (the faster decode); undefined on workerd and Vercel Edge. */
const NodeBuffer = (globalThis as { Buffer?: typeof Buffer }).Buffer;

/** The bytes of a base64url segment already checked against the alphabet. */
function segmentBytes(segment: string): Uint8Array {
  return NodeBuffer ? NodeBuffer.from(segment, 'base64url') : (fromBase64url(segment) ?? new Uint8Array(0));
}

/** A permit split and decoded, not yet verified. */
export interface DecodedPermit {
  /** The protected header: a string `alg` (in the allow-list) and a string `kid`. */
  header: Record<string, unknown> & { alg: string; kid: string };
  /** The payload, a JSON object. */
  payload: Record<string, unknown>;
  /** The three base64url segments, as jose's key resolvers take them. */
  segments: { protected: string; payload: string; signature: string };
}

/** A base64url segment holding the UTF-8 of a JSON object, or undefined. */
export function decodeJsonObject(segment: string): Record<string, unknown> | undefined {
  if (segment.length === 0 || !B64URL.test(segment) || segment.length % 4 === 1) return undefined;
  try {
    const v = JSON.parse(utf8.decode(segmentBytes(segment))) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Checks 1 to 4: shape, `alg` allow-list, `kid`, payload; no key is touched.
 * @param allowed - the allowed `alg` values (never `none` or HMAC: the verifier's options refuse them)
 * @param payload - `decodeJsonObject` of this permit's payload segment, when the caller already made it
 *   (the client's rule 5); every other check runs as always
 * @throws PermitVerificationError `permit_missing`, `permit_malformed` or `permit_alg_not_allowed`
 */
export function decodePermit(
  permit: unknown,
  allowed: ReadonlySet<string>,
  payload: Record<string, unknown> | undefined = undefined,
): DecodedPermit {
  if (typeof permit !== 'string' || permit.trim().length === 0)
    throw refuse('permit_missing', 'no permit was presented');
  if (permit.length > MAX_PERMIT_LENGTH) throw refuse('permit_malformed', 'the permit is too long');
  const parts = permit.split('.');
  if (parts.length !== 3) throw refuse('permit_malformed', 'not a compact JWS (three segments)');
  const [h, p, s] = parts as [string, string, string];
  if (!B64URL.test(s) || s.length % 4 === 1) throw refuse('permit_malformed', 'the signature segment is not base64url');
  const header = decodeJsonObject(h);
  if (header === undefined) throw refuse('permit_malformed', 'the protected header is not a base64url JSON object');
  if (!nonEmptyString(header.alg)) throw refuse('permit_malformed', 'the protected header has no alg');
  // Check 2 (the header's shape) before check 3 (the allow-list), in the order docs/permits.md gives.
  if ('crit' in header || 'b64' in header || 'zip' in header) {
    throw refuse('permit_malformed', 'the protected header uses crit, b64 or zip, which permits never do');
  }
  if (!allowed.has(header.alg)) throw refuse('permit_alg_not_allowed', 'the alg is not in the allow-list');
  if (!nonEmptyString(header.kid)) throw refuse('permit_malformed', 'the protected header has no kid');
  const claims = payload ?? decodeJsonObject(p);
  if (claims === undefined) throw refuse('permit_malformed', 'the payload is not a base64url JSON object');
  return {
    header: header as DecodedPermit['header'],
    payload: claims,
    segments: { protected: h, payload: p, signature: s },
  };
}
