/**
 * The hand-written shape checks of the PDP's answers (src/wire/shape.ts) read every value the way the
 * zod schemas they replaced did (issue 30: the decision path loads no schema library): the same values
 * pass, and a failing value is failed at the same first path (the path is what `invalid_response`
 * names). The zod schemas below are the old ones, verbatim, kept here as the oracle.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { VERDICTS } from '../../../src/decision.js';
import { checkAuthorizeResponse } from '../../../src/wire/agent-pep.js';
import { checkEvaluationResponse } from '../../../src/wire/authzen.js';
import { type Check, pathText } from '../../../src/wire/shape.js';

const JsonObjectSchema = z.custom<Record<string, unknown>>(
  (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
  'expected a JSON object',
);

const AuthorizeResponseSchema = z.looseObject({
  verdict: z.enum(VERDICTS),
  decisionId: z.string().optional(),
  reason: z.string().optional(),
  latches: z.array(z.string()).optional(),
  sessionLabels: z.array(z.string()).optional(),
  grants: z.array(z.string()).optional(),
  permitId: z.string().min(1).optional(),
  transformedContent: z.string().optional(),
  transformedArgs: JsonObjectSchema.optional(),
  escalationId: z.string().optional(),
  simulated: z.boolean().optional(),
  requestId: z.string().optional(),
  stage: z.string().optional(),
  obligations: z.array(z.unknown()).optional(),
});

const EvaluationResponseSchema = z.looseObject({
  decision: z.boolean(),
  context: z
    .looseObject({
      verdict: z.enum(VERDICTS).optional(),
      permitId: z.string().min(1).optional(),
      transformedContent: z.string().optional(),
      transformedArgs: JsonObjectSchema.optional(),
      escalationId: z.string().optional(),
      decisionId: z.string().optional(),
      requestId: z.string().optional(),
      sessionLabels: z.array(z.string()).optional(),
      grants: z.array(z.string()).optional(),
    })
    .optional(),
});

/** What zod says of `value`: `ok`, or the path of its first issue as the messages print it. */
function zodVerdict(schema: z.ZodType, value: unknown): string {
  const r = schema.safeParse(value);
  return r.success
    ? 'ok'
    : pathText((r.error.issues[0]?.path ?? []).map((k) => (typeof k === 'number' ? k : String(k))));
}

function handVerdict(check: Check, value: unknown): string {
  const at = check(value);
  return at === undefined ? 'ok' : pathText(at);
}

/** Any member value: right types, wrong types, empty strings, arrays of mixed items, nested objects. */
const member = fc.oneof(
  fc.constantFrom(...VERDICTS, 'MAYBE', '', 'x', true, false, null, 0, 1.5),
  fc.string({ maxLength: 3 }),
  fc.array(fc.oneof(fc.string({ maxLength: 2 }), fc.integer(), fc.constant(null)), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 2 }), fc.integer(), { maxKeys: 2 }),
  fc.constant([]),
  fc.constant({}),
);

const authorizeKeys = Object.keys(AuthorizeResponseSchema.shape);
const contextKeys = [
  'verdict',
  'permitId',
  'transformedContent',
  'transformedArgs',
  'escalationId',
  'decisionId',
  'requestId',
  'sessionLabels',
  'grants',
  'reason_admin',
];

/** An object with some of `keys` (and an unknown member now and then), each any {@link member}. */
const objectOf = (keys: string[], value: fc.Arbitrary<unknown> = member) =>
  fc.record(Object.fromEntries([...keys, 'unknown_member'].map((k) => [k, value])), { requiredKeys: [] });

describe('the shape checks read answers as the zod schemas did', () => {
  it('an agent-pep answer: same pass or fail, same first failing path', () => {
    fc.assert(
      fc.property(fc.oneof(objectOf(authorizeKeys), member), (value) => {
        expect(handVerdict(checkAuthorizeResponse, value)).toBe(zodVerdict(AuthorizeResponseSchema, value));
      }),
      { numRuns: 3000 },
    );
  });

  it('an AuthZEN evaluation answer and its context: same pass or fail, same first failing path', () => {
    const answer = fc.record(
      { decision: member, context: fc.oneof(objectOf(contextKeys), member), other: member },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.oneof(answer, member), (value) => {
        expect(handVerdict(checkEvaluationResponse, value)).toBe(zodVerdict(EvaluationResponseSchema, value));
      }),
      { numRuns: 3000 },
    );
  });

  it('names the paths the messages name: a member, an array item, a nested member, the root', () => {
    expect(handVerdict(checkAuthorizeResponse, { verdict: 'MAYBE' })).toBe('verdict');
    expect(handVerdict(checkAuthorizeResponse, { verdict: 'ALLOW', latches: ['a', 2] })).toBe('latches.1');
    expect(handVerdict(checkAuthorizeResponse, { verdict: 'ALLOW', permitId: '' })).toBe('permitId');
    expect(handVerdict(checkAuthorizeResponse, [])).toBe('(root)');
    expect(handVerdict(checkEvaluationResponse, { decision: true, context: { transformedArgs: [] } })).toBe(
      'context.transformedArgs',
    );
    expect(handVerdict(checkEvaluationResponse, { decision: true, context: null })).toBe('context');
    expect(handVerdict(checkAuthorizeResponse, { verdict: 'ALLOW', extra: 1 })).toBe('ok');
  });
});
