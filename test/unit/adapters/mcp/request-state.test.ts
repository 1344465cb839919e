/**
 * The requestState of agent-pep's InputRequiredResult (CONTRACT section 16): HMAC-signed, bound to the
 * tool, the args hash, the session and the escalation id, with an expiry; anything else fails verification.
 */
import { describe, expect, it } from 'vitest';
import { argsHashOf, isGuardState, requestStates } from '../../../../src/adapters/mcp/request-state.js';

const key = new Uint8Array(32).fill(7);
const call = { tool: 'refund_payment', argsHash: argsHashOf({ orderId: 'o1', amount: 900 }), session: 's1' };

describe('requestStates', () => {
  it('verifies its own state for the same call until it expires', () => {
    let now = 1_000;
    const states = requestStates(key, 500, () => now);
    const state = states.sign({ ...call, escalationId: 'esc_1' });
    expect(states.verify(state, call)).toBe(true);
    now = 1_499;
    expect(states.verify(state, call)).toBe(true);
    now = 1_500;
    expect(states.verify(state, call)).toBe(false);
  });

  it('refuses a state for another tool, other args, another session, signed with another key, or altered', () => {
    const states = requestStates(key, 60_000);
    const state = states.sign({ ...call, escalationId: 'esc_1' });
    expect(states.verify(state, { ...call, tool: 'bank_transfer' })).toBe(false);
    expect(states.verify(state, { ...call, argsHash: argsHashOf({ orderId: 'o1', amount: 901 }) })).toBe(false);
    expect(states.verify(state, { ...call, session: 's2' })).toBe(false);
    expect(requestStates(new Uint8Array(32).fill(8), 60_000).verify(state, call)).toBe(false);
    const [payload, sig] = state.split('.');
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload ?? '', 'base64url').toString()), exp: 9e15 }),
    );
    expect(states.verify(`${forged.toString('base64url')}.${sig}`, call)).toBe(false);
    for (const bad of [undefined, 42, '', 'a.b.c', `${payload}.`, 'x'.repeat(5000)])
      expect(states.verify(bad, call)).toBe(false);
  });

  it('the args hash is that of the canonical JSON (member order does not matter)', () => {
    expect(argsHashOf({ a: 1, b: 2 })).toBe(argsHashOf({ b: 2, a: 1 }));
    expect(argsHashOf({ a: 1 })).not.toBe(argsHashOf({ a: 2 }));
  });
});

describe('isGuardState', () => {
  it("tells a state of the guard's shape (signed by anyone, altered or not) from a tool's own", () => {
    const state = requestStates(key, 60_000).sign({ ...call, escalationId: 'esc_1' });
    expect(isGuardState(state)).toBe(true);
    expect(isGuardState(`${state.slice(0, -4)}AAAA`)).toBe(true);
    expect(isGuardState(requestStates(new Uint8Array(32).fill(8), 60_000).sign({ ...call, escalationId: 'e' }))).toBe(
      true,
    );
    for (const other of [undefined, 42, '', 'server-own-state', 'a.b', 'a.b.c', `${state}.x`, 'x'.repeat(5000)])
      expect(isGuardState(other)).toBe(false);
  });
});
