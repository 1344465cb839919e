import { describe, expect, test } from 'vitest';
import type { Stage } from '../../../../src/decision.js';
import { expectOptionError } from '../../../../test/support/options.js';
import { type EvaluationInput, evaluatePolicy } from '../../src/evaluate.js';
import { compilePolicy, type LatchSpec } from '../../src/policy.js';

function policyOf(...latches: LatchSpec[]) {
  return compilePolicy({ agents: ['support-ai'], latches });
}

function action(tool: string, args: Record<string, unknown> = {}): EvaluationInput {
  return { stage: 'action', tool, args };
}

function engaged(latch: LatchSpec, input: EvaluationInput): boolean {
  return evaluatePolicy(policyOf(latch), input).latches.includes(latch.id);
}

describe('tool globs (normalized names, * = any run, anchored)', () => {
  test.each([
    ['bank_*', 'bank_manager_transfer_funds', true],
    ['bank_*', 'banking', false],
    ['bank_*', 'bank_', true], // not a normalized name, but * may be empty
    ['bank_*', 'my_bank_transfer', false],
    ['*', 'refund_payment', true],
    ['*', 'x', true],
    ['refund_payment', 'refund_payment', true],
    ['refund_payment', 'refund_payment_v2', false],
    ['refund_payment', 'pre_refund_payment', false],
    ['*_delete', 'user_delete', true],
    ['*_delete', 'delete', false],
    ['*delete*', 'delete', true],
    ['*delete*', 'bulk_delete_users', true],
    ['send_*_email', 'send_email', false],
    ['send_*_email', 'send_bulk_email', true],
    ['send*email', 'send_email', true],
    ['a*b*c', 'a_x_b_y_c', true],
    ['a*b*c', 'a_x_c', false],
  ])('%s vs %s -> %s', (pattern, tool, expected) => {
    expect(engaged({ id: 'g', stage: 'action', tool: pattern, verdict: 'BLOCK' }, action(tool))).toBe(expected);
  });

  test('a latch without tool matches every tool on its stage', () => {
    expect(engaged({ id: 'any', stage: 'action', verdict: 'WARN' }, action('whatever'))).toBe(true);
  });

  test('regex characters in a pattern are literal (only * is special)', () => {
    // "." is not allowed in a normalized pattern at all
    expectOptionError(
      () => policyOf({ id: 'dot', stage: 'action', tool: 'refund.payment', verdict: 'BLOCK' }),
      'policy',
    );
  });
});

describe('stages', () => {
  test.each<[Stage | Stage[], Stage, boolean]>([
    ['output', 'output', true],
    ['output', 'delivery', false],
    [['output', 'delivery'], 'delivery', true],
    [['output', 'delivery'], 'input', false],
    [['input', 'context_egress', 'output', 'delivery'], 'context_egress', true],
  ])('stage %j on %s -> %s', (stage, at, expected) => {
    const latch: LatchSpec = { id: 's', stage, content: 'x', verdict: 'BLOCK' };
    expect(engaged(latch, { stage: at, content: 'x' })).toBe(expected);
  });

  test('an action latch does not engage on a text stage and vice versa', () => {
    const policy = policyOf(
      { id: 'act', stage: 'action', verdict: 'BLOCK' },
      { id: 'txt', stage: 'output', verdict: 'BLOCK' },
    );
    expect(evaluatePolicy(policy, { stage: 'output', content: 'hi' }).latches).toEqual(['txt']);
    expect(evaluatePolicy(policy, action('t')).latches).toEqual(['act']);
    expect(evaluatePolicy(policy, { stage: 'input', content: 'hi' })).toEqual({ verdict: 'ALLOW', latches: [] });
  });
});

