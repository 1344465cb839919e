/**
 * A stage call -> a request (src/core/request.ts): per-call options read strictly once, args read once,
 * tool names checked and normalized, the API key in a header. Every refusal is an InvalidRequest (the
 * client turns it into BLOCK invalid_request) whose message names the problem, never the value.
 */
import { describe, expect, it } from 'vitest';
import {
  baseHeaders,
  checkToolName,
  InvalidRequest,
  prepare,
  readCallOptions,
  replaceRunningValue,
  takeSnapshot,
} from '../../../src/core/request.js';

const DEFAULTS = { session: 's-1', simulated: false };

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidRequest);
    return (err as Error).message;
  }
  throw new Error('did not throw');
}

describe('readCallOptions', () => {
  it('no options: the client defaults', () => {
    expect(readCallOptions(undefined, 'input', { session: 's', simulated: true })).toEqual({
      signal: undefined,
      session: 's',
      simulated: true,
      tool: undefined,
    });
  });

  it('refuses an unknown key, naming it (a misspelt tool must never skip its rules)', () => {
    expect(refusal(() => readCallOptions({ tol: 'x' }, 'context_egress', DEFAULTS))).toContain('"tol"');
    expect(refusal(() => readCallOptions({ tool: 'x' }, 'input', DEFAULTS))).toContain('"tool"');
  });

  it('cuts a long unknown key to 64 characters in the message', () => {
    const message = refusal(() => readCallOptions({ ['k'.repeat(500)]: 1 }, 'input', DEFAULTS));
    expect(message).toContain(`"${'k'.repeat(64)}..."`);
    expect(message).not.toContain('k'.repeat(65));
  });

  it('takes tool only on context_egress', () => {
    expect(readCallOptions({ tool: 'Search' }, 'context_egress', DEFAULTS).tool).toBe('Search');
  });

  it.each([
    ['a non-object', 'x', 'must be an object'],
    ['null', null, 'must be an object'],
    ['a signal that is not an AbortSignal', { signal: {} }, 'signal'],
    ['an empty session', { session: '' }, 'session'],
    ['simulated not a boolean', { simulated: 'yes' }, 'simulated'],
  ])('refuses %s', (_what, raw, word) => {
    expect(refusal(() => readCallOptions(raw, 'input', DEFAULTS))).toContain(word);
  });
});

describe('checkToolName', () => {
  it('normalizes the name', () => {
    expect(checkToolName('RefundPayment')).toBe(checkToolName('refund_payment'));
  });

  it.each([
    ['a number', 7, 'must be a string'],
    ['a lone surrogate', 'a\ud800', 'must be a string'],
    ['257 characters', 'a'.repeat(257), 'longer than 256'],
    ['punctuation only', '---', 'normalizes to nothing'],
  ])('refuses %s', (_what, tool, text) => {
    expect(refusal(() => checkToolName(tool))).toContain(text);
  });
});

describe('takeSnapshot', () => {
  it('reads args once into a copy the caller cannot change afterwards', () => {
    const args = { a: { b: 1 } };
    const s = takeSnapshot(args);
    args.a.b = 2;
    expect(s).toEqual({ ok: true, args: { a: { b: 1 } } });
  });

  it('records why args that are not JSON could not be read, without throwing', () => {
    expect(takeSnapshot({ n: 1n }).ok).toBe(false);
    expect(takeSnapshot('x').ok).toBe(false);
  });
});

describe('prepare', () => {
  const call = { signal: undefined, session: 's-1', simulated: false, tool: undefined };

  it('an action: the tool as given is sent, the normalized one is what the answer is checked against', () => {
    const p = prepare('action', { tool: 'RefundPayment', args: { amount: 5 } }, call, 'agent-1', 'r-1');
    expect(p.req).toEqual({
      agentId: 'agent-1',
      session: 's-1',
      stage: 'action',
      requestId: 'r-1',
      tool: 'RefundPayment',
      args: { amount: 5 },
    });
    expect(p.sent).toMatchObject({ tool: checkToolName('RefundPayment'), argsJson: '{"amount":5}', simulated: false });
  });

  it('a text stage: content checked; a lone surrogate is refused', () => {
    expect(prepare('output', { content: 'ok' }, call, 'a', 'r').req.content).toBe('ok');
    expect(refusal(() => prepare('output', { content: '\ud800' }, call, 'a', 'r'))).toContain('lone surrogate');
    expect(refusal(() => prepare('output', { content: 5 }, call, 'a', 'r'))).toContain('content must be a string');
  });

  it('args that are not a plain object of JSON values are refused, naming the kind, not the value', () => {
    const message = refusal(() => prepare('action', { tool: 't', args: { secret: 1n } }, call, 'a', 'r'));
    expect(message).toContain('args');
    expect(message).not.toContain('secret');
  });

  it('a snapshot already taken is used as it is (args read once)', () => {
    const p = prepare('action', { tool: 't', args: { a: 1 } }, call, 'a', 'r', { ok: true, args: { a: 2 } });
    expect(p.req.args).toEqual({ a: 2 });
  });

  it('a simulated call is sent and checked as simulated', () => {
    const p = prepare('input', { content: 'x' }, { ...call, simulated: true }, 'a', 'r');
    expect([p.req.simulated, p.sent.simulated]).toEqual([true, true]);
  });
});

describe('replaceRunningValue', () => {
  const call = { signal: undefined, session: 's', simulated: false, tool: undefined };

  it('replaces the args sent and what a permit must bind', () => {
    const p = prepare('action', { tool: 't', args: { amount: 900 } }, call, 'a', 'r');
    replaceRunningValue(p, { args: { ok: true, args: { amount: 10 } } });
    expect([p.req.args, p.sent.argsJson, p.replaced]).toEqual([{ amount: 10 }, '{"amount":10}', true]);
  });

  it('refuses a replacement that is not valid input', () => {
    const p = prepare('input', { content: 'x' }, call, 'a', 'r');
    expect(() => replaceRunningValue(p, { content: 5 })).toThrow(InvalidRequest);
  });
});

describe('baseHeaders', () => {
  it('sends the API key as a bearer token only when there is one, and is frozen', () => {
    expect(baseHeaders('ua/1', undefined).authorization).toBeUndefined();
    const h = baseHeaders('ua/1', 'k');
    expect(h).toMatchObject({ 'user-agent': 'ua/1', authorization: 'Bearer k' });
    expect(Object.isFrozen(h)).toBe(true);
  });
});
