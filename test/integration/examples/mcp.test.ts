/**
 * examples/mcp/main.ts (`npm run example:mcp`): the compiled example, run in the worker as `node` runs
 * it (test/support/examples.ts), with its own dev PDP; offline.
 */
import { expect, it } from 'vitest';
import { runExample } from '../../support/examples.js';

it('runs the permitted refund, holds the one over 500, refuses the call that skipped the PEP, and exits 0', async () => {
  const { code, stdout } = await runExample('examples/mcp/main.js');
  expect(code).toBe(0);
  // Each line says which call it answers, so the reader can tell the refused bare call from the others.
  expect(stdout.trim().split('\n')).toEqual([
    'guarded client, refund of 129: refunded 129',
    "guarded client, refund of 900: ERROR: Tool 'refund_payment' is held for human review: refunds over 500 need review",
    "client without a PEP, refund of 5: ERROR: Tool 'refund_payment' was not run: the policy check failed (permit_invalid)",
    // One refund ran; the PDP decided the two calls of the guarded client, and nothing for the server.
    'refunds run: 1; action decisions at the PDP: 2',
    // What the model sees: the tool the policy blocks outright is not offered, the rest are pinned.
    'tools offered: refund_payment',
    'pinned: refund_payment',
  ]);
});
