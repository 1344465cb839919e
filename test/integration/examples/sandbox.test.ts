/**
 * examples/sandbox/agent.ts, compiled (`npm run example:sandbox`; test/support/examples.ts): an
 * interceptor routes `run_script` to the local process sandbox, so the script runs in a child process
 * with an empty environment and a temporary directory, never as the tool's own body on the host.
 */
import { expect, it } from 'vitest';
import { runExample } from '../../support/examples.js';

it('runs the script in the sandbox: no host secret, a temporary directory, the host body never ran', async () => {
  const { code, stdout, stderr } = await runExample('examples/sandbox/agent.js');
  expect(stderr).toBe('');
  expect(code).toBe(0);
  const result = JSON.parse(stdout.trim()) as { exitCode: number; stdout: string };
  expect(result.exitCode).toBe(0);
  expect(result.stdout).toMatch(/^no secret here \S*agent-pep-sandbox-/);
  expect(stdout).not.toContain('host-only-token');
});
