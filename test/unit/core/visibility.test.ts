/**
 * `pep.visibleTools` (src/core/visibility.ts; docs/visibility.md): one batch of visibility decisions,
 * and only the names whose decision is not BLOCK. It fails closed: bad options, a short answer, a
 * rejection or a non-action decision hide the tools; it never rejects.
 */
import { describe, expect, it } from 'vitest';
import { type DecideVisibility, visibleTools } from '../../../src/core/visibility.js';
import type { PolicyDecision, Verdict } from '../../../src/decision.js';

const d = (verdict: Verdict, stage: PolicyDecision['stage'] = 'action'): PolicyDecision => ({
  verdict,
  stage,
  requestId: 'r',
});

/** A decide that answers `verdicts` in order and records what it was asked. */
function scripted(verdicts: PolicyDecision[]) {
  const asked: { calls: unknown[]; call: Parameters<DecideVisibility>[1] }[] = [];
  const decide: DecideVisibility = async (calls, call) => {
    asked.push({ calls: [...calls], call });
    return verdicts;
  };
  return { decide, asked };
}

describe('visibleTools', () => {
  it('keeps the names, as given and in order, whose decision is not BLOCK', async () => {
    const { decide, asked } = scripted([d('ALLOW'), d('BLOCK'), d('WARN'), d('ESCALATE')]);
    expect(await visibleTools(['a', 'b', 'c', 'd'], undefined, decide)).toEqual(['a', 'c', 'd']);
    expect(asked).toHaveLength(1);
    expect(asked[0]?.calls).toEqual([
      { tool: 'a', args: {} },
      { tool: 'b', args: {} },
      { tool: 'c', args: {} },
      { tool: 'd', args: {} },
    ]);
    expect(asked[0]?.call).toMatchObject({ purpose: 'visibility', visibilityBatch: { size: 4 } });
  });

  it('passes the session and signal of the call', async () => {
    const { decide, asked } = scripted([d('ALLOW')]);
    const signal = new AbortController().signal;
    await visibleTools(['a'], { session: 's-2', signal }, decide);
    expect(asked[0]?.call).toMatchObject({ session: 's-2', signal });
  });

  it('no names, or not an array: [] without asking', async () => {
    const { decide, asked } = scripted([]);
    expect(await visibleTools([], undefined, decide)).toEqual([]);
    expect(await visibleTools('a', undefined, decide)).toEqual([]);
    expect(asked).toHaveLength(0);
  });

  it.each([
    ['an unknown key', { sesion: 's' }],
    ['an empty session', { session: '' }],
    ['a signal that is not an AbortSignal', { signal: {} }],
    ['not an object', 'x'],
  ])('options with %s hide every tool, without asking', async (_what, opts) => {
    const { decide, asked } = scripted([d('ALLOW')]);
    expect(await visibleTools(['a'], opts, decide)).toEqual([]);
    expect(asked).toHaveLength(0);
  });

  it('an answer of the wrong length hides every tool', async () => {
    expect(await visibleTools(['a', 'b'], undefined, scripted([d('ALLOW')]).decide)).toEqual([]);
  });

  it('a decision for another stage hides its tool', async () => {
    expect(await visibleTools(['a', 'b'], undefined, scripted([d('ALLOW', 'input'), d('ALLOW')]).decide)).toEqual([
      'b',
    ]);
  });

  it('a name that is not a string is never returned', async () => {
    expect(await visibleTools([7, 'b'], undefined, scripted([d('ALLOW'), d('ALLOW')]).decide)).toEqual(['b']);
  });

  it('a decide that rejects hides every tool; visibleTools never rejects', async () => {
    const decide: DecideVisibility = () => Promise.reject(new Error('down'));
    await expect(visibleTools(['a'], undefined, decide)).resolves.toEqual([]);
  });
});
