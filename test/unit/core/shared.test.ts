/**
 * A client's shared state (src/core/shared.ts), built once by `createClient`: headers, the interceptor
 * chains per stage, the AuthZEN endpoints, the rules the exchange enforces, and the permit checker
 * (built at construction, so a bad `permits` option is a TypeError naming its path under `permits`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createShared, permitChecker, type Shared } from '../../../src/core/shared.js';
import { type PepOptions, resolveOptions } from '../../../src/options/pep.js';
import { VERSION } from '../../../src/version.js';
import { optionOf } from '../../support/options.js';

const made: Shared[] = [];
afterEach(async () => {
  for (const s of made.splice(0)) await s.ctx.transport.close();
});

function shared(extra: Partial<PepOptions> = {}): Shared {
  const s = createShared(resolveOptions({ pdpUrl: 'http://127.0.0.1:9', agentId: 'a', session: 's', ...extra }));
  made.push(s);
  return s;
}

const PERMITS = { keys: 'http://127.0.0.1:9/.well-known/jwks.json', issuer: 'http://127.0.0.1:9' };

describe('createShared', () => {
  it('sends the user agent on every request, and the API key only when given', () => {
    expect(shared().headers).toMatchObject({ 'user-agent': `agent-pep/${VERSION}` });
    expect(shared().headers.authorization).toBeUndefined();
    expect(shared({ apiKey: 'k-1' }).headers.authorization).toBe('Bearer k-1');
    expect(Object.isFrozen(shared().headers)).toBe(true);
  });

  it('splits the interceptors per stage, registration order kept; after hooks only on action', () => {
    const s = shared({
      interceptors: [
        { name: 'one', stages: ['input'], before: () => ({ action: 'proceed' }) },
        { name: 'two', before: () => ({ action: 'proceed' }), after: () => ({ action: 'proceed' }) },
      ],
    });
    expect(s.chains.input.before.map((i) => i.name)).toEqual(['one', 'two']);
    expect(s.chains.output.before.map((i) => i.name)).toEqual(['two']);
    expect(s.chains.action.after.map((i) => i.name)).toEqual(['two']);
    expect(s.chains.input.after).toEqual([]);
  });

  it('AuthZEN clients get an endpoint source; agent-pep clients none', () => {
    expect(shared().endpoints).toBeUndefined();
    expect(shared({ protocol: 'authzen', permits: false }).endpoints).toBeTypeOf('function');
  });

  it('an ALLOW without a permit is allowed only over AuthZEN with permits: false', () => {
    expect(shared({ protocol: 'authzen', permits: false }).ctx.enforce.allowWithoutPermit).toBe(true);
    expect(shared({ protocol: 'authzen', permits: PERMITS }).ctx.enforce.allowWithoutPermit).toBe(false);
    expect(shared({ permits: false }).ctx.enforce.allowWithoutPermit).toBe(false);
  });

  it('permit bindings are checked exactly when permits are configured', () => {
    expect(shared({ permits: PERMITS }).ctx.enforce.checkPermitBinding).toBe(true);
    expect(shared().ctx.enforce.checkPermitBinding).toBe(false);
  });

  it('takes requireEcho, retries and attemptTimeoutMs from the resolved options', () => {
    const s = shared({ requireEcho: true, retries: 1, timeoutMs: 900, attemptTimeoutMs: 300 });
    expect(s.ctx.enforce.requireEcho).toBe(true);
    expect([s.ctx.retries, s.ctx.attemptTimeoutMs, s.ctx.closed]).toEqual([1, 300, false]);
  });

  it('no telemetry without the telemetry option', () => {
    expect(shared().telemetry).toBeUndefined();
  });

  it('a bad permits option is a TypeError at construction, its path under permits', () => {
    expect(optionOf(() => shared({ permits: { ...PERMITS, algorithms: ['none'] as never } }))).toBe(
      'permits.algorithms',
    );
    expect(optionOf(() => shared({ permits: { ...PERMITS, issuer: 7 as never } }))).toMatch(/^permits\b/);
  });
});

describe('permitChecker', () => {
  it('is built once and kept', () => {
    const s = shared({ permits: PERMITS });
    expect(permitChecker(s)).toBe(permitChecker(s));
  });

  it('throws a TypeError when permits are not configured', () => {
    expect(() => permitChecker(shared())).toThrow(TypeError);
    expect(() => permitChecker(shared({ permits: false }))).toThrow(/not configured/);
  });
});
