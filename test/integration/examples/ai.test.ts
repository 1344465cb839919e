/**
 * The Vercel AI SDK example (`npm run example:ai`): the compiled examples/ai/agent.ts, run in the
 * worker as `node` runs it (test/support/examples.ts); it starts its own dev PDP and drives the SDK's
 * mock model offline.
 */
import { expect, it } from 'vitest';
import { runExample } from '../../support/examples.js';

it('runs the ALLOW, BLOCK, WARN, ESCALATE and PDP-down scenes as expected and exits 0', async () => {
  const { code, stdout } = await runExample('examples/ai/agent.js');
  expect(stdout).not.toContain('UNEXPECTED');
  expect(code).toBe(0);
  const lines = stdout.trim().split('\n');
  expect(lines[0]).toBe(
    'ALLOW    refund_payment ran 1 time(s), permit verified; the model said: Refunded 129. Questions? Call [phone].',
  );
  expect(lines).toContain(
    "BLOCK    the model read: ERROR: Tool 'delete_account' denied by policy: accounts are never deleted by the agent",
  );
  expect(lines).toContain(
    'WARN     send_email ran 1 time(s), sent to support@example.com (the model asked for someone@example.net)',
  );
  expect(lines).toContain('ESCALATE refund_payment of 900 is waiting for approval; ran 0 time(s)');
  expect(lines).toContain('ESCALATE approved by a reviewer: refund_payment ran 1 time(s); Refunded 900 after review.');
  expect(lines).toContain(
    "PDP DOWN the model read: ERROR: Tool 'refund_payment' was not run: the policy check failed (pdp_unreachable)",
  );
  expect(lines.at(-1)).toBe('PDP DOWN tool bodies run while the PDP was down: 0');
});
