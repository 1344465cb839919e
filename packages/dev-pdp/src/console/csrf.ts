/**
 * CSRF tokens: one per console session, carried by every state-changing request (a form's `csrf`
 * field, or the `x-csrf-token` header) and compared in constant time; a request without the session's
 * token is refused whatever its origin (docs/dev-pdp.md, "The reviewer console").
 * @packageDocumentation
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** A fresh token: 32 random bytes, base64url. @internal */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/** Whether `given` is the expected token (constant time over digests; an empty token never matches). @internal */
export function sameToken(given: string | undefined, expected: string): boolean {
  if (typeof given !== 'string' || given.length === 0 || expected.length === 0) return false;
  return timingSafeEqual(digest(given), digest(expected));
}

/** The token a request carries: the `x-csrf-token` header, else the form's `csrf` field. @internal */
export function tokenOf(req: IncomingMessage, form: URLSearchParams): string | undefined {
  const header = req.headers['x-csrf-token'];
  if (typeof header === 'string') return header;
  const fields = form.getAll('csrf');
  return fields.length === 1 ? fields[0] : undefined;
}

/**
 * Whether a request may change state: its token matches the session's, and, when the browser says
 * where it comes from (`Origin`, `Sec-Fetch-Site`), that is this server.
 * @internal
 */
export function csrfPasses(req: IncomingMessage, form: URLSearchParams, expected: string): boolean {
  if (!sameToken(tokenOf(req, form), expected)) return false;
  const site = req.headers['sec-fetch-site'];
  if (typeof site === 'string' && site !== 'same-origin' && site !== 'none') return false;
  const origin = req.headers.origin;
  if (typeof origin === 'string' && origin !== 'null') {
    try {
      if (new URL(origin).host !== req.headers.host) return false;
    } catch {
      return false;
    }
  } else if (origin === 'null') {
    return false;
  }
  return true;
}
