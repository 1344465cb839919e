import { describe, expect, test } from 'vitest';
import type { Stage, Verdict } from '../../../../../src/decision.js';
import { evaluatePolicy } from '../../../src/evaluate.js';
import { compilePolicy, InvalidPolicyError, type LatchSpec } from '../../../src/policy.js';
import { EMPTY_FACTS, type HistoryStep, type SessionView } from '../../../src/sessions/state.js';

const GROUPS = { fetch: ['web_fetch', 'read_*_email'], money: ['send_money', 'bank_*'] };

function policyOf(...latches: Partial<LatchSpec>[]) {
  return compilePolicy({
    agents: ['a'],
    toolGroups: GROUPS,
    latches: latches.map((l, i) => ({ id: `l${i}`, stage: 'action', verdict: 'BLOCK', ...l })),
  });
}

function view(labels: string[] = [], history: HistoryStep[] = []): SessionView {
  return { labels: new Set(labels), history, steps: history.length, facts: EMPTY_FACTS };
}

const step = (stage: Stage, verdict: Verdict, tool?: string, latches: string[] = []): HistoryStep =>
  tool === undefined ? { stage, verdict, latches } : { stage, verdict, tool, latches };

const act = (tool: string, session: SessionView) => ({ stage: 'action' as const, tool, args: {}, session });

function issuesOf(policy: unknown) {
  try {
    compilePolicy(policy);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidPolicyError);
    return [...(error as InvalidPolicyError).issues];
  }
  throw new Error('expected the policy to be refused');
}

describe('labels on latches', () => {
  test('an engaged latch reports its labels, whatever its verdict; a label-only latch is an ALLOW', () => {
    const policy = policyOf(
      { tool: '@fetch', verdict: 'ALLOW', labels: ['untrusted', 'web'] },
      { tool: 'web_fetch', verdict: 'BLOCK', labels: ['denied', 'web'] },
    );
    expect(evaluatePolicy(policy, act('read_work_email', view()))).toEqual({
      verdict: 'ALLOW',
      latches: ['l0'],
      labels: ['untrusted', 'web'],
    });
    const both = evaluatePolicy(policy, act('web_fetch', view()));
    expect(both.verdict).toBe('BLOCK');
    expect(both.labels).toEqual(['untrusted', 'web', 'denied']);
    expect(evaluatePolicy(policy, act('other', view()))).toEqual({ verdict: 'ALLOW', latches: [] });
  });
});

