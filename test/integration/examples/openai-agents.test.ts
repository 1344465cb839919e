/**
 * examples/openai-agents/agent.ts (`npm run example:openai-agents`): the compiled example, run in the
 * worker as `node` runs it (test/support/examples.ts), offline, against the dev PDP it starts itself.
 */
import { expect, it } from 'vitest';
import { runExample } from '../../support/examples.js';

it('shows an ALLOW, a BLOCK the model recovers from, a WARN, an approved ESCALATE and a PDP outage, and exits 0', async () => {
  const { code, stdout, stderr } = await runExample('examples/openai-agents/agent.js');
  expect(stderr).not.toContain('UNEXPECTED');
  expect(stdout).not.toContain('UNEXPECTED');
  expect(code).toBe(0);
  expect(stdout.trim().split('\n')).toEqual([
    'ALLOW     ran: refund_payment {"orderId":"ord_1842","amount":129}',
    '          model: I refunded 129 on ord_1842.',
    "BLOCK     the model saw: ERROR: Tool 'delete_account' denied by policy: accounts are never deleted by the agent",
    '          model: I cannot delete accounts; support can.',
    'WARN      ran: send_email {"to":"ada@example.com","body":"Your refund is on its way.","bcc":"audit@example.com"}',
    'ESCALATE  interruptions: refund_payment; ran so far: 2',
    '          approved and resumed, ran: refund_payment {"orderId":"ord_1900","amount":900}',
    '          model: I refunded 900 on ord_1900 after review.',
    'PDP DOWN  the model saw: ERROR: context_egress was not checked: the policy check failed (pdp_unreachable)',
    '          output withheld: ERROR: output was not checked: the policy check failed (pdp_unreachable)',
    'tool bodies run: 3',
  ]);
});
