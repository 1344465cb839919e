/** examples/escalation-wait/agent.ts, compiled (`npm run example:escalation-wait`): held, approved by a reviewer over HTTP, retried once. */
import { expect, it } from 'vitest';
import { runExample } from '../../support/examples.js';

it('holds the refund, waits for the reviewer, and the identical retry runs once after the approval', async () => {
  const { code, stdout } = await runExample('examples/escalation-wait/agent.js');
  expect(code).toBe(0);
  const lines = stdout.trim().split('\n');
  // the agent and the reviewer print as they go, in either order
  expect(lines.some((line) => /^held for review: esc_[A-Za-z0-9_-]+$/.test(line))).toBe(true);
  expect(lines).toContain('reviewer approves refund_payment of 900');
  expect(lines.slice(-2)).toEqual(['review: approved', 'refunded 900']);
});
