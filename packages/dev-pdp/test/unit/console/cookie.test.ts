import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { isHttps, SESSION_COOKIE, sessionCookie, sessionIdOf } from '../../../src/console/cookie.js';

const ID = 'a'.repeat(43);
const req = (headers: Record<string, string>, encrypted = false) =>
  ({ headers, socket: { encrypted } }) as unknown as IncomingMessage;

describe('the console session cookie', () => {
  it('is HttpOnly, SameSite=Strict, scoped to /console, and Secure only over HTTPS', () => {
    const plain = sessionCookie(ID, false, 3600);
    expect(plain).toBe(`${SESSION_COOKIE}=${ID}; Path=/console; HttpOnly; SameSite=Strict; Max-Age=3600`);
    expect(sessionCookie(ID, true, 3600)).toMatch(/; Secure$/);
  });

  it('clearing it sets an empty value with Max-Age=0', () => {
    expect(sessionCookie(undefined, false, 3600)).toBe(
      `${SESSION_COOKIE}=; Path=/console; HttpOnly; SameSite=Strict; Max-Age=0`,
    );
  });

  it('reads the session id among other cookies; a malformed or doubled one reads as none', () => {
    expect(sessionIdOf(req({ cookie: `x=1; ${SESSION_COOKIE}=${ID}; y=2` }))).toBe(ID);
    expect(sessionIdOf(req({ cookie: `${SESSION_COOKIE}=short` }))).toBeUndefined();
    expect(
      sessionIdOf(req({ cookie: `${SESSION_COOKIE}=${ID}; ${SESSION_COOKIE}=${'b'.repeat(43)}` })),
    ).toBeUndefined();
    expect(sessionIdOf(req({}))).toBeUndefined();
  });

  it('HTTPS is a TLS socket or a proxy saying x-forwarded-proto: https', () => {
    expect(isHttps(req({}, true))).toBe(true);
    expect(isHttps(req({ 'x-forwarded-proto': 'https, http' }))).toBe(true);
    expect(isHttps(req({ 'x-forwarded-proto': 'http' }))).toBe(false);
    expect(isHttps(req({}))).toBe(false);
  });
});
