/**
 * The user's words are kept (as keyed hashes) for the `fromUser` grant constraint only (issue 41): a
 * policy whose grants can never carry it (`intentsFromClient: false`, no intent rule with `fromUser`)
 * keeps none, and an input step skips the ~900 HMACs of a 40-word text; every other policy keeps them.
 * The same for the values seen: kept when a latch has a `flows` or `sameOrigin` condition, their only readers.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { compilePolicy } from '../../../src/policy.js';
import { factsAfter } from '../../../src/sessions/facts.js';
import { EMPTY_SESSION } from '../../../src/sessions/state.js';

const secret = new Uint8Array(randomBytes(32));
const step = {
  stage: 'input' as const,
  content: 'Please pay 120 EUR to DE89 3704 0044 0532 0130 00 or ana@example.com',
};
const wordsKept = (policy: unknown) =>
  factsAfter(compilePolicy(policy), step, 'ALLOW', EMPTY_SESSION, [], secret, Date.now()).facts.words.length;

describe('the words a session keeps', () => {
  test('a policy that takes grants from the client keeps the words of an input step (the default)', () => {
    expect(wordsKept({ agents: ['a'], latches: [] })).toBeGreaterThan(0);
  });

  test('a policy with an intent rule that grants fromUser keeps them, even ignoring the client', () => {
    const policy = {
      agents: ['a'],
      latches: [],
      intentsFromClient: false,
      intents: [
        { id: 'pay', pattern: '(?i)pay (?P<amount>\\d+)', grant: { tools: 'pay_*', args: { to: { fromUser: true } } } },
      ],
    };
    expect(wordsKept(policy)).toBeGreaterThan(0);
  });

  test('a policy whose grants can never read them keeps none', () => {
    const policy = {
      agents: ['a'],
      latches: [],
      intentsFromClient: false,
      intents: [
        {
          id: 'pay',
          pattern: '(?i)pay (?P<amount>\\d+)',
          grant: { tools: 'pay_*', args: { amount: { lte: '$amount' } } },
        },
      ],
    };
    expect(wordsKept(policy)).toBe(0);
  });
});

const valuesKept = (policy: unknown) =>
  factsAfter(compilePolicy(policy), step, 'ALLOW', EMPTY_SESSION, [], secret, Date.now()).facts.values.length;

describe('the values a session keeps', () => {
  const money = { id: 'money', stage: 'action', tool: 'pay_*', verdict: 'ESCALATE' };

  test('a policy with a flows condition keeps the values of an input step', () => {
    expect(
      valuesKept({ agents: ['a'], latches: [{ ...money, session: { flows: { from: 'user' } } }] }),
    ).toBeGreaterThan(0);
  });

  test('a policy with a sameOrigin condition keeps them', () => {
    expect(valuesKept({ agents: ['a'], latches: [{ ...money, session: { sameOrigin: false } }] })).toBeGreaterThan(0);
  });

  test('a policy where no latch reads them keeps none', () => {
    expect(valuesKept({ agents: ['a'], latches: [{ ...money, session: { granted: false } }] })).toBe(0);
  });
});
