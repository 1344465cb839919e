/**
 * The README's quick start, as a newcomer runs it: `npx agent-pep dev-pdp --policy
 * examples/quickstart/policy.json` (the package's bin, a real process), then the compiled
 * examples/quickstart/agent.ts against it (run in the worker as `node` runs it: test/support/examples.ts).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runExample } from '../../support/examples.js';
import { type RunningProcess, startDevPdpProcess } from '../../support/processes.js';

let pdp: RunningProcess;
beforeAll(async () => {
  pdp = await startDevPdpProcess('examples/quickstart/policy.json');
});
afterAll(() => pdp?.stop());

it('runs the refund of 129, holds the refund of 900 without running the tool, and exits 0', async () => {
  const { code, stdout } = await runExample('examples/quickstart/agent.js', { PDP_URL: pdp.url });
  expect(code).toBe(0);
  const [first, second] = stdout.trim().split('\n');
  expect(first).toBe('{ refunded: 129 }');
  expect(second).toBe("ERROR: Tool 'refund_payment' is held for human review: refunds over 500 need review");
});

it('a PDP_URL with a trailing slash works the same (one rule joins base URLs and paths)', async () => {
  const { code, stdout } = await runExample('examples/quickstart/agent.js', { PDP_URL: `${pdp.url}/` });
  expect(code).toBe(0);
  expect(stdout.trim().split('\n')[0]).toBe('{ refunded: 129 }');
});

it('the catch prints the cause for the reader on stderr, the model text on stdout', async () => {
  const { stderr } = await runExample('examples/quickstart/agent.js', { PDP_URL: pdp.url });
  expect(stderr).toContain('is held for human review');
  expect(stderr).toMatch(/\(request [0-9a-f-]{36}\)/);
});

it('fails closed when no PDP answers: the tool body does not run', async () => {
  const { code, stdout, stderr } = await runExample('examples/quickstart/agent.js', {
    PDP_URL: 'http://127.0.0.1:9',
  });
  expect(code).toBe(0);
  const lines = stdout.trim().split('\n');
  expect(lines).toHaveLength(2);
  // The synthesized BLOCK names the failure; neither refund ran. The reader's line names the cause.
  expect(stderr).toContain('ECONNREFUSED');
  expect(lines).toEqual(
    Array(2).fill("ERROR: Tool 'refund_payment' was not run: the policy check failed (pdp_unreachable)"),
  );
});
