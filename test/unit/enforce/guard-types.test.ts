/**
 * `guardTool` is generic over its args (issue 43, item 7): a tool written with its own args type
 * passes `tsc --strict` (`npm run typecheck` covers this file), the guarded tool takes that type, and
 * a schema's output type is what `execute` receives. Nothing here runs a decision.
 */
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import type { GuardedTool, Pep } from '../../../src/index.js';

declare const pep: Pep;

describe('guardTool types', () => {
  it('takes the args type of execute, and returns a tool of that args type', () => {
    const send = () => pep.guardTool('send_email', async (args: { to: string; cc?: string[] }) => args.to.length);
    expectTypeOf(send).returns.toEqualTypeOf<GuardedTool<number, { to: string; cc?: string[] }>>();
    expectTypeOf(send).returns.parameter(0).toEqualTypeOf<{ to: string; cc?: string[] }>();
  });

  it('an interface with no index signature is accepted', () => {
    interface Refund {
      orderId: string;
      amount: number;
    }
    const refund = () => pep.guardTool('refund_payment', async (args: Refund) => args.amount);
    expectTypeOf(refund).returns.parameter(0).toEqualTypeOf<Refund>();
  });

  it('without an annotation the args are Record<string, unknown>, as before', () => {
    const tool = () => pep.guardTool('lookup', async (args) => args.orderId);
    expectTypeOf(tool).returns.parameter(0).toEqualTypeOf<Record<string, unknown>>();
  });

  it("a schema's output type is what execute receives", () => {
    const schema = z.object({ to: z.email(), subject: z.string().default('') });
    const tool = () =>
      pep.guardTool(
        'send_email',
        async (args) => {
          expectTypeOf(args).toEqualTypeOf<{ to: string; subject: string }>();
          return true;
        },
        { schema },
      );
    expectTypeOf(tool).returns.returns.resolves.toEqualTypeOf<boolean>();
    // the guarded tool takes the schema's input: `subject` may be left out (its default fills it in)
    expectTypeOf(tool).returns.parameter(0).toEqualTypeOf<{ to: string; subject?: string | undefined }>();
  });
});
