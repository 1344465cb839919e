import { describe, expect, it } from 'vitest';
import { KeyThrottle } from '../../../src/auth.js';
import { ConsoleAuth } from '../../../src/console/auth.js';

const limits = (attempts = 3) => ({ throttle: new KeyThrottle(attempts, 60_000), idleMs: 60_000 });

describe('ConsoleAuth', () => {
  it('the reviewer key signs in with a new session id and CSRF token; the visitor session ends', () => {
    const auth = new ConsoleAuth('reviewer', 'agent', limits());
    const visitor = auth.visitor();
    expect(visitor.signedIn).toBe(false);
    const result = auth.signIn('10.0.0.1', visitor.id, 'reviewer');
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.session).toMatchObject({ signedIn: true });
    expect(result.session.id).not.toBe(visitor.id);
    expect(result.session.csrf).not.toBe(visitor.csrf);
    expect(auth.session(visitor.id)).toBeUndefined();
    expect(auth.session(result.session.id)?.signedIn).toBe(true);
    auth.signOut(result.session.id);
    expect(auth.session(result.session.id)).toBeUndefined();
  });

  it("refuses a wrong key, an empty one, and the agent's API key (named as such)", () => {
    const auth = new ConsoleAuth('reviewer', 'agent', limits(10));
    const v = auth.visitor();
    expect(auth.signIn('c', v.id, 'reviewe')).toEqual({ ok: false, why: 'wrong_key' });
    expect(auth.signIn('c', v.id, '')).toEqual({ ok: false, why: 'wrong_key' });
    expect(auth.signIn('c', v.id, 'agent')).toEqual({ ok: false, why: 'agent_key' });
  });

  it('limits failed sign-ins per client: past the limit even the right key is refused; another client is not', () => {
    const auth = new ConsoleAuth('reviewer', undefined, limits());
    const v = auth.visitor();
    for (let i = 0; i < 3; i++) expect(auth.signIn('10.0.0.9', v.id, `guess${i}`).ok).toBe(false);
    const limited = auth.signIn('10.0.0.9', v.id, 'reviewer');
    expect(limited).toMatchObject({ ok: false, why: 'rate_limited' });
    expect(limited.ok === false && limited.retryAfterSec).toBeGreaterThan(0);
    expect(auth.signIn('10.0.0.10', auth.visitor().id, 'reviewer').ok).toBe(true);
  });

  it('an unknown or missing session id is no session', () => {
    const auth = new ConsoleAuth('reviewer', undefined, limits());
    expect(auth.session(undefined)).toBeUndefined();
    expect(auth.session('x'.repeat(43))).toBeUndefined();
  });
});

describe('KeyThrottle', () => {
  it('the reviewer key is throttled everywhere it is accepted: failures counted elsewhere refuse the console sign-in', () => {
    const throttle = new KeyThrottle(2, 60_000);
    const auth = new ConsoleAuth('reviewer', undefined, { throttle, idleMs: 60_000 });
    // two wrong keys at the API endpoint (same counter)
    throttle.failed('10.0.0.7');
    throttle.failed('10.0.0.7');
    expect(throttle.blocked('10.0.0.7')).toBeGreaterThan(0);
    expect(auth.signIn('10.0.0.7', auth.visitor().id, 'reviewer')).toMatchObject({ ok: false, why: 'rate_limited' });
    expect(throttle.blocked('10.0.0.8')).toBeUndefined();
  });
});