describe('session conditions', () => {
  test('has, hasAny and lacks read the labels before the step', () => {
    const policy = policyOf(
      { tool: '@money', session: { has: 'untrusted' }, verdict: 'ESCALATE' },
      { tool: '@money', session: { hasAny: ['x', 'denied'] }, verdict: 'BLOCK' },
      { tool: '@money', session: [{ lacks: 'untrusted' }, { lacks: 'denied' }], verdict: 'WARN' },
    );
    expect(evaluatePolicy(policy, act('send_money', view())).latches).toEqual(['l2']);
    expect(evaluatePolicy(policy, act('send_money', view(['untrusted']))).latches).toEqual(['l0']);
    expect(evaluatePolicy(policy, act('bank_transfer', view(['denied']))).latches).toEqual(['l1']);
    expect(evaluatePolicy(policy, act('bank_transfer', view(['denied', 'untrusted']))).latches).toEqual(['l0', 'l1']);
  });

  test('seen matches a past step by tool (pattern or @group), stage, verdict and latch, every field given', () => {
    const history = [step('action', 'ALLOW', 'read_work_email', ['tag']), step('input', 'BLOCK')];
    const cases: [Record<string, unknown>, boolean][] = [
      [{ tool: '@fetch' }, true],
      [{ tool: 'read_*' }, true],
      [{ tool: '@money' }, false],
      [{ stage: 'input' }, true],
      [{ stage: ['output', 'delivery'] }, false],
      [{ verdict: 'BLOCK' }, true],
      [{ verdict: 'BLOCK', stage: 'action' }, false],
      [{ latch: 'tag' }, true],
      [{ latch: ['l0'] }, false],
      [{ tool: '@fetch', verdict: 'ALLOW', stage: 'action', latch: 'tag' }, true],
    ];
    for (const [filter, engaged] of cases) {
      const policy = compilePolicy({
        agents: ['a'],
        toolGroups: GROUPS,
        latches: [
          { id: 'tag', stage: 'action', tool: 'nothing_matches_this', verdict: 'ALLOW' },
          { id: 'l0', stage: 'action', tool: '@money', session: { seen: filter }, verdict: 'BLOCK' },
        ],
      });
      expect(evaluatePolicy(policy, act('send_money', view([], history))).verdict, JSON.stringify(filter)).toBe(
        engaged ? 'BLOCK' : 'ALLOW',
      );
    }
  });

  test('within looks only at the last n steps before this one', () => {
    const policy = policyOf({ tool: '@money', session: { seen: { tool: '@fetch', within: 2 } } });
    const fetched = step('action', 'ALLOW', 'web_fetch');
    const other = step('action', 'ALLOW', 'lookup');
    expect(evaluatePolicy(policy, act('send_money', view([], [fetched, other]))).verdict).toBe('BLOCK');
    expect(evaluatePolicy(policy, act('send_money', view([], [fetched, other, other]))).verdict).toBe('ALLOW');
    expect(evaluatePolicy(policy, act('send_money', view([], [other, other, fetched]))).verdict).toBe('BLOCK');
  });

  test('count holds with at least gte matching past steps, within counted from the last one', () => {
    const policy = policyOf({ tool: '@money', session: { count: { verdict: 'BLOCK', within: 3 }, gte: 2 } });
    const denied = step('action', 'BLOCK', 'x');
    const fine = step('action', 'ALLOW', 'x');
    expect(evaluatePolicy(policy, act('send_money', view([], [denied, fine]))).verdict).toBe('ALLOW');
    expect(evaluatePolicy(policy, act('send_money', view([], [denied, fine, denied]))).verdict).toBe('BLOCK');
    expect(evaluatePolicy(policy, act('send_money', view([], [denied, fine, denied, fine, fine]))).verdict).toBe(
      'ALLOW',
    );
  });

  test('without a session a session condition is read against an empty state', () => {
    const policy = policyOf(
      { tool: '@money', session: { lacks: 'untrusted' }, verdict: 'WARN' },
      { tool: '@money', session: { seen: { stage: 'input' } } },
    );
    expect(evaluatePolicy(policy, { stage: 'action', tool: 'send_money', args: {} }).latches).toEqual(['l0']);
  });

  test('evaluation reads each past step once, however many conditions look at the history', () => {
    const conditions = Array.from({ length: 12 }, (_, i) => ({ count: { tool: `tool_${i}` }, gte: 1 }));
    const policy = policyOf(
      ...Array.from({ length: 8 }, () => ({ tool: '@money', session: conditions, verdict: 'BLOCK' as const })),
      { tool: '@money', session: { seen: { verdict: 'WARN', within: 5 } } },
    );
    const steps = Array.from({ length: 256 }, (_, i) => step('action', 'ALLOW', `tool_${i % 12}`));
    let reads = 0;
    const history = new Proxy(steps, {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
        return Reflect.get(target, key, receiver);
      },
    });
    const out = evaluatePolicy(policy, act('send_money', view([], history)));
    expect(out.verdict).toBe('BLOCK');
    expect(reads).toBe(256);
    // and no pass at all when no latch with history conditions is in the running
    reads = 0;
    evaluatePolicy(policy, act('lookup', view([], history)));
    expect(reads).toBe(0);
  });
});

describe('notMatches', () => {
  const policy = compilePolicy({
    agents: ['a'],
    latches: [
      {
        id: 'outside-mail',
        stage: 'action',
        tool: 'send_email',
        when: { 'args.to': { notMatches: '@example\\.com$' } },
        verdict: 'ESCALATE',
      },
    ],
  });
  test.each([
    [{ to: 'ann@example.com' }, 'ALLOW'],
    [{ to: 'mallory@evil.test' }, 'ESCALATE'],
    [{ to: 42 }, 'ESCALATE'],
    [{}, 'ESCALATE'],
  ])('%j gives %s', (args, verdict) => {
    expect(evaluatePolicy(policy, { stage: 'action', tool: 'send_email', args }).verdict).toBe(verdict);
  });
  test('a notMatches regex that is not RE2 is refused at load', () => {
    const issues = issuesOf({
      agents: ['a'],
      latches: [{ id: 'x', stage: 'action', when: { 'args.to': { notMatches: '(?!a)' } }, verdict: 'BLOCK' }],
    });
    expect(issues.map((i) => i.path)).toContain('latches[0].when["args.to"].notMatches');
  });
});

