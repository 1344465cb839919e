/**
 * The console's session cookie: read from the `Cookie` header, written `HttpOnly; SameSite=Strict`
 * (and `Secure` over HTTPS) with the path `/console` (docs/dev-pdp.md, "The reviewer console").
 * @packageDocumentation
 */
import type { IncomingMessage } from 'node:http';

/** The cookie's name. @internal */
export const SESSION_COOKIE = 'agent_pep_console';

/** What a session id looks like: 43 base64url characters (32 random bytes). */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/**
 * The session id the request's cookie holds, or undefined (no cookie, or a value that is not a session
 * id; a cookie sent twice is read as none).
 * @internal
 */
export function sessionIdOf(req: IncomingMessage): string | undefined {
  const header = req.headers.cookie;
  if (typeof header !== 'string') return undefined;
  let found: string | undefined;
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq < 0 || pair.slice(0, eq).trim() !== SESSION_COOKIE) continue;
    if (found !== undefined) return undefined;
    found = pair.slice(eq + 1).trim();
  }
  return found !== undefined && SESSION_ID.test(found) ? found : undefined;
}

/** Whether the request came over HTTPS (a TLS socket, or a proxy that says so). @internal */
export function isHttps(req: IncomingMessage): boolean {
  if ((req.socket as { encrypted?: boolean }).encrypted === true) return true;
  const forwarded = req.headers['x-forwarded-proto'];
  return typeof forwarded === 'string' && forwarded.split(',')[0]?.trim().toLowerCase() === 'https';
}

/**
 * The `Set-Cookie` value for a session id (`undefined` clears it): `HttpOnly; SameSite=Strict;
 * Path=/console`, `Secure` when `secure`, and `Max-Age` in seconds.
 * @internal
 */
export function sessionCookie(id: string | undefined, secure: boolean, maxAgeSec: number): string {
  const parts = [
    `${SESSION_COOKIE}=${id ?? ''}`,
    'Path=/console',
    'HttpOnly',
    'SameSite=Strict',
    `Max-Age=${id === undefined ? 0 : maxAgeSec}`,
  ];
  if (secure) parts.push('Secure');
  return parts.join('; ');
}
