/**
 * The local interceptor chain (src/core/interceptors.ts; docs/interceptors.md): `before` runs in
 * registration order on its stages and ends at the first deny or substitute; any other answer than a
 * result, a throw, or a pending interceptor at the deadline is `failed` naming it; `after` replaces or
 * withholds a tool's result. Outcomes are asserted by kind and name, the rule that fired.
 */
import { describe, expect, it } from 'vitest';
import {
  chainsByStage,
  type Interceptor,
  type RunningValue,
  runAfter,
  runBefore,
  validateInterceptors,
} from '../../../src/core/interceptors.js';

function compile(list: Interceptor[]) {
  return validateInterceptors(list, (path, problem) => {
    throw Object.assign(new TypeError(`${path}: ${problem}`), { option: path });
  });
}

const action = (): RunningValue => ({
  stage: 'action',
  session: 's',
  tool: 'refund',
  args: { amount: 900 },
  content: undefined,
});
const input = (): RunningValue => ({ stage: 'input', session: 's', tool: undefined, args: undefined, content: 'hi' });
const far = () => ({ deadlineAt: performance.now() + 10_000, signal: undefined });

describe('chainsByStage', () => {
  it('puts each interceptor on its stages, in registration order; after hooks on action only', () => {
    const chains = chainsByStage(
      compile([
        { name: 'a', stages: ['action'], before: () => ({ action: 'proceed' }), after: () => ({ action: 'proceed' }) },
        { name: 'b', before: () => ({ action: 'proceed' }) },
      ]),
    );
    expect(chains.action.before.map((i) => i.name)).toEqual(['a', 'b']);
    expect(chains.input.before.map((i) => i.name)).toEqual(['b']);
    expect(chains.action.after.map((i) => i.name)).toEqual(['a']);
    expect(chains.output.after).toEqual([]);
  });
});

describe('runBefore', () => {
  it('synchronous pass-through answers at once: proceed, not replaced', () => {
    const r = runBefore(compile([{ name: 'p', before: () => ({ action: 'proceed' }) }]), input(), far());
    expect(r).toEqual({ kind: 'proceed', replaced: false });
  });

  it('each interceptor sees a frozen step; proceedWith replaces the value for the next one', async () => {
    const seen: unknown[] = [];
    const chain = compile([
      { name: 'cap', before: () => ({ action: 'proceedWith', args: { amount: 10 } }) },
      {
        name: 'look',
        before: (step) => {
          seen.push(step.args, Object.isFrozen(step.args));
          return { action: 'proceed' };
        },
      },
    ]);
    const r = await runBefore(chain, action(), far());
    expect(seen).toEqual([{ amount: 10 }, true]);
    expect(r).toEqual({ kind: 'proceed', args: { ok: true, args: { amount: 10 } }, replaced: true });
  });

  it('the first deny ends the chain; later interceptors are not called', async () => {
    let later = 0;
    const chain = compile([
      { name: 'no', before: () => ({ action: 'deny', reason: 'nope' }) },
      {
        name: 'later',
        before: () => {
          later++;
          return { action: 'proceed' };
        },
      },
    ]);
    expect(await runBefore(chain, input(), far())).toEqual({ kind: 'deny', name: 'no', reason: 'nope' });
    expect(later).toBe(0);
  });

  it('substitute on an action ends the chain with the result; on a text stage it is failed', async () => {
    const chain = compile([{ name: 'sub', before: () => ({ action: 'substitute', result: 42 }) }]);
    expect(await runBefore(chain, action(), far())).toEqual({ kind: 'substitute', name: 'sub', result: 42 });
    expect(await runBefore(chain, input(), far())).toMatchObject({ kind: 'failed', name: 'sub' });
  });

  it.each([
    [
      'a throw',
      () => {
        throw new Error('x');
      },
      'threw or rejected',
    ],
    ['a rejection', () => Promise.reject(new Error('x')), 'threw or rejected'],
    ['a string', () => 'proceed', 'not a result'],
    ['an unknown action', () => ({ action: 'allow' }), 'an unknown action'],
    ['a deny without a reason', () => ({ action: 'deny' }), 'a deny without a string reason'],
    ['a proceed with extra keys', () => ({ action: 'proceed', args: {} }), 'a malformed proceed'],
  ])('%s is failed, naming the interceptor', async (_what, before, why) => {
    const r = await runBefore(
      compile([{ name: 'bad', before: before as NonNullable<Interceptor['before']> }]),
      input(),
      far(),
    );
    expect(r).toEqual({ kind: 'failed', name: 'bad', why: expect.stringContaining(why) });
  });

  it('an interceptor pending at the deadline is timeout, naming it', async () => {
    const chain = compile([{ name: 'slow', before: () => new Promise(() => {}) }]);
    const r = await runBefore(chain, input(), { deadlineAt: performance.now() + 20, signal: undefined });
    expect(r).toEqual({ kind: 'timeout', name: 'slow' });
  });

  it("the caller's abort while an interceptor is pending is aborted", async () => {
    const ac = new AbortController();
    const chain = compile([{ name: 'slow', before: () => new Promise(() => {}) }]);
    const r = runBefore(chain, input(), { deadlineAt: performance.now() + 10_000, signal: ac.signal });
    ac.abort();
    expect(await r).toEqual({ kind: 'aborted' });
  });
});

describe('runAfter', () => {
  it('proceedWith replaces the result for the next interceptor and the caller', async () => {
    const chain = compile([
      { name: 'redact', after: () => ({ action: 'proceedWith', result: 'redacted' }) },
      {
        name: 'pass',
        after: (_s, result) => (result === 'redacted' ? { action: 'proceed' } : { action: 'deny', reason: 'x' }),
      },
    ]);
    expect(await runAfter(chain, action(), 'secret', far())).toEqual({ kind: 'proceed', result: 'redacted' });
  });

  it('deny withholds the result, naming the interceptor', async () => {
    const chain = compile([{ name: 'dlp', after: () => ({ action: 'deny', reason: 'card number' }) }]);
    expect(await runAfter(chain, action(), 'x', far())).toEqual({ kind: 'deny', name: 'dlp', reason: 'card number' });
  });

  it('a throw, or no answer by the deadline, withholds it too', async () => {
    const bad = compile([{ name: 'boom', after: () => Promise.reject(new Error('x')) }]);
    expect(await runAfter(bad, action(), 'x', far())).toMatchObject({ kind: 'failed', name: 'boom' });
    const slow = compile([{ name: 'slow', after: () => new Promise(() => {}) }]);
    const r = await runAfter(slow, action(), 'x', { deadlineAt: performance.now() + 20, signal: undefined });
    expect(r).toEqual({ kind: 'failed', name: 'slow', why: 'did not answer in time' });
  });
});
