import { readFileSync } from 'node:fs';
import { describe, expect, it, test } from 'vitest';
import { compilePolicy, InvalidPolicyError, policyJsonSchema } from '../../src/policy.js';

function issuesOf(policy: unknown): { path: string; message: string }[] {
  try {
    compilePolicy(policy);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidPolicyError);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as InvalidPolicyError).code).toBe('policy_invalid');
    return [...(error as InvalidPolicyError).issues];
  }
  throw new Error('expected the policy to be refused');
}

const paths = (policy: unknown) => issuesOf(policy).map((i) => i.path);

describe('policy validation', () => {
  test('the example policy compiles', () => {
    const policy = compilePolicy(readFileSync(new URL('../../../../demo/policy.json', import.meta.url), 'utf8'));
    expect(policy.agents.size).toBeGreaterThan(0);
    expect(policy.latches.length).toBeGreaterThan(0);
  });

  test('the contract example compiles', () => {
    expect(() =>
      compilePolicy({
        agents: ['support-ai'],
        latches: [
          {
            id: 'refund-review',
            stage: 'action',
            tool: 'refund_payment',
            when: { 'args.amount': { gt: 500 } },
            verdict: 'ESCALATE',
            reason: 'refunds over 500 need review',
          },
          {
            id: 'phone-redaction',
            stage: ['output', 'delivery'],
            content: '\\b\\d{3}[-.]\\d{3}[-.]\\d{4}\\b',
            verdict: 'WARN',
            redact: '[phone]',
            reason: 'phone numbers are redacted',
          },
        ],
      }),
    ).not.toThrow();
  });

  test('a bad regex is reported at its path', () => {
    expect(paths({ agents: ['a'], latches: [{ id: 'x', stage: 'input', content: '(', verdict: 'BLOCK' }] })).toEqual([
      'latches[0].content',
    ]);
    // valid in ECMAScript, refused by RE2: \u escapes and possessive quantifiers
    expect(
      paths({ agents: ['a'], latches: [{ id: 'x', stage: 'input', content: '\\u0041', verdict: 'BLOCK' }] }),
    ).toEqual(['latches[0].content']);
    expect(
      paths({
        agents: ['a'],
        latches: [{ id: 'x', stage: 'action', when: { 'args.a': { matches: '[' } }, verdict: 'BLOCK' }],
      }),
    ).toEqual(['latches[0].when["args.a"].matches']);
  });

  test('every problem is reported at once, by path', () => {
    const found = paths({
      agents: [],
      extra: 1,
      latches: [
        { id: 'a', stage: 'outptu', verdict: 'BLOCK' },
        { id: 'b', stage: 'action', tool: 'Refund-Payment', verdict: 'DENY' },
        { id: 'a', stage: 'input', content: '(', verdict: 'WARN', contnet: 'x' },
        {
          id: 'c',
          stage: 'action',
          when: { amount: { gt: 1 }, 'args.x': { gt: '1' }, 'args.y': { gt: 1, lt: 2 } },
          verdict: 'BLOCK',
        },
      ],
    });
    expect(found).toEqual(
      expect.arrayContaining([
        'agents',
        '(root)',
        'latches[0].stage',
        'latches[1].tool',
        'latches[1].verdict',
        'latches[2].content',
        'latches[2]',
        'latches[2].id',
        'latches[3].when.amount',
        'latches[3].when["args.x"]',
        'latches[3].when["args.y"]',
      ]),
    );
  });

  test.each([
    ['tool on a text-only latch', { id: 'x', stage: 'output', tool: 'send', verdict: 'BLOCK' }, 'latches[0].tool'],
    [
      'when on a text-only latch',
      { id: 'x', stage: 'output', when: { 'args.a': { eq: 1 } }, verdict: 'BLOCK' },
      'latches[0].when',
    ],
    [
      'content on an action-only latch',
      { id: 'x', stage: 'action', content: 'a', verdict: 'BLOCK' },
      'latches[0].content',
    ],
    ['redact without content', { id: 'x', stage: 'output', redact: '[x]', verdict: 'WARN' }, 'latches[0].redact'],
    [
      'redact on a BLOCK',
      { id: 'x', stage: 'output', content: 'a', redact: '[x]', verdict: 'BLOCK' },
      'latches[0].redact',
    ],
    ['empty stage list', { id: 'x', stage: [], verdict: 'BLOCK' }, 'latches[0].stage'],
    ['empty id', { id: '', stage: 'input', verdict: 'BLOCK' }, 'latches[0].id'],
    ['missing verdict', { id: 'x', stage: 'input' }, 'latches[0].verdict'],
    ['lowercase verdict', { id: 'x', stage: 'input', verdict: 'block' }, 'latches[0].verdict'],
    [
      'eq on an object',
      { id: 'x', stage: 'action', when: { 'args.a': { eq: {} } }, verdict: 'BLOCK' },
      'latches[0].when["args.a"]',
    ],
    [
      'unknown operator',
      { id: 'x', stage: 'action', when: { 'args.a': { like: 'x' } }, verdict: 'BLOCK' },
      'latches[0].when["args.a"]',
    ],
    [
      'exists not boolean',
      { id: 'x', stage: 'action', when: { 'args.a': { exists: 1 } }, verdict: 'BLOCK' },
      'latches[0].when["args.a"]',
    ],
    [
      'empty path segment',
      { id: 'x', stage: 'action', when: { 'args..a': { eq: 1 } }, verdict: 'BLOCK' },
      'latches[0].when["args..a"]',
    ],
    ['tool with a trailing _', { id: 'x', stage: 'action', tool: 'bank_', verdict: 'BLOCK' }, 'latches[0].tool'],
  ])('%s', (_name, latch, path) => {
    expect(paths({ agents: ['a'], latches: [latch] })).toContain(path);
  });

  test.each([
    ['not an object', 42],
    ['null', null],
    ['not JSON text', '{ agents: '],
    ['no latches', { agents: ['a'] }],
  ])('%s is refused', (_name, policy) => {
    expect(issuesOf(policy).length).toBeGreaterThan(0);
  });

  test('the error message names paths, not the policy text', () => {
    try {
      compilePolicy({ agents: ['a'], latches: [{ id: 'x', stage: 'input', content: 'SECRET(', verdict: 'BLOCK' }] });
      expect.unreachable();
    } catch (error) {
      expect((error as Error).message).toContain('latches[0].content');
    }
  });

  test('JSON text is accepted as well as an object', () => {
    expect(compilePolicy('{"agents":["a"],"latches":[]}').agents.has('a')).toBe(true);
  });
});

