/** examples/authzen.ts, compiled (`npm run example:authzen`; test/support/examples.ts): runs alone over AuthZEN and enforces. */
import { expect, it } from 'vitest';
import { runExample } from '../../support/examples.js';

it('decides a batch over AuthZEN in order, runs the allowed refund, holds the large one, and exits 0', async () => {
  const { code, stdout } = await runExample('examples/authzen.js');
  expect(code).toBe(0);
  const lines = stdout.trim().split('\n');
  // Each line names the call it decides, in the order asked.
  expect(lines.slice(0, 4)).toEqual([
    'lookup_order ALLOW',
    'refund_payment ALLOW',
    'refund_payment ESCALATE refunds over 500 need review',
    'transfer_funds BLOCK no money transfers',
  ]);
  expect(lines[4]).toContain('refunded: 129');
  expect(lines[5]).toBe("ERROR: Tool 'refund_payment' is held for human review: refunds over 500 need review");
});
