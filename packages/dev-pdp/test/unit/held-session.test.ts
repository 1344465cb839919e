/**
 * What an escalation keeps of its session (docs/dev-pdp.md, "The reviewer console"): for an action,
 * each grant with whether the call is inside it or the first reason it is not; the grants it is inside
 * first; bounded in number and in the length of every value; nothing of the kind off the action stage.
 */
import { describe, expect, test } from 'vitest';
import { HELD_LIMITS, type HeldGrant, heldSession } from '../../src/held-session.js';
import { compilePolicy } from '../../src/policy.js';
import type { CallReading } from '../../src/sessions/facts.js';
import { readCall } from '../../src/sessions/facts.js';
import { EMPTY_SESSION, type SessionView, type StoredGrant } from '../../src/sessions/state.js';

const KEY = new Uint8Array(32).fill(3);
const NOW = 1_000_000;
const policy = compilePolicy({ agents: ['a'], toolGroups: { money: ['send_money', 'pay_*'] }, latches: [] });

function viewWith(grants: StoredGrant[]): SessionView {
  return { ...EMPTY_SESSION, steps: 1, facts: { ...EMPTY_SESSION.facts, grants } };
}

function held(grants: StoredGrant[], tool: string, args: Record<string, unknown>, stage = 'action') {
  const view = viewWith(grants);
  const step = { stage: stage as 'action', tool, args };
  const call: CallReading = readCall(policy, step, view, KEY, NOW);
  return heldSession(policy, step, view, call, KEY, NOW);
}

const grant = (id: string, extra: Partial<StoredGrant> = {}): StoredGrant => ({
  id,
  tools: ['@money'],
  args: { amount: { lte: 50 }, to: { eq: 'Bob' } },
  ...extra,
});

describe('whether the held call is inside each grant, or why not', () => {
  test('each reason: inside, expired, no uses left, another tool, an argument absent, an argument outside', () => {
    const grants = [
      grant('inside'),
      grant('expired', { expiresAt: NOW - 1 }),
      grant('used-up', { uses: 0 }),
      grant('other-tool', { tools: ['send_email'] }),
      grant('missing', { args: { memo: { matches: 'rent' } } }),
      grant('outside', { args: { amount: { lte: 10 } } }),
    ];
    const out = held(grants, 'send_money', { to: 'bob', amount: 45 });
    const byId = Object.fromEntries(out.grants.map((g) => [g.id, [g.match, g.failedPath]]));
    expect(byId).toEqual({
      inside: ['inside', undefined],
      expired: ['expired', undefined],
      'used-up': ['used_up', undefined],
      'other-tool': ['other_tool', undefined],
      missing: ['arg_missing', 'memo'],
      outside: ['arg_outside', 'amount'],
    });
    // the grants the call is inside come first, then the others newest first
    expect(out.grants.map((g) => g.id)).toEqual(['inside', 'outside', 'missing', 'other-tool', 'used-up', 'expired']);
  });

  test('off the action stage the grants are listed without a match, and no flows', () => {
    const out = held([grant('pay')], 'send_money', {}, 'input');
    expect(out.grants).toEqual([{ id: 'pay', tools: ['@money'], args: { amount: { lte: 50 }, to: { eq: 'Bob' } } }]);
    expect(out.flows).toEqual([]);
    expect(out.origin).toBeUndefined();
  });

  test('a session with no grants keeps an empty list', () => {
    expect(held([], 'send_money', { amount: 1 })).toMatchObject({ grants: [], flows: [] });
  });
});

describe('bounded in size', () => {
  test('at most HELD_LIMITS.grants grants, the rest counted', () => {
    const many = Array.from({ length: 40 }, (_, i) => grant(`g${i}`));
    const out = held(many, 'send_email', {});
    expect(out.grants).toHaveLength(HELD_LIMITS.grants);
    expect(out.grantsLeftOut).toBe(40 - HELD_LIMITS.grants);
  });

  test('a long value and a long list are shortened, and the grant says so', () => {
    const long = 'x'.repeat(5000);
    const out = held(
      [grant('long', { args: { to: { eq: long }, cc: { in: Array.from({ length: 100 }, (_, i) => i) } } })],
      'send_money',
      {},
    );
    const g = out.grants[0] as HeldGrant;
    expect(g.shortened).toBe(true);
    expect((g.args.to as { eq: string }).eq).toHaveLength(HELD_LIMITS.text + 1);
    expect((g.args.cc as { in: unknown[] }).in).toHaveLength(HELD_LIMITS.listItems);
    expect(JSON.stringify(out).length).toBeLessThan(2000);
  });

  test('every grant and flow together stay within the character budget, whatever the session holds', () => {
    const huge = (i: number): StoredGrant =>
      grant(`g${i}`, {
        args: Object.fromEntries(
          Array.from({ length: 32 }, (_, k) => [`p${k}`, { in: Array.from({ length: 100 }, () => 'y'.repeat(1000)) }]),
        ),
      });
    const out = held(
      Array.from({ length: 64 }, (_, i) => huge(i)),
      'send_money',
      {},
    );
    expect(out.grants).toHaveLength(HELD_LIMITS.grants);
    expect(out.grants.every((g) => g.shortened === true)).toBe(true);
    expect(JSON.stringify(out).length).toBeLessThan(HELD_LIMITS.chars + 4000);
  });

  test('a path named __proto__ is kept as a plain key, not a prototype', () => {
    const out = held([grant('p', { args: JSON.parse('{"__proto__": {"eq": 1}}') })], 'send_money', {});
    const args = out.grants[0]?.args as Record<string, unknown>;
    expect(Object.hasOwn(args, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(args)).toBe(Object.prototype);
  });
});