describe('content regex (u flag, searched)', () => {
  test.each([
    ['\\b\\d{3}[-.]\\d{3}[-.]\\d{4}\\b', 'call 555-123-4567 today', true],
    ['\\b\\d{3}[-.]\\d{3}[-.]\\d{4}\\b', 'call 5551234567 today', false],
    ['^secret', 'not secret', false],
    ['secret', 'not secret', true],
    ['\\p{Lu}{3}', 'abc DEF', true], // \p needs the u flag
    ['^.$', '😀', true], // one code point under u
  ])('%s in %j -> %s', (regex, content, expected) => {
    expect(engaged({ id: 'c', stage: 'input', content: regex, verdict: 'BLOCK' }, { stage: 'input', content })).toBe(
      expected,
    );
  });

  test('a latch without content matches any content on its stage', () => {
    expect(engaged({ id: 'all', stage: 'delivery', verdict: 'WARN' }, { stage: 'delivery', content: '' })).toBe(true);
  });

  test('matching is stateless across calls (no lastIndex carry-over)', () => {
    const policy = policyOf({ id: 'c', stage: 'output', content: 'a', verdict: 'BLOCK' });
    for (let i = 0; i < 3; i++) expect(evaluatePolicy(policy, { stage: 'output', content: 'a' }).verdict).toBe('BLOCK');
  });
});

describe('when operators', () => {
  const nested = { amount: 600, currency: 'EUR', zero: 0, nil: null, flag: false, to: { domain: 'example.com' } };
  test.each<[string, Record<string, unknown>, Record<string, unknown>, boolean]>([
    // eq: strict equality, no type conversion
    ['args.amount', { eq: 600 }, nested, true],
    ['args.amount', { eq: '600' }, nested, false],
    ['args.amount', { eq: 601 }, nested, false],
    ['args.nil', { eq: null }, nested, true],
    ['args.zero', { eq: false }, nested, false],
    ['args.flag', { eq: false }, nested, true],
    ['args.missing', { eq: null }, nested, false],
    ['args.to.domain', { eq: 'example.com' }, nested, true],
    // ne: holds when absent
    ['args.currency', { ne: 'USD' }, nested, true],
    ['args.currency', { ne: 'EUR' }, nested, false],
    ['args.amount', { ne: '600' }, nested, true],
    ['args.missing', { ne: 'x' }, nested, true],
    ['args.to.missing', { ne: 'x' }, nested, true],
    // gt gte lt lte: numbers only
    ['args.amount', { gt: 500 }, nested, true],
    ['args.amount', { gt: 600 }, nested, false],
    ['args.amount', { gte: 600 }, nested, true],
    ['args.amount', { gte: 601 }, nested, false],
    ['args.amount', { lt: 601 }, nested, true],
    ['args.amount', { lt: 600 }, nested, false],
    ['args.amount', { lte: 600 }, nested, true],
    ['args.amount', { lte: 599 }, nested, false],
    ['args.amount', { gt: 5 }, { amount: '600' }, false],
    ['args.amount', { lt: 5 }, { amount: null }, false],
    ['args.amount', { lte: 5 }, { amount: false }, false],
    ['args.amount', { gte: 0 }, { amount: [1] }, false],
    ['args.missing', { lt: 1e9 }, nested, false],
    ['args.zero', { gte: 0 }, nested, true],
    // in: strict membership
    ['args.currency', { in: ['EUR', 'USD'] }, nested, true],
    ['args.currency', { in: ['GBP'] }, nested, false],
    ['args.amount', { in: ['600'] }, nested, false],
    ['args.amount', { in: [600] }, nested, true],
    ['args.missing', { in: [null] }, nested, false],
    ['args.currency', { in: [] }, nested, false],
    // exists
    ['args.amount', { exists: true }, nested, true],
    ['args.nil', { exists: true }, nested, true],
    ['args.missing', { exists: true }, nested, false],
    ['args.missing', { exists: false }, nested, true],
    ['args.amount', { exists: false }, nested, false],
    ['args.to.domain.x', { exists: false }, nested, true],
    // matches: strings only, searched
    ['args.to.domain', { matches: '\\.com$' }, nested, true],
    ['args.to.domain', { matches: '^com' }, nested, false],
    ['args.amount', { matches: '600' }, nested, false],
    ['args.missing', { matches: '.*' }, nested, false],
  ])('%s %j on %j -> %s', (path, condition, args, expected) => {
    const latch = { id: 'w', stage: 'action', verdict: 'BLOCK', when: { [path]: condition } } as LatchSpec;
    expect(engaged(latch, action('t', args))).toBe(expected);
  });

  test('every condition must hold', () => {
    const latch: LatchSpec = {
      id: 'both',
      stage: 'action',
      verdict: 'BLOCK',
      when: { 'args.amount': { gt: 100 }, 'args.currency': { eq: 'EUR' } },
    };
    expect(engaged(latch, action('t', { amount: 200, currency: 'EUR' }))).toBe(true);
    expect(engaged(latch, action('t', { amount: 200, currency: 'USD' }))).toBe(false);
    expect(engaged(latch, action('t', { amount: 50, currency: 'EUR' }))).toBe(false);
  });

  test('paths walk own properties of plain objects only', () => {
    const probe = (path: string, condition: Record<string, unknown>, args: Record<string, unknown>) =>
      engaged(
        { id: 'p', stage: 'action', verdict: 'BLOCK', when: { [path]: condition } } as LatchSpec,
        action('t', args),
      );
    expect(probe('args.constructor', { exists: true }, {})).toBe(false);
    expect(probe('args.toString', { exists: true }, {})).toBe(false);
    expect(probe('args.__proto__', { exists: true }, {})).toBe(false);
    expect(probe('args.a.constructor.name', { eq: 'Object' }, { a: {} })).toBe(false);
    expect(probe('args.a.length', { eq: 2 }, { a: 'xy' })).toBe(false);
    // arrays are walked by a decimal index only: not by length, not by a signed or padded number
    expect(probe('args.a.0', { eq: 1 }, { a: [1] })).toBe(true);
    expect(
      probe('args.to.1.domain', { eq: 'evil.example' }, { to: [{ domain: 'a.example' }, { domain: 'evil.example' }] }),
    ).toBe(true);
    expect(probe('args.a.1', { exists: true }, { a: [1] })).toBe(false);
    expect(probe('args.a.length', { eq: 1 }, { a: [1] })).toBe(false);
    expect(probe('args.a.01', { eq: 2 }, { a: [1, 2] })).toBe(false);
    expect(probe('args.a.-1', { exists: true }, { a: [1] })).toBe(false);
    expect(probe('args.a.size', { exists: true }, { a: new Map([['size', 1]]) })).toBe(false);
    const inherited = Object.create({ hidden: 1 }) as Record<string, unknown>;
    expect(probe('args.o.hidden', { eq: 1 }, { o: inherited })).toBe(false);
    expect(probe('args.__proto__.x', { eq: 1 }, JSON.parse('{"__proto__":{"x":1}}'))).toBe(true); // own data key
  });
});

