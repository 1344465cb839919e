import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { csrfPasses, newToken, sameToken } from '../../../src/console/csrf.js';

const TOKEN = newToken();
const req = (headers: Record<string, string>) =>
  ({ headers: { host: '127.0.0.1:8787', ...headers } }) as unknown as IncomingMessage;
const form = (fields: Record<string, string>) => new URLSearchParams(fields);

describe('CSRF tokens', () => {
  it('fresh tokens are 43 base64url characters and differ', () => {
    expect(TOKEN).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(newToken()).not.toBe(TOKEN);
  });

  it('sameToken: only the exact token; an empty one never matches', () => {
    expect(sameToken(TOKEN, TOKEN)).toBe(true);
    expect(sameToken(`${TOKEN}x`, TOKEN)).toBe(false);
    expect(sameToken('', '')).toBe(false);
    expect(sameToken(undefined, TOKEN)).toBe(false);
  });

  it('a state change passes with the token in the form or the header, from this origin', () => {
    expect(csrfPasses(req({}), form({ csrf: TOKEN }), TOKEN)).toBe(true);
    expect(csrfPasses(req({ 'x-csrf-token': TOKEN, origin: 'http://127.0.0.1:8787' }), form({}), TOKEN)).toBe(true);
    expect(csrfPasses(req({ 'sec-fetch-site': 'same-origin' }), form({ csrf: TOKEN }), TOKEN)).toBe(true);
  });

  it('is refused without the token, whatever the origin', () => {
    expect(csrfPasses(req({ origin: 'http://127.0.0.1:8787' }), form({}), TOKEN)).toBe(false);
    expect(csrfPasses(req({ 'sec-fetch-site': 'same-origin' }), form({ csrf: 'guess' }), TOKEN)).toBe(false);
    // a token sent twice is not one token
    expect(
      csrfPasses(
        req({}),
        new URLSearchParams([
          ['csrf', TOKEN],
          ['csrf', TOKEN],
        ]),
        TOKEN,
      ),
    ).toBe(false);
  });

  it('is refused from another origin, an opaque origin or a cross-site fetch even with the token', () => {
    expect(csrfPasses(req({ origin: 'http://127.0.0.1:9999' }), form({ csrf: TOKEN }), TOKEN)).toBe(false);
    expect(csrfPasses(req({ origin: 'null' }), form({ csrf: TOKEN }), TOKEN)).toBe(false);
    expect(csrfPasses(req({ 'sec-fetch-site': 'cross-site' }), form({ csrf: TOKEN }), TOKEN)).toBe(false);
    expect(csrfPasses(req({ 'sec-fetch-site': 'same-site' }), form({ csrf: TOKEN }), TOKEN)).toBe(false);
  });
});
