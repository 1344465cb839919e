/**
 * examples/claude-code-hook/run.ts (`npm run example:claude-code-hook`, run in the worker by
 * test/support/examples.ts): recorded Claude Code hook events piped into the built
 * `agent-pep hook claude-code` processes against a dev PDP the example starts, then posted to
 * `agent-pep hook serve` as Claude Code's HTTP hooks post them.
 */
import { expect, it } from 'vitest';
import { runExample } from '../../support/examples.js';

it('answers every recorded event in the host form and fails closed with the PDP down', async () => {
  const { code, stdout } = await runExample('examples/claude-code-hook/run.js');
  expect(code).toBe(0);
  expect(stdout.trim().split('\n')).toEqual([
    'PreToolUse Bash ls -la: allow (exit 0)',
    'PreToolUse Bash npm install: allow updatedInput={"command":"npm ci","description":"Install dependencies"} (exit 0)',
    "PreToolUse Bash rm -rf build: deny ERROR: Tool 'Bash' denied by policy: recursive deletes are not allowed (exit 0)",
    "PreToolUse Bash git push origin main: ask ERROR: Tool 'Bash' is held for human review: pushes need review (exit 0)",
    'UserPromptSubmit: block ERROR: input blocked by policy: prompt injection (exit 0)',
    "PostToolUse Bash cat .env: block ERROR: context_egress blocked by policy: a live API key is in the tool output (tool 'Bash') (exit 0)",
    "PreToolUse Bash ls -la, PDP down: deny ERROR: Tool 'Bash' was not run: the policy check failed (pdp_unreachable) (exit 2)",
    'hook serve, PreToolUse Bash ls -la: allow (HTTP 200)',
    'hook serve, PreToolUse Bash npm install: allow updatedInput={"command":"npm ci","description":"Install dependencies"} (HTTP 200)',
    "hook serve, PreToolUse Bash rm -rf build: deny ERROR: Tool 'Bash' denied by policy: recursive deletes are not allowed (HTTP 200)",
    'hook serve without the token: HTTP 401 (Claude Code blocks: onFailure "block")',
  ]);
});
