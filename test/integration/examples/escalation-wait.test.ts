/** examples/escalation-wait/agent.ts, compiled (`npm run example:escalation-wait`): held, approved by a reviewer over HTTP, retried once. */
import { expect, it } from 'vitest';
import { runExample } from '../../support/examples.js';

it('holds the refund, waits for the reviewer, and the identical retry runs once after the approval', async () => {
  const { code, stdout } = await runExample('examples/escalation-wait/agent.js');
  expect(code).toBe(0);
  const lines = stdout.trim().split('\n');
  expect(lines[0]).toMatch(/^held for review: esc_/);
  expect(lines).toContain('reviewer approves refund_payment of 900');
  expect(lines.slice(-2)).toEqual(['review: approved', 'refunded 900']);
});
