/**
 * Property: whatever an AuthZEN PDP answers, the mapped decision is ALLOW or WARN only when the answer
 * says `decision: true` (a boolean), its profile verdict (if any) is ALLOW or WARN, and it reports no
 * error (CONTRACT.md section 9 and rule 4). The oracle is written from the contract's words.
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { type SentRequest, toDecision } from '../../src/enforce.js';
import { AttemptFailure } from '../../src/internal/failure.js';
import { parseEvaluation } from '../../src/wire/authzen.js';

const sent: SentRequest = { stage: 'input', requestId: 'r1', agentId: 'a', session: 's', simulated: false };

const answer = fc.record(
  {
    decision: fc.oneof(fc.boolean(), fc.constant('true'), fc.constant(1), fc.constant(null)),
    context: fc.oneof(
      fc.constant('ctx'),
      fc.record(
        {
          verdict: fc.oneof(fc.constantFrom('ALLOW', 'WARN', 'BLOCK', 'ESCALATE', 'allow'), fc.integer()),
          transformedContent: fc.oneof(fc.string(), fc.integer()),
          reason_admin: fc.oneof(fc.string(), fc.object()),
          requestId: fc.constantFrom('r1', 'r2'),
          error: fc.anything(),
          errors: fc.array(fc.string(), { maxLength: 2 }),
        },
        { requiredKeys: [] },
      ),
    ),
    error: fc.string(),
  },
  { requiredKeys: [] },
);

/** The contract's rules for a text-stage ALLOW or WARN, as a plain predicate. */
function allowOrWarnAllowed(a: Record<string, unknown>): boolean {
  if (a.decision !== true || 'error' in a) return false;
  if (a.context === undefined) return true;
  if (typeof a.context !== 'object' || a.context === null) return false;
  const c = a.context as Record<string, unknown>;
  if ('error' in c) return false;
  if (Array.isArray(c.errors) && c.errors.length > 0) return false;
  if ('requestId' in c && c.requestId !== 'r1') return false;
  if ('transformedContent' in c && typeof c.transformedContent !== 'string') return false;
  if (c.verdict === undefined) return !('transformedContent' in c);
  if (c.verdict === 'ALLOW') return !('transformedContent' in c);
  if (c.verdict === 'WARN') return typeof c.transformedContent === 'string';
  return false;
}

it('no ALLOW or WARN comes out of an AuthZEN answer unless it is a valid, enforceable true', () => {
  fc.assert(
    fc.property(answer, (generated) => {
      const text = JSON.stringify(generated);
      const a = JSON.parse(text) as Record<string, unknown>;
      let verdict: string;
      try {
        const { response, raw } = parseEvaluation(new TextEncoder().encode(text));
        verdict = toDecision(response, raw, sent, undefined, { checkPermitBinding: false, requireEcho: false }).verdict;
      } catch (err) {
        expect(err).toBeInstanceOf(AttemptFailure);
        verdict = 'synthesized BLOCK';
      }
      const permitted = verdict === 'ALLOW' || verdict === 'WARN';
      expect(permitted).toBe(allowOrWarnAllowed(a));
    }),
    { numRuns: 2000 },
  );
});