describe('severity, reason, latch order', () => {
  test.each<[string[], string]>([
    [['ALLOW'], 'ALLOW'],
    [['WARN', 'ALLOW'], 'WARN'],
    [['WARN', 'ESCALATE'], 'ESCALATE'],
    [['ESCALATE', 'BLOCK', 'WARN'], 'BLOCK'],
    [['BLOCK', 'ALLOW'], 'BLOCK'],
  ])('%j -> %s', (verdicts, expected) => {
    const latches = verdicts.map((verdict, i) => ({ id: `l${i}`, stage: 'action', verdict }) as LatchSpec);
    const result = evaluatePolicy(policyOf(...latches), action('t'));
    expect(result.verdict).toBe(expected);
    expect(result.latches).toEqual(latches.map((l) => l.id));
  });

  test('reason is that of the first latch with the winning verdict; latches in policy order', () => {
    const policy = policyOf(
      { id: 'w1', stage: 'action', verdict: 'WARN', reason: 'warn one' },
      { id: 'b1', stage: 'action', verdict: 'BLOCK', reason: 'block one' },
      { id: 'skip', stage: 'action', tool: 'other', verdict: 'BLOCK', reason: 'not engaged' },
      { id: 'b2', stage: 'action', verdict: 'BLOCK', reason: 'block two' },
      { id: 'e1', stage: 'action', verdict: 'ESCALATE', reason: 'esc' },
    );
    expect(evaluatePolicy(policy, action('t'))).toEqual({
      verdict: 'BLOCK',
      reason: 'block one',
      latches: ['w1', 'b1', 'b2', 'e1'],
    });
  });

  test('the deciding latch without a reason gives no reason', () => {
    const policy = policyOf(
      { id: 'b1', stage: 'action', verdict: 'BLOCK' },
      { id: 'b2', stage: 'action', verdict: 'BLOCK', reason: 'second' },
    );
    expect(evaluatePolicy(policy, action('t')).reason).toBeUndefined();
  });

  test('no engaged latch is ALLOW with no latches', () => {
    expect(evaluatePolicy(policyOf(), action('t'))).toEqual({ verdict: 'ALLOW', latches: [] });
  });
});

