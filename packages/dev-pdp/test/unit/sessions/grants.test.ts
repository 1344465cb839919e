/**
 * Grant constraints, intent rules and the user's words (docs/dev-pdp.md, "Intent grants"): captures
 * resolved (a number where one is needed, else no grant), sentences tried on their own with `unless`,
 * uses spent and expiry, fromUser after NFKC and case folding, and the policy checks of intents.
 */
import { describe, expect, test } from 'vitest';
import { compilePolicy, InvalidPolicyError } from '../../../src/policy.js';
import { grantsAfter, grantsHolding, isLive, resolveGrant } from '../../../src/sessions/grants.js';
import { grantsFromText, sentencesOf } from '../../../src/sessions/intents.js';
import { occursInWords, wordRuns } from '../../../src/sessions/words.js';

const KEY = new Uint8Array(32).fill(7);
const ctx = (said = '') => ({ groups: new Map(), words: new Set(wordRuns(KEY, said)), key: KEY });

function policyWith(intent: Record<string, unknown>) {
  return compilePolicy({ agents: ['a'], toolGroups: { money: ['send_money'] }, intents: [intent], latches: [] });
}

describe('captures', () => {
  test('a capture stands in a constraint; a number where one is needed, else no grant', () => {
    const spec = { tools: 'send_money', args: { amount: { lte: '$amount' }, to: { eq: '$to' } } };
    expect(resolveGrant('pay', spec, { amount: '4,900', to: 'Bob' }, 0)).toEqual({
      id: 'pay',
      tools: ['send_money'],
      args: { amount: { lte: 4900 }, to: { eq: 'Bob' } },
    });
    expect(resolveGrant('pay', spec, { amount: 'lots', to: 'Bob' }, 0)).toBeUndefined();
    expect(resolveGrant('pay', spec, { amount: undefined, to: 'Bob' }, 0)).toBeUndefined();
  });

  test('matches with a capture: the value must contain the captured text, taken literally', () => {
    const g = resolveGrant('t', { tools: 'x', args: { title: { matches: '$t' } } }, { t: 'Dinner (a.b)' }, 0);
    expect(g).toBeDefined();
    const inside = (title: string) => grantsHolding([g as never], 'x', { title }, ctx(), 0).length === 1;
    expect(inside('re: dinner (a.b) at 8')).toBe(true);
    expect(inside('Dinner (aXb)')).toBe(false);
  });
});

describe('constraints', () => {
  const grant = (args: Record<string, unknown>) => resolveGrant('g', { tools: ['send_*'], args } as never, {}, 0);
  const holds = (args: Record<string, unknown>, call: Record<string, unknown>, said = '') =>
    grantsHolding([grant(args) as never], 'send_money', call, ctx(said), 0).length === 1;

  test('eq folds case and NFKC, and a number equals its decimal string; in; ranges on numbers and decimal strings', () => {
    expect(holds({ to: { eq: 'ＢＯＢ' } }, { to: 'bob' })).toBe(true);
    expect(holds({ amount: { eq: 50 } }, { amount: '50' })).toBe(true);
    expect(holds({ amount: { eq: 50 } }, { amount: 51 })).toBe(false);
    expect(holds({ to: { in: ['a', 'b'] } }, { to: 'B' })).toBe(true);
    expect(holds({ amount: { lte: 100 } }, { amount: '1,00' })).toBe(false);
    expect(holds({ amount: { lte: 100 } }, { amount: '99.5' })).toBe(true);
    expect(holds({ amount: { gt: 1 } }, { amount: true })).toBe(false);
    expect(holds({ amount: { lte: 100 } }, {})).toBe(false);
    expect(holds({ 'to.iban': { matches: '^DE' } }, { to: { iban: 'DE89' } })).toBe(true);
  });

  test("fromUser: the value occurs in the user's own words, whole words, spaces or none", () => {
    const said = 'Send it to DE89 3704 0044 please, and cc Ann-Marie';
    expect(holds({ iban: { fromUser: true } }, { iban: 'de8937040044' }, said)).toBe(true);
    expect(holds({ iban: { fromUser: true } }, { iban: 'DE89 3704' }, said)).toBe(true);
    expect(holds({ iban: { fromUser: true } }, { iban: 'DE89 9999' }, said)).toBe(false);
    expect(holds({ name: { fromUser: true } }, { name: 'ann marie' }, said)).toBe(true);
    expect(holds({ name: { fromUser: true } }, { name: 'an' }, said)).toBe(false);
    expect(occursInWords(KEY, new Set(wordRuns(KEY, said)), '')).toBe(false);
  });

  test('a list argument is inside a constraint only when every element is, and an empty list never is', () => {
    const said = 'Forward it to marta@acme.example please';
    expect(holds({ to: { fromUser: true } }, { to: ['marta@acme.example'] }, said)).toBe(true);
    expect(holds({ to: { fromUser: true } }, { to: ['marta@acme.example', 'eve@evil.example'] }, said)).toBe(false);
    expect(holds({ to: { fromUser: true } }, { to: [] }, said)).toBe(false);
    expect(holds({ to: { eq: 'bob' } }, { to: ['Bob', 'BOB'] })).toBe(true);
    expect(holds({ to: { eq: 'bob' } }, { to: ['bob', 'eve'] })).toBe(false);
    expect(holds({ to: { in: ['a', 'b'] } }, { to: ['a', 'B'] })).toBe(true);
    expect(holds({ to: { in: ['a', 'b'] } }, { to: ['a', 'c'] })).toBe(false);
    expect(holds({ to: { matches: '@acme\\.example$' } }, { to: ['x@acme.example', 'y@evil.example'] })).toBe(false);
    expect(holds({ amount: { lte: 100 } }, { amount: [50, 500] })).toBe(false);
    expect(holds({ amount: { lte: 100 } }, { amount: [] })).toBe(false);
    // a nested list is not flattened: its elements are not scalars
    expect(holds({ to: { eq: 'bob' } }, { to: [['bob']] })).toBe(false);
  });

  test('the tool must match; a grant of an unknown group matches nothing', () => {
    const g = resolveGrant('g', { tools: '@gone' }, {}, 0) as never;
    expect(grantsHolding([g], 'send_money', {}, ctx(), 0)).toEqual([]);
    expect(grantsHolding([grant({}) as never], 'lookup', {}, ctx(), 0)).toEqual([]);
  });
});

