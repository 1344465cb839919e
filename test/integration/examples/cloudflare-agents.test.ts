/**
 * The Cloudflare Agents SDK example (`npm run example:cloudflare-agents`): the compiled
 * examples/cloudflare-agents/agent.ts, run in the worker as `node` runs it (test/support/examples.ts);
 * it starts its own dev PDP and drives the SDK's MCP client manager with the AI SDK's mock model offline.
 */
import { expect, it } from 'vitest';
import { runExample } from '../../support/examples.js';

it('runs the ALLOW, BLOCK, held ESCALATE, context_egress and PDP-down scenes as expected and exits 0', async () => {
  const { code, stdout } = await runExample('examples/cloudflare-agents/agent.js');
  expect(stdout).not.toContain('UNEXPECTED');
  expect(code).toBe(0);
  expect(stdout.trim().split('\n')).toEqual([
    'ALLOW    the server ran refund_payment 1 time(s) on its permit, session support-7; I read: refunded 129',
    "BLOCK    I read: ERROR: Tool 'refund_payment' denied by policy: this order is locked",
    "ESCALATE I read: ERROR: Tool 'refund_payment' is held for human review: refunds over 500 need review",
    "EGRESS   the server ran it; I read: ERROR: Tool 'refund_payment' denied by policy: credentials never reach the model",
    "PDP DOWN I read: ERROR: Tool 'refund_payment' was not run: the policy check failed (pdp_unreachable)",
    'PDP DOWN calls sent while the PDP was down: 0',
  ]);
});
