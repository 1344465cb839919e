import { describe, expect, test } from 'vitest';
import { DEV_PDP_DEFAULTS } from '../../src/defaults.js';
import { compilePolicy, InvalidPolicyError } from '../../src/policy.js';
import { compileLinearRegex, REGEX_CACHE_SIZE } from '../../src/regex.js';

function refusal(content: string): InvalidPolicyError {
  try {
    compilePolicy({
      agents: ['a'],
      latches: [
        { id: 'ok', stage: 'input', content: 'x', verdict: 'BLOCK' },
        { id: 'the-latch', stage: 'input', content, verdict: 'BLOCK' },
      ],
    });
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidPolicyError);
    return error as InvalidPolicyError;
  }
  throw new Error('expected the policy to be refused');
}

describe('policy regexes are RE2 syntax: what has no linear-time algorithm is refused at load, naming the latch', () => {
  test.each([
    ['lookahead', 'a(?=b)'],
    ['negative lookahead', '(?!https?:)\\S+'],
    ['lookbehind', '(?<=password: )\\S+'],
    ['negative lookbehind', '(?<![\\d-])\\d{3}'],
    ['a backreference', '(a)\\1'],
    ['a named backreference', '(?<x>a)\\k<x>'],
    ['a possessive quantifier', 'a++'],
    ['a \\u escape', '\\u0041'],
    ['an unbalanced group', '('],
  ])('%s is refused', (_what, source) => {
    const error = refusal(source);
    expect(error.code).toBe('policy_invalid');
    expect(error.option).toBe('policy');
    expect(error.issues).toEqual([{ path: 'latches[1].content', latch: 'the-latch', message: expect.any(String) }]);
    expect(error.message).toContain('the-latch');
  });

  test('lookaround and backreferences are named as such', () => {
    expect(refusal('(?<=a)b').issues[0]?.message).toMatch(/lookaround/);
    expect(refusal('(a)\\1').issues[0]?.message).toMatch(/backreference/);
  });

  test('a `matches` condition is held to the same rule', () => {
    try {
      compilePolicy({
        agents: ['a'],
        latches: [{ id: 'm', stage: 'action', when: { 'args.to': { matches: '(?!x)y' } }, verdict: 'BLOCK' }],
      });
      expect.unreachable();
    } catch (error) {
      expect((error as InvalidPolicyError).issues).toEqual([
        { path: 'latches[0].when["args.to"].matches', latch: 'm', message: expect.stringMatching(/lookaround/) },
      ]);
    }
  });

  test('an escaped parenthesis is not mistaken for lookaround', () => {
    expect(compileLinearRegex('\\(?=').ok).toBe(true);
  });

  test('RE2 features are accepted: classes, \\p{Lu}, lazy quantifiers, (?i), \\b, [\\s\\S]', () => {
    for (const source of ['\\p{Lu}\\d+', '[\\s\\S]*?END', '(?i)secret', '\\bword\\b', '(?P<n>a)|(?<m>b)']) {
      expect(compileLinearRegex(source).ok).toBe(true);
    }
  });

  test('redaction replaces every match literally ($& and $1 stay text)', () => {
    const compiled = compileLinearRegex('\\d+');
    if (!compiled.ok) throw new Error('compiles');
    expect(compiled.regex.replaceAll('a1b22c', '[$&$1]')).toBe('a[$&$1]b[$&$1]c');
  });

  test('searching is linear: 100,000 spaces against adjacent \\s* answers', () => {
    const compiled = compileLinearRegex('\\s*\\s*\\s*x');
    if (!compiled.ok) throw new Error('compiles');
    expect(compiled.regex.test(' '.repeat(100_000))).toBe(false);
  });
});

describe('a policy regex is compiled once per source, in a bounded cache', () => {
  test('the same source gives the same frozen answer: loading a policy again compiles nothing', () => {
    const first = compileLinearRegex('cache-me-[0-9]+');
    expect(compileLinearRegex('cache-me-[0-9]+')).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    const refused = compileLinearRegex('(cache)\\1');
    expect(compileLinearRegex('(cache)\\1')).toBe(refused);
    expect(refused.ok).toBe(false);
  });

  test('a source longer than maxRegexLength (refused by the policy schema) is never kept', () => {
    const long = `x${'y'.repeat(DEV_PDP_DEFAULTS.maxRegexLength)}`;
    const first = compileLinearRegex(long);
    expect(first.ok).toBe(true);
    expect(compileLinearRegex(long)).not.toBe(first);
  });

  test(`past REGEX_CACHE_SIZE (${REGEX_CACHE_SIZE}) sources the oldest is dropped and compiled anew`, () => {
    const oldest = compileLinearRegex('evicted-first');
    for (let i = 0; i < REGEX_CACHE_SIZE; i++) compileLinearRegex(`filler-${i}`);
    const again = compileLinearRegex('evicted-first');
    expect(again).not.toBe(oldest);
    expect(again.ok).toBe(true);
    if (!again.ok) throw new Error('compiles');
    expect(again.regex.test('xx evicted-first xx')).toBe(true);
  });
});

describe('counted repetitions are bounded (DEV_PDP_DEFAULTS.maxRegexRepeat, 200)', () => {
  test('refuses a repetition count over 200: it multiplies the time every text takes (a {1000} held the PDP 35 s on 1 MiB)', () => {
    expect(DEV_PDP_DEFAULTS.maxRegexRepeat).toBe(200);
    for (const source of [
      '[\\w\\s]{1000}$',
      'a{201}',
      'a{5,201}',
      'a{201,}',
      '(?:ab){300}',
      '[{]{300}',
      '(?:[\\w\\s]{200}){5}$',
      '(?:(?:a{10}){10}){10}',
      '\\Q[\\E(?:\\w|\\s){1000}$',
      '(?i:[\\w\\s]{1000})',
    ]) {
      const compiled = compileLinearRegex(source);
      expect(compiled.ok, source).toBe(false);
      if (!compiled.ok) expect(compiled.reason).toMatch(/repetition count over 200/);
    }
  });

  test('keeps counts up to 200, and braces that are not a repetition (escapes, classes, \\x{...}, \\p{...})', () => {
    for (const source of [
      '\\d{16}',
      'a{200}',
      'a{2,200}',
      '[\\s\\S]{0,160}',
      '(?:a{10}){20}',
      '\\Q{1000}\\E',
      '(a{100})(b{100})',
      '\\x{1000}',
      '\\p{Lu}+',
      '[{]1000[}]',
      '\\{1000\\}',
      'a{,1000}',
      'x{',
    ]) {
      expect(compileLinearRegex(source).ok, source).toBe(true);
    }
  });
});
