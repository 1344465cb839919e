/**
 * One rule joins a base URL and a path (src/internal/url.ts; issue 43, item 7): a trailing `/` on
 * the base never gives `//`, whatever the path's leading `/`s.
 */
import { describe, expect, it } from 'vitest';
import { joinUrl, trimTrailingSlashes } from '../../../src/internal/url.js';

describe('joinUrl', () => {
  it.each([
    ['http://h:1', '/.well-known/jwks.json', 'http://h:1/.well-known/jwks.json'],
    ['http://h:1/', '/.well-known/jwks.json', 'http://h:1/.well-known/jwks.json'],
    ['http://h:1//', '.well-known/jwks.json', 'http://h:1/.well-known/jwks.json'],
    ['http://h:1/pdp/', '//api/policy/authorize', 'http://h:1/pdp/api/policy/authorize'],
    ['', '/api/policy/authorize', '/api/policy/authorize'],
    ['/', '/access/v1/evaluation', '/access/v1/evaluation'],
  ])('%s + %s is %s', (base, path, joined) => {
    expect(joinUrl(base, path)).toBe(joined);
  });

  it('trims only trailing slashes', () => {
    expect(trimTrailingSlashes('http://h:1/a/b//')).toBe('http://h:1/a/b');
    expect(trimTrailingSlashes('/')).toBe('');
  });
});
