import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createPep, DEFAULTS, type PepOptions } from '../../../src/index.js';
import { resolveOptions } from '../../../src/options/pep.js';
import { VERSION } from '../../../src/version.js';
import { expectOptionError } from '../../support/options.js';

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

  const bad: [string, Record<string, unknown>, string][] = [
    ['missing pdpUrl', { pdpUrl: undefined }, 'pdpUrl'],
    ['non-http pdpUrl', { pdpUrl: 'ftp://pdp.example' }, 'pdpUrl'],
    ['file pdpUrl', { pdpUrl: 'file:///etc/passwd' }, 'pdpUrl'],
    ['garbage pdpUrl', { pdpUrl: 'not a url' }, 'pdpUrl'],
    ['pdpUrl with credentials', { pdpUrl: 'http://user:pw@127.0.0.1' }, 'pdpUrl'],
    ['pdpUrl with a query', { pdpUrl: 'http://127.0.0.1/?x=1' }, 'pdpUrl'],
    ['empty agentId', { agentId: '' }, 'agentId'],
    ['blank agentId', { agentId: '   ' }, 'agentId'],
    ['non-string agentId', { agentId: 5 }, 'agentId'],
    ['agentId with a lone surrogate', { agentId: 'a\ud800' }, 'agentId'],
    ['empty session', { session: '' }, 'session'],
    ['negative timeoutMs', { timeoutMs: -1 }, 'timeoutMs'],
    ['zero timeoutMs', { timeoutMs: 0 }, 'timeoutMs'],
    ['NaN timeoutMs', { timeoutMs: Number.NaN }, 'timeoutMs'],
    ['fractional timeoutMs', { timeoutMs: 1.5 }, 'timeoutMs'],
    ['timeoutMs past what a timer holds (2^31 ms)', { timeoutMs: 2 ** 31 }, 'timeoutMs'],
    ['negative attemptTimeoutMs', { attemptTimeoutMs: -5 }, 'attemptTimeoutMs'],
    ['attemptTimeoutMs past what a timer holds', { attemptTimeoutMs: 2 ** 31 }, 'attemptTimeoutMs'],
    ['negative retries', { retries: -1 }, 'retries'],
    ['too many retries', { retries: 1000 }, 'retries'],
    ['string retries', { retries: '2' }, 'retries'],
    ['zero maxResponseBytes', { maxResponseBytes: 0 }, 'maxResponseBytes'],
    ['zero connections', { connections: 0 }, 'connections'],
    ['empty apiKey', { apiKey: '' }, 'apiKey'],
    ['apiKey with a newline', { apiKey: 'a\nb' }, 'apiKey'],
    ['permits true', { permits: true }, 'permits'],
    [
      'permits with an unknown key (a typo of algorithms)',
      { permits: { keys: { keys: [] }, issuer: 'x', algoritms: ['EdDSA'] } },
      'permits.algoritms',
    ],
    ['non-boolean simulated', { simulated: 'yes' }, 'simulated'],
    ['non-boolean requireEcho', { requireEcho: 1 }, 'requireEcho'],
    ['a dispatcher that is not one', { dispatcher: {} }, 'dispatcher'],
    ['a non-function onDecision', { onDecision: 'log' }, 'onDecision'],
    ['interceptors not an array', { interceptors: {} }, 'interceptors'],
    [
      'an interceptor without a name',
      { interceptors: [{ before: () => ({ action: 'proceed' }) }] },
      'interceptors.0.name',
    ],
    [
      'an interceptor with an unknown stage',
      { interceptors: [{ name: 'x', stages: ['tool'], before: () => ({ action: 'proceed' }) }] },
      'interceptors.0.stages',
    ],
    ['an interceptor with neither before nor after', { interceptors: [{ name: 'x' }] }, 'interceptors.0'],
    [
      'an after interceptor off the action stage',
      { interceptors: [{ name: 'x', stages: ['input'], after: () => ({ action: 'proceed' }) }] },
      'interceptors.0.after',
    ],
    ['an unknown option (a typo of timeoutMs)', { timeout: 5 }, 'timeout'],
    ['an unknown option (a typo of retries)', { retry: 0 }, 'retry'],
  ];
  it.each(bad)('throws TypeError synchronously for %s, naming the option in err.option', (_label, patch, option) => {
    let caught: unknown;
    try {
      createPep({ ...ok, ...patch } as PepOptions);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(TypeError);
    expect((caught as { option?: unknown }).option).toBe(option);
  });

  const badPermits: [string, Record<string, unknown>, string][] = [
    ['permits without keys', { issuer: 'x' }, 'permits.keys'],
    ['permits without issuer', { keys: 'http://127.0.0.1/jwks' }, 'permits.issuer'],
    ['permits with a non-http keys URL', { keys: 'ftp://x/jwks', issuer: 'x' }, 'permits.keys'],
    ['permits allowing none', { keys: { keys: [] }, issuer: 'x', algorithms: ['none'] }, 'permits.algorithms'],
    ['permits allowing HS256', { keys: { keys: [] }, issuer: 'x', algorithms: ['HS256'] }, 'permits.algorithms'],
    [
      'a negative clock tolerance',
      { keys: { keys: [] }, issuer: 'x', clockToleranceSec: -1 },
      'permits.clockToleranceSec',
    ],
  ];
  it.each(badPermits)('throws TypeError for %s, naming permits.<key> in err.option', (_label, permits, option) => {
    let caught: unknown;
    try {
      createPep({ ...ok, permits } as unknown as PepOptions);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(TypeError);
    expect((caught as { option?: unknown }).option).toBe(option);
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
    expectOptionError(() => createPep({ ...ok, permits: { keys: secret, issuer: 'x' } }), 'permits.keys');
  });

  it('throws for non-object options', () => {
    expectOptionError(() => createPep(undefined as unknown as PepOptions), '(options)');
  });

  it('accepts a URL object, https, a base path and permits: false', () => {
    expect(resolveOptions({ ...ok, pdpUrl: new URL('https://pdp.example/base/') }).path).toBe(
      '/base/api/policy/authorize',
    );
    expect(resolveOptions({ ...ok, permits: false }).permits).toBe(false);
  });

  it('VERSION matches package.json', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(VERSION).toBe(pkg.version);
  });
});