describe('redaction on a text WARN', () => {
  const phone = {
    id: 'phone',
    stage: ['output', 'delivery'],
    content: '\\b\\d{3}[-.]\\d{3}[-.]\\d{4}\\b',
    verdict: 'WARN',
    redact: '[phone]',
  } as LatchSpec;
  const email = {
    id: 'email',
    stage: ['output', 'delivery'],
    content: '[\\w.+-]+@[\\w-]+\\.[\\w.]+',
    verdict: 'WARN',
    redact: '[email]',
  } as LatchSpec;

  test('every match of every engaged redact is replaced, in policy order', () => {
    const result = evaluatePolicy(policyOf(phone, email), {
      stage: 'output',
      content: 'call 555-123-4567 or 555.765.4321, mail a.b@example.com',
    });
    expect(result).toEqual({
      verdict: 'WARN',
      latches: ['phone', 'email'],
      transformedContent: 'call [phone] or [phone], mail [email]',
    });
  });

  test('redacts apply in policy order, each to the text the earlier ones produced', () => {
    const first = { id: 'first', stage: 'output', content: 'abc', verdict: 'WARN', redact: 'xyz' } as LatchSpec;
    const second = { id: 'second', stage: 'output', content: 'x', verdict: 'WARN', redact: '_' } as LatchSpec;
    expect(evaluatePolicy(policyOf(first, second), { stage: 'output', content: 'abc x' }).transformedContent).toBe(
      '_yz _',
    );
    expect(evaluatePolicy(policyOf(second, first), { stage: 'output', content: 'abc x' }).transformedContent).toBe(
      'xyz _',
    );
  });

  test('the redact text is literal ($& is not a replacement pattern)', () => {
    const latch = { id: 'd', stage: 'output', content: 'x+', verdict: 'WARN', redact: '$&$1' } as LatchSpec;
    expect(evaluatePolicy(policyOf(latch), { stage: 'output', content: 'axxb' }).transformedContent).toBe('a$&$1b');
  });

  test('a text WARN without redactions carries the content unchanged', () => {
    const latch = { id: 'note', stage: 'output', content: 'refund', verdict: 'WARN' } as LatchSpec;
    expect(evaluatePolicy(policyOf(latch), { stage: 'output', content: 'your refund' }).transformedContent).toBe(
      'your refund',
    );
  });

  test('no transformation when the winning verdict is not WARN', () => {
    const block = { id: 'b', stage: 'output', content: 'secret', verdict: 'BLOCK' } as LatchSpec;
    const result = evaluatePolicy(policyOf(phone, block), { stage: 'output', content: 'secret 555-123-4567' });
    expect(result.verdict).toBe('BLOCK');
    expect(result.transformedContent).toBeUndefined();
    expect(result.latches).toEqual(['phone', 'b']);
  });

  test('an action WARN has no transformedContent', () => {
    const warn = { id: 'w', stage: 'action', verdict: 'WARN' } as LatchSpec;
    expect(evaluatePolicy(policyOf(warn), action('t')).transformedContent).toBeUndefined();
  });
});

describe('a latch tool pattern matches the tool of a context_egress request', () => {
  const latch: LatchSpec = {
    id: 'mail-results',
    stage: 'context_egress',
    tool: '*read_email*',
    content: '\\bpassword\\b',
    verdict: 'BLOCK',
  };

  test('engages when the tool given matches, and not when another tool or none is given', () => {
    const text = 'the password is on the note';
    expect(engaged(latch, { stage: 'context_egress', content: text, tool: 'gmail_read_emails' })).toBe(true);
    expect(engaged(latch, { stage: 'context_egress', content: text, tool: 'web_search' })).toBe(false);
    expect(engaged(latch, { stage: 'context_egress', content: text })).toBe(false);
  });

  test('a tool pattern on a latch with neither action nor context_egress is refused', () => {
    expectOptionError(() => policyOf({ id: 'x', stage: 'output', tool: 'a', verdict: 'BLOCK' }), 'policy');
  });
});
