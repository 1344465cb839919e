import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createPep, DEFAULTS, type PepOptions } from '../../src/index.js';
import { resolveOptions } from '../../src/options.js';
import { VERSION } from '../../src/version.js';

const ok: PepOptions = { pdpUrl: 'http://127.0.0.1:8787', agentId: 'support-ai', session: 'sess_demo' };

describe('createPep options', () => {
  it('applies the documented defaults', () => {
    const r = resolveOptions(ok);
    expect(r.timeoutMs).toBe(2000);
    expect(r.attemptTimeoutMs).toBe(2000);
    expect(r.retries).toBe(2);
    expect(r.maxResponseBytes).toBe(65536);
    expect(r.simulated).toBe(false);
    expect(r.path).toBe('/api/policy/authorize');
    expect(DEFAULTS.permitAlgorithms).toEqual(['EdDSA', 'ES256']);
    expect(Object.isFrozen(DEFAULTS)).toBe(true);
  });

  const bad: [string, Partial<Record<keyof PepOptions, unknown>>][] = [
    ['missing pdpUrl', { pdpUrl: undefined }],
    ['non-http pdpUrl', { pdpUrl: 'ftp://pdp.example' }],
    ['file pdpUrl', { pdpUrl: 'file:///etc/passwd' }],
    ['garbage pdpUrl', { pdpUrl: 'not a url' }],
    ['pdpUrl with credentials', { pdpUrl: 'http://user:pw@127.0.0.1' }],
    ['pdpUrl with a query', { pdpUrl: 'http://127.0.0.1/?x=1' }],
    ['empty agentId', { agentId: '' }],
    ['blank agentId', { agentId: '   ' }],
    ['non-string agentId', { agentId: 5 }],
    ['empty session', { session: '' }],
    ['negative timeoutMs', { timeoutMs: -1 }],
    ['zero timeoutMs', { timeoutMs: 0 }],
    ['NaN timeoutMs', { timeoutMs: Number.NaN }],
    ['fractional timeoutMs', { timeoutMs: 1.5 }],
    ['negative attemptTimeoutMs', { attemptTimeoutMs: -5 }],
    ['negative retries', { retries: -1 }],
    ['too many retries', { retries: 1000 }],
    ['string retries', { retries: '2' }],
    ['zero maxResponseBytes', { maxResponseBytes: 0 }],
    ['empty apiKey', { apiKey: '' }],
    ['apiKey with a newline', { apiKey: 'a\nb' }],
    ['permits without keys', { permits: { issuer: 'x' } }],
    ['permits without issuer', { permits: { keys: 'http://127.0.0.1/jwks' } }],
    ['permits with a non-http keys URL', { permits: { keys: 'ftp://x/jwks', issuer: 'x' } }],
    ['permits allowing none', { permits: { keys: { keys: [] }, issuer: 'x', algorithms: ['none'] } }],
    ['permits allowing HS256', { permits: { keys: { keys: [] }, issuer: 'x', algorithms: ['HS256'] } }],
    ['permits true', { permits: true }],
    ['non-boolean simulated', { simulated: 'yes' }],
    ['a dispatcher that is not one', { dispatcher: {} }],
    ['a non-function onDecision', { onDecision: 'log' }],
    ['an unknown option (a typo of timeoutMs)', { timeout: 5 } as never],
    ['an unknown option (a typo of retries)', { retry: 0 } as never],
  ];
  it.each(bad)('throws TypeError synchronously for %s', (_label, patch) => {
    expect(() => createPep({ ...ok, ...patch } as PepOptions)).toThrow(TypeError);
  });

  it('never echoes the apiKey in the error', () => {
    try {
      createPep({ ...ok, apiKey: 'sk live\nSECRET' });
      expect.unreachable();
    } catch (e) {
      expect((e as Error).message).not.toContain('SECRET');
    }
  });

  it('throws TypeError at construction for a permits key the checker refuses (a secret JWK)', () => {
    const secret = { keys: [{ kty: 'oct', k: 'c2VjcmV0', kid: 'k1', alg: 'HS256' }] };
    expect(() => createPep({ ...ok, permits: { keys: secret, issuer: 'x' } })).toThrow(TypeError);
  });

  it('throws for non-object options', () => {
    expect(() => createPep(undefined as unknown as PepOptions)).toThrow(TypeError);
  });

  it('accepts a URL object, https, a base path and permits: false', () => {
    expect(resolveOptions({ ...ok, pdpUrl: new URL('https://pdp.example/base/') }).path).toBe(
      '/base/api/policy/authorize',
    );
    expect(resolveOptions({ ...ok, permits: false }).permits).toBe(false);
  });

  it('VERSION matches package.json', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(VERSION).toBe(pkg.version);
  });
});