describe('load errors name the latch and the field', () => {
  const base = (latch: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    agents: ['a'],
    toolGroups: GROUPS,
    ...extra,
    latches: [
      { id: 'first', stage: 'action', verdict: 'BLOCK' },
      { id: 'guard', stage: 'action', verdict: 'BLOCK', ...latch },
    ],
  });
  test.each([
    ['an unknown @group in tool', { tool: '@nope' }, 'latches[1].tool'],
    ['an unknown @group in a filter', { session: { seen: { tool: '@nope' } } }, 'latches[1].session.seen.tool'],
    ['an unknown latch in a filter', { session: [{ seen: { latch: 'nope' } }] }, 'latches[1].session[0].seen.latch'],
    ['an empty filter', { session: { seen: {} } }, 'latches[1].session.seen'],
    ['an empty filter in count', { session: [{ has: 'x' }, { count: {}, gte: 1 }] }, 'latches[1].session[1].count'],
    ['a label with a space', { labels: ['un trusted'] }, 'latches[1].labels[0]'],
    ['a label over 64 characters', { labels: ['x'.repeat(65)] }, 'latches[1].labels[0]'],
    ['an empty label list', { labels: [] }, 'latches[1].labels'],
    ['a bad label in has', { session: { has: 'a/b' } }, 'latches[1].session.has'],
    ['a bad label in hasAny', { session: { hasAny: ['ok', ''] } }, 'latches[1].session.hasAny[1]'],
    ['an empty hasAny', { session: { hasAny: [] } }, 'latches[1].session.hasAny'],
    ['count without gte', { session: { count: { stage: 'input' } } }, 'latches[1].session'],
    ['gte 0', { session: { count: { stage: 'input' }, gte: 0 } }, 'latches[1].session.gte'],
    ['within 0', { session: { seen: { stage: 'input', within: 0 } } }, 'latches[1].session.seen.within'],
    ['a fractional within', { session: { seen: { stage: 'input', within: 1.5 } } }, 'latches[1].session.seen.within'],
    ['an unknown filter field', { session: { seen: { tools: 'x' } } }, 'latches[1].session.seen'],
    ['an unknown condition', { session: { hasAll: ['x'] } }, 'latches[1].session'],
    ['two conditions in one object', { session: { has: 'x', lacks: 'y' } }, 'latches[1].session'],
    ['an empty condition list', { session: [] }, 'latches[1].session'],
    ['a bad stage in a filter', { session: { seen: { stage: 'acton' } } }, 'latches[1].session.seen.stage'],
  ])('%s', (_name, latch, path) => {
    const issues = issuesOf(base(latch));
    const found = issues.find((i) => i.path === path);
    expect(found, JSON.stringify(issues)).toBeDefined();
    expect(found?.latch).toBe('guard');
  });

  test.each([
    ['a group name with a slash', { 'a/b': ['x'] }, 'toolGroups["a/b"]'],
    ['a group name over 64 characters', { ['g'.repeat(65)]: ['x'] }, `toolGroups.${'g'.repeat(65)}`],
    ['an empty group', { g: [] }, 'toolGroups.g'],
    ['a pattern that is not normalized', { g: ['Send-Money'] }, 'toolGroups.g[0]'],
    ['a group inside a group', { g: ['@fetch'] }, 'toolGroups.g[0]'],
  ])('toolGroups: %s', (_name, groups, path) => {
    const issues = issuesOf({ agents: ['a'], toolGroups: groups, latches: [] });
    expect(issues.map((i) => i.path)).toContain(path);
  });

  test('a label of 64 characters from the allowed set loads', () => {
    expect(() => compilePolicy(base({ labels: [`${'a'.repeat(60)}_.:-`] }))).not.toThrow();
  });
});