describe('JSON Schema', () => {
  test('schema/policy.schema.json equals a fresh generation (run scripts/gen-policy-schema.js after a build)', () => {
    const committed = readFileSync(new URL('../../schema/policy.schema.json', import.meta.url), 'utf8');
    expect(committed).toBe(`${JSON.stringify(policyJsonSchema(), null, 2)}\n`);
  });

  test('the schema describes the policy format', () => {
    const schema = policyJsonSchema() as { required?: string[]; additionalProperties?: unknown; $schema?: string };
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.required).toEqual(['agents', 'latches']);
    expect(schema.additionalProperties).toBe(false);
  });
});

describe('a policy type error says which operator needs which type', () => {
  const issuesOf = (when: unknown): ReadonlyArray<{ path: string; message: string }> => {
    try {
      compilePolicy({ agents: ['a'], latches: [{ id: 'l', stage: 'action', when, verdict: 'BLOCK' }] });
    } catch (e) {
      return (e as InvalidPolicyError).issues;
    }
    return [];
  };
  it.each([
    [{ 'args.amount': { gt: '5' } }, 'gt needs a number'],
    [{ 'args.amount': { lte: null } }, 'lte needs a number'],
    [{ 'args.to': { in: 'a' } }, 'in needs an array of strings, numbers, booleans or nulls'],
    [{ 'args.to': { matches: 5 } }, 'matches needs a string (an RE2 regex)'],
    [{ 'args.x': { exists: 'yes' } }, 'exists needs true or false'],
    [{ 'args.x': { eq: { a: 1 } } }, 'eq needs a string, number, boolean or null'],
    [{ 'args.x': { gtt: 1 } }, 'unknown operator "gtt": a condition is one of eq ne gt gte lt lte in exists matches'],
    [{ 'args.x': { gt: 1, lt: 5 } }, 'a condition is one operator (eq ne gt gte lt lte in exists matches), not 2'],
  ])('%j: %s', (when, message) => {
    expect(issuesOf(when)).toEqual([{ path: expect.stringContaining('when'), message, latch: 'l' }]);
  });

  it("a regex that RE2 refuses still names the regex's own problem", () => {
    const [issue] = issuesOf({ 'args.to': { matches: '(?=x)' } });
    expect(issue?.message).toMatch(/^matches: .*look/i);
  });
});

test('a policy text that is not JSON names the line and column', () => {
  let issues: unknown;
  try {
    compilePolicy('{\n  "agents": ["a"],\n  "latches": [,]\n}');
  } catch (e) {
    issues = (e as InvalidPolicyError).issues;
  }
  expect(issues).toEqual([
    { path: '(root)', message: 'the policy text is not valid JSON at line 3, column 15 (position 35)' },
  ]);
});
