/**
 * The Mastra example (`npm run example:mastra`): the compiled examples/mastra/agent.ts, run in the
 * worker as `node` runs it (test/support/examples.ts); it starts its own dev PDP and drives a Mastra
 * agent with the AI SDK's mock model offline.
 */
import { expect, it } from 'vitest';
import { runExample } from '../../support/examples.js';

it('runs the ALLOW, BLOCK, context_egress, ESCALATE and PDP-down scenes as expected and exits 0', async () => {
  const { code, stdout } = await runExample('examples/mastra/agent.js');
  expect(stdout).not.toContain('UNEXPECTED');
  expect(code).toBe(0);
  const lines = stdout.trim().split('\n');
  expect(lines[0]).toBe(
    'ALLOW    refund_payment ran 1 time(s), permit verified, session thread-1842; I read: refunded 129',
  );
  expect(lines).toContain(
    "BLOCK    I read: ERROR: Tool 'delete_account' denied by policy: accounts are never deleted by the agent",
  );
  expect(lines).toContain(
    "EGRESS   lookup_order ran 1 time(s); I read: ERROR: Tool 'lookup_order' denied by policy: credentials never reach the model",
  );
  expect(lines).toContain(
    'ESCALATE refund_payment of 900 is waiting for approval (finishReason suspended); ran 0 time(s)',
  );
  expect(lines).toContain('ESCALATE approved by a reviewer: refund_payment ran 1 time(s); I read: refunded 900');
  expect(lines).toContain(
    'PDP DOWN the run stopped: ERROR: input was not checked: the policy check failed (pdp_unreachable)',
  );
  expect(lines.at(-1)).toBe('PDP DOWN tool bodies run while the PDP was down: 0');
});