describe('uses and expiry', () => {
  test('a use is spent by each call inside; a spent or expired grant is gone', () => {
    const g = resolveGrant('g', { tools: 'x', uses: 2, expiresInSec: 10 }, {}, 1000) as never;
    const once = grantsAfter([g], [0], [], 2000);
    expect(once).toMatchObject([{ uses: 1 }]);
    expect(grantsAfter(once, [0], [], 2000)).toEqual([]);
    expect(isLive(g, 10_999)).toBe(true);
    expect(grantsAfter([g], [], [], 11_000)).toEqual([]);
  });
});

describe('intent rules', () => {
  test('each sentence on its own, with its mark: a question vetoes only itself', () => {
    expect(sentencesOf('How much did I pay? Pay Bob 5 EUR.\nThanks')).toEqual([
      'How much did I pay?',
      'Pay Bob 5 EUR.',
      'Thanks',
    ]);
    const policy = policyWith({
      id: 'pay',
      pattern: '(?i)\\bpay\\b',
      unless: ['\\?$'],
      grant: { tools: '@money', uses: 1 },
    });
    const intents = policy.intents ?? [];
    expect(grantsFromText(intents, 'How much did I pay?', 0)).toEqual([]);
    expect(grantsFromText(intents, 'How much did I pay? Pay Bob now.', 0).map((g) => g.id)).toEqual(['pay']);
  });

  test('a "$name" that names no capture, or a grant of an unknown group, is refused at load', () => {
    const bad = () =>
      policyWith({ id: 'p', pattern: '(?P<a>x)', grant: { tools: '@nope', args: { n: { eq: '$b' } } } });
    expect(bad).toThrow(InvalidPolicyError);
    try {
      bad();
    } catch (error) {
      const paths = (error as InvalidPolicyError).issues.map((i) => i.path);
      expect(paths).toEqual(expect.arrayContaining(['intents[0].grant.tools', 'intents[0].grant.args']));
    }
  });

  test('flows naming an unknown group, and a bad flow source, are refused at load', () => {
    const load = (flows: unknown) => () =>
      compilePolicy({ agents: ['a'], latches: [{ id: 'l', stage: 'action', verdict: 'BLOCK', session: { flows } }] });
    expect(load({ from: '@nope' })).toThrow(InvalidPolicyError);
    expect(load({ from: 'somewhere' })).toThrow(InvalidPolicyError);
    expect(load({ from: 'untrusted', into: 'to' })).toThrow(InvalidPolicyError);
    expect(load({ from: 'untrusted', into: 'args.to', kind: 'iban', notFrom: 'user' })).not.toThrow();
  });
});
