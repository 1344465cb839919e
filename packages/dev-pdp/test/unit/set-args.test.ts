import { describe, expect, test } from 'vitest';
import { evaluatePolicy } from '../../src/evaluate.js';
import { compilePolicy, InvalidPolicyError, type LatchSpec } from '../../src/policy.js';

const CAP: LatchSpec = {
  id: 'cap-limit',
  stage: 'action',
  tool: 'search_*',
  verdict: 'WARN',
  setArgs: { 'args.limit': 10, 'args.filter.safe': true },
  reason: 'searches are capped',
};

function issuesOf(latch: Record<string, unknown>) {
  try {
    compilePolicy({ agents: ['a'], latches: [latch] });
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidPolicyError);
    return (error as InvalidPolicyError).issues.map((i) => i.path);
  }
  return [];
}

describe('setArgs is allowed only with verdict WARN on the action stage', () => {
  test.each([
    ['BLOCK', 'action'],
    ['ESCALATE', 'action'],
    ['ALLOW', 'action'],
  ])('verdict %s is refused', (verdict, stage) => {
    expect(issuesOf({ id: 's', stage, verdict, setArgs: { 'args.x': 1 } })).toEqual(['latches[0].setArgs']);
  });

  test('a text stage is refused, alone or beside action', () => {
    expect(issuesOf({ id: 's', stage: 'output', verdict: 'WARN', setArgs: { 'args.x': 1 } })).toEqual([
      'latches[0].setArgs',
    ]);
    expect(issuesOf({ id: 's', stage: ['action', 'input'], verdict: 'WARN', setArgs: { 'args.x': 1 } })).toEqual([
      'latches[0].setArgs',
    ]);
  });

  test('keys are dotted args paths; values are JSON', () => {
    expect(issuesOf({ id: 's', stage: 'action', verdict: 'WARN', setArgs: { limit: 1 } })).toHaveLength(1);
    expect(issuesOf({ id: 's', stage: 'action', verdict: 'WARN', setArgs: { 'args.x': Number.NaN } })).toHaveLength(1);
    expect(
      issuesOf({ id: 's', stage: 'action', verdict: 'WARN', setArgs: { 'args.x': { y: [1, null, 'z'] } } }),
    ).toEqual([]);
  });
});

describe('transformedArgs are the args with the setArgs paths set', () => {
  test('paths are set, objects created as needed, the request untouched', () => {
    const args = { q: 'shoes', limit: 500 };
    const out = evaluatePolicy(compilePolicy({ agents: ['a'], latches: [CAP] }), {
      stage: 'action',
      tool: 'search_products',
      args,
    });
    expect(out).toMatchObject({ verdict: 'WARN', latches: ['cap-limit'], reason: 'searches are capped' });
    expect(out.transformedArgs).toEqual({ q: 'shoes', limit: 10, filter: { safe: true } });
    expect(args).toEqual({ q: 'shoes', limit: 500 });
  });

  test('a scalar in the way is replaced by an object', () => {
    const out = evaluatePolicy(compilePolicy({ agents: ['a'], latches: [CAP] }), {
      stage: 'action',
      tool: 'search_x',
      args: { filter: 'none' },
    });
    expect(out.transformedArgs).toEqual({ filter: { safe: true }, limit: 10 });
  });

  test('latches apply in policy order: a later latch wins on the same path', () => {
    const later: LatchSpec = { id: 'tighter', stage: 'action', verdict: 'WARN', setArgs: { 'args.limit': 3 } };
    const out = evaluatePolicy(compilePolicy({ agents: ['a'], latches: [CAP, later] }), {
      stage: 'action',
      tool: 'search_x',
      args: {},
    });
    expect(out.transformedArgs).toEqual({ limit: 3, filter: { safe: true } });
  });

  test('a path named __proto__ becomes an own property, never a prototype', () => {
    const latch: LatchSpec = { id: 'p', stage: 'action', verdict: 'WARN', setArgs: { 'args.__proto__.admin': true } };
    const out = evaluatePolicy(compilePolicy({ agents: ['a'], latches: [latch] }), {
      stage: 'action',
      tool: 't',
      args: {},
    });
    const transformed = out.transformedArgs as Record<string, unknown>;
    expect(Object.hasOwn(transformed, '__proto__')).toBe(true);
    expect((transformed as { admin?: unknown }).admin).toBeUndefined();
    expect(({} as { admin?: unknown }).admin).toBeUndefined();
  });

  test('no transformedArgs when a more severe latch wins, or when no setArgs latch engaged', () => {
    const block: LatchSpec = { id: 'b', stage: 'action', tool: 'search_secret', verdict: 'BLOCK' };
    const policy = compilePolicy({ agents: ['a'], latches: [CAP, block] });
    const blocked = evaluatePolicy(policy, { stage: 'action', tool: 'search_secret', args: {} });
    expect(blocked.verdict).toBe('BLOCK');
    expect(blocked).not.toHaveProperty('transformedArgs');
    const plain = evaluatePolicy(policy, { stage: 'action', tool: 'other', args: {} });
    expect(plain).toEqual({ verdict: 'ALLOW', latches: [] });
  });
});
