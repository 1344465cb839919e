/**
 * `checkInput`'s `intent` option (docs/dev-pdp.md, "Intent grants"), checked for shape before it is
 * sent: at most 16 grants, known fields only, one operator per constraint; copied once.
 */
import { describe, expect, test } from 'vitest';
import { readIntent } from '../../../src/core/intent.js';
import { InvalidRequest, readCallOptions } from '../../../src/core/request.js';

const ok = {
  id: 'pay',
  tools: ['send_money', '@money'],
  args: { amount: { lte: 5 }, to: { fromUser: true } },
  uses: 1,
};

describe('readIntent', () => {
  test('a valid list is copied', () => {
    const given = [ok];
    const read = readIntent(given);
    expect(read).toEqual({ ok: true, intent: [ok] });
    if (read.ok) expect(read.intent[0]).not.toBe(ok);
  });

  test.each([
    ['not a list', ok],
    ['more than 16', Array.from({ length: 17 }, () => ok)],
    ['an unknown field', [{ ...ok, note: 'x' }]],
    ['a bad id', [{ ...ok, id: 'has space' }]],
    ['a tool that is not a pattern', [{ ...ok, tools: 'Send Money' }]],
    ['two operators', [{ ...ok, args: { amount: { lte: 5, gte: 1 } } }]],
    ['an unknown operator', [{ ...ok, args: { amount: { near: 5 } } }]],
    ['fromUser false', [{ ...ok, args: { to: { fromUser: false } } }]],
    ['uses 0', [{ ...ok, uses: 0 }]],
  ])('refuses %s', (_what, value) => {
    expect(readIntent(value).ok).toBe(false);
  });
});

describe('the call option', () => {
  const defaults = { session: 's', simulated: false };
  test('only checkInput takes intent; a bad one is an InvalidRequest', () => {
    expect(readCallOptions({ intent: [ok] }, 'input', defaults).intent).toEqual([ok]);
    expect(() => readCallOptions({ intent: [ok] }, 'output', defaults)).toThrow(InvalidRequest);
    expect(() => readCallOptions({ intent: [{ id: 'x' }] }, 'input', defaults)).toThrow(InvalidRequest);
  });
});
