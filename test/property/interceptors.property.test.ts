/**
 * Property (CONTRACT.md section 7): for any chain of generated interceptors and any PDP verdict, the
 * outcome is never less restrictive than the most restrictive of its parts, and `execute` runs only
 * after an ALLOW or WARN whose permit binds the args it receives.
 */
import fc from 'fast-check';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  actionHash,
  createPep,
  type Interceptor,
  PolicyBlockedError,
  PolicyEscalatedError,
  type Verdict,
} from '../../src/index.js';
import { answer, type FakePdp, startFakePdp } from '../support/fake-pdp.js';
import { createTestIssuer, type TestIssuer } from '../support/permits.js';

type Part =
  | { kind: 'proceed' }
  | { kind: 'proceedWith'; key: string; value: number }
  | { kind: 'deny' }
  | { kind: 'substitute' }
  | { kind: 'throw' };

const part: fc.Arbitrary<Part> = fc.oneof(
  fc.constant({ kind: 'proceed' as const }),
  fc.record({
    kind: fc.constant('proceedWith' as const),
    key: fc.constantFrom('a', 'b', 'traceId'),
    value: fc.integer(),
  }),
  fc.constant({ kind: 'deny' as const }),
  fc.constant({ kind: 'substitute' as const }),
  fc.constant({ kind: 'throw' as const }),
);
const verdict: fc.Arbitrary<Verdict> = fc.constantFrom('ALLOW', 'WARN', 'BLOCK', 'ESCALATE');

let pdp: FakePdp;
let issuer: TestIssuer;
let scripted: { verdict: Verdict; warnArgs: boolean } = { verdict: 'ALLOW', warnArgs: false };

beforeAll(async () => {
  issuer = await createTestIssuer();
  pdp = await startFakePdp(async (req, res) => {
    const { verdict: v, warnArgs } = scripted;
    const body: Record<string, unknown> = { verdict: v, requestId: req.body.requestId, reason: 'pdp' };
    if (v === 'ALLOW' || v === 'WARN') {
      let args = req.body.args as Record<string, unknown>;
      if (v === 'WARN' && warnArgs) {
        args = { ...args, warned: true };
        body.transformedArgs = args;
      }
      body.permitId = await issuer.mint(String(req.body.tool), args, { sid: String(req.body.session) });
    }
    answer(res, body);
  });
});
afterAll(async () => {
  await pdp.close();
});

function toInterceptors(parts: Part[]): Interceptor[] {
  return parts.map((p, i) => ({
    name: `i${i}`,
    before: (step) => {
      switch (p.kind) {
        case 'proceed':
          return { action: 'proceed' };
        case 'proceedWith':
          return { action: 'proceedWith', args: { ...step.args, [p.key]: p.value } };
        case 'deny':
          return { action: 'deny', reason: 'local' };
        case 'substitute':
          return { action: 'substitute', result: 'substituted' };
        default:
          throw new Error('boom');
      }
    },
  }));
}

describe('the interceptor chain is monotonic', () => {
  it('never less restrictive than its most restrictive part; execute only with a permit binding its args', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(part, { maxLength: 5 }), verdict, fc.boolean(), async (parts, v, warnArgs) => {
        scripted = { verdict: v, warnArgs };
        pdp.received.length = 0;
        const pep = createPep({
          pdpUrl: pdp.url,
          agentId: 'support-ai',
          session: 'sess_demo',
          retries: 0,
          permits: { keys: issuer.jwks, issuer: issuer.issuer },
          interceptors: toInterceptors(parts),
        });
        const runs: { args: Record<string, unknown>; permitId: string | undefined }[] = [];
        const tool = pep.guardTool('do_thing', (args, ctx) => {
          runs.push({ args, permitId: ctx.permitId });
          return 'ran';
        });
        const outcome = await tool({ x: 1 }).then(
          (r) => ({ kind: 'returned' as const, r }),
          (e: unknown) => ({ kind: 'threw' as const, e }),
        );
        const decision = await pep.authorizeAction('do_thing', { x: 1 });
        await pep.close();

        const stop = parts.findIndex((p) => p.kind === 'deny' || p.kind === 'substitute' || p.kind === 'throw');
        if (stop >= 0) {
          // A local stop: BLOCK, the PDP is never asked, the tool never runs.
          expect(decision.verdict).toBe('BLOCK');
          expect(decision.interceptor).toBe(`i${stop}`);
          expect(pdp.received).toHaveLength(0);
          expect(runs).toHaveLength(0);
          const stopPart = parts[stop] as Part;
          if (stopPart.kind === 'substitute') expect(outcome).toEqual({ kind: 'returned', r: 'substituted' });
          else {
            expect(outcome.kind).toBe('threw');
            expect((outcome as { e: PolicyBlockedError }).e.code).toBe(
              stopPart.kind === 'deny' ? 'blocked' : 'interceptor_failed',
            );
          }
          return;
        }
        // The chain passed: the PDP's verdict stands, never lifted.
        expect(decision.verdict).toBe(v);
        if (v === 'BLOCK' || v === 'ESCALATE') {
          expect(runs).toHaveLength(0);
          expect((outcome as { e: unknown }).e).toBeInstanceOf(
            v === 'BLOCK' ? PolicyBlockedError : PolicyEscalatedError,
          );
          return;
        }
        expect(outcome).toEqual({ kind: 'returned', r: 'ran' });
        expect(runs).toHaveLength(1);
        const [run] = runs as [{ args: Record<string, unknown>; permitId: string }];
        const expected: Record<string, unknown> = { x: 1 };
        for (const p of parts) if (p.kind === 'proceedWith') expected[p.key] = p.value;
        if (v === 'WARN' && warnArgs) expected.warned = true;
        expect(run.args).toEqual(expected);
        expect(decodeJwt(run.permitId).act_hash).toBe(actionHash('do_thing', run.args));
      }),
      { numRuns: 60 },
    );
  });
});
