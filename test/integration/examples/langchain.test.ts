/**
 * examples/langchain/agent.ts, compiled (`npm run example:langchain`; test/support/examples.ts): runs
 * alone, offline, and enforces.
 */
import { expect, it } from 'vitest';
import { runExample } from '../../support/examples.js';

it('runs the WARN, BLOCK, ALLOW, ESCALATE and PDP-down cases with the side effects expected, and exits 0', async () => {
  const { code, stdout } = await runExample('examples/langchain/agent.js');
  expect(code).toBe(0);
  expect(stdout.trim().split('\n')).toEqual([
    'ran      lookup_orders {"customer":"c_42","limit":10}',
    'WARN     the model asked for 500; the model read: 3 orders of c_42 (limit 10)',
    "BLOCK    the model read: ERROR: Tool 'bank_transfer' denied by policy: no money transfers",
    'ran      refund_payment ord_1842 129 (permit attached)',
    'answer   I refunded 129 on ord_1842; I cannot send money transfers.',
    "ESCALATE ERROR: Tool 'refund_payment' is held for human review: refunds over 500 need review",
    'review   a reviewer approved the escalation at the PDP',
    'ran      refund_payment ord_1999 900 (permit attached)',
    'answer   The refund of 900 on ord_1999 is done.',
    "PDP down the model read: ERROR: Tool 'refund_payment' was not run: the policy check failed (pdp_unreachable)",
    'answer   ERROR: output was not checked: the policy check failed (pdp_unreachable)',
    'PDP down 0 side effects ran in that run',
    'side effects that ran: 3 (lookup_orders, refund_payment, refund_payment)',
  ]);
});
