/** examples/dispatcher.ts, compiled (`npm run example:dispatcher`; test/support/examples.ts): runs alone and enforces. */
import { expect, it } from 'vitest';
import { runExample } from '../../support/examples.js';

it('runs the allowed tool calls, refuses the blocked and held ones, and exits 0', async () => {
  const { code, stdout } = await runExample('examples/dispatcher.js');
  expect(code).toBe(0);
  const lines = stdout.split('\n');
  expect(lines[0]).toContain('{"orderId":"ord_1842","status":"shipped"}');
  expect(lines[1]).toContain('"refunded":129');
  expect(lines[2]).toMatch(/-> ERROR: Tool 'refund_payment' is held for human review: refunds over 500 need review$/);
  expect(lines[3]).toMatch(/-> ERROR: Tool 'bank_transfer_funds' denied by policy: no money transfers$/);
  expect(stdout).toContain('side effects that ran: 1 (refund_payment)');
});
