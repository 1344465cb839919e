/**
 * examples/mcp-v2/main.ts (`npm run example:mcp-v2`): the compiled example, run in the worker as `node`
 * runs it (test/support/examples.ts), with its own dev PDP and a stateless v2 server on 127.0.0.1; offline.
 */
import { expect, it } from 'vitest';
import { runExample } from '../../support/examples.js';

it('runs the permitted refund over Streamable HTTP, holds the one over 500, the server refuses the call without a permit, and exits 0', async () => {
  const { code, stdout } = await runExample('examples/mcp-v2/main.js');
  expect(code).toBe(0);
  expect(stdout.trim().split('\n')).toEqual([
    'guarded v2 client, refund of 129: refunded 129',
    "guarded v2 client, refund of 900: ERROR: Tool 'refund_payment' is held for human review: refunds over 500 need review",
    'client without a PEP, refund of 5: refused: no valid permit for this call',
    'refunds run: 1',
  ]);
});
