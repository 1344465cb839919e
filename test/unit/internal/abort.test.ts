/** The abort-cause table and the one-shot abort handle (src/internal/abort.ts). */
import { describe, expect, it } from 'vitest';
import { ABORT_CAUSES, Abort, type AbortCause, AbortReason, abortCauseOf } from '../../../src/internal/abort.js';

describe('ABORT_CAUSES: one table from abort cause to fail-closed code', () => {
  it('maps every cause to the code CONTRACT.md section 3 gives it', () => {
    const codes = Object.fromEntries(Object.entries(ABORT_CAUSES).map(([cause, { code }]) => [cause, code]));
    expect(codes).toEqual({
      deadline: 'pdp_timeout',
      attempt_timeout: 'pdp_timeout',
      caller: 'aborted',
      closed: 'pdp_unreachable',
    });
  });
  it('gives every cause a distinct, non-empty message, and cannot be changed', () => {
    const messages = Object.values(ABORT_CAUSES).map((e) => e.message);
    expect(new Set(messages).size).toBe(messages.length);
    for (const m of messages) expect(m.length).toBeGreaterThan(0);
    expect(Object.isFrozen(ABORT_CAUSES)).toBe(true);
    for (const e of Object.values(ABORT_CAUSES)) expect(Object.isFrozen(e)).toBe(true);
  });
  it('reads the cause from an AbortReason; any other reason is the caller', () => {
    for (const cause of Object.keys(ABORT_CAUSES) as AbortCause[]) {
      expect(abortCauseOf(new AbortReason(cause))).toBe(cause);
    }
    expect(abortCauseOf(new Error('x'))).toBe('caller');
    expect(abortCauseOf(undefined)).toBe('caller');
  });
});

describe('Abort', () => {
  it('runs each listener once, in order, and a throwing listener cannot stop the others', () => {
    const a = new Abort();
    const seen: string[] = [];
    a.addEventListener('abort', () => seen.push('one'));
    a.addEventListener('abort', () => {
      throw new Error('boom');
    });
    a.addEventListener('abort', () => seen.push('three'));
    const reason = new AbortReason('deadline');
    a.abort(reason);
    a.abort(new AbortReason('caller'));
    expect(seen).toEqual(['one', 'three']);
    expect(a.aborted).toBe(true);
    expect(a.reason).toBe(reason);
  });
  it('a removed listener does not run; one added after the abort does not run', () => {
    const a = new Abort();
    let ran = 0;
    const l = () => ran++;
    a.addEventListener('abort', l);
    a.removeEventListener('abort', l);
    a.abort(new AbortReason('closed'));
    a.addEventListener('abort', l);
    expect(ran).toBe(0);
  });
  it('listeners run in the order they were added, whichever were removed in between', () => {
    const a = new Abort();
    const seen: string[] = [];
    const l = (name: string) => () => seen.push(name);
    const first = l('first');
    const second = l('second');
    a.addEventListener('abort', first);
    a.addEventListener('abort', second);
    a.removeEventListener('abort', first);
    a.addEventListener('abort', l('third'));
    a.removeEventListener('abort', second);
    a.addEventListener('abort', l('fourth'));
    a.addEventListener('abort', first);
    a.abort(new AbortReason('caller'));
    expect(seen).toEqual(['third', 'fourth', 'first']);
  });
  it('its AbortSignal follows it, before or after the abort', () => {
    const before = new Abort();
    const signal = before.signal;
    expect(signal.aborted).toBe(false);
    before.abort(new AbortReason('deadline'));
    expect(signal.aborted).toBe(true);
    expect(abortCauseOf(signal.reason)).toBe('deadline');
    const after = new Abort();
    after.abort(new AbortReason('caller'));
    expect(after.signal.aborted).toBe(true);
  });
});
