// `agent-pep hook <host>` for every host, with recorded events of each (test/fixtures/hooks/), against a
// real dev PDP on 127.0.0.1: the answers in each host's documented shape, and the host's deny (with the
// host's failure exit code) on bad input, a PDP that is down and a PDP that hangs. The command runs in
// this process (test/support/cli.ts).

import { PassThrough } from 'node:stream';
import { type DevPdp, startDevPdp } from 'agent-pep/dev-pdp';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { run } from '../../../src/cli/hook.js';
import type { CliIo } from '../../../src/cli/io.js';
import { runInProcess } from '../../support/cli.js';
import { closedPort, HOST_CASES, HOSTS_POLICY, hookFixture, hungPdp, type Json } from '../../support/hook-hosts.js';

let pdp: DevPdp;
let hung: { url: string; close(): Promise<void> };
let down: string;

beforeAll(async () => {
  pdp = await startDevPdp({ policy: HOSTS_POLICY, port: 0, log: false });
  hung = await hungPdp();
  down = `http://127.0.0.1:${await closedPort()}`;
});
afterAll(async () => {
  await pdp.close();
  await hung.close();
});

async function hook(host: string, event: Json | string, pdpUrl = pdp.url, extra: string[] = []) {
  const input = typeof event === 'string' ? event : JSON.stringify(event);
  const r = await runInProcess(['hook', host, '--pdp', pdpUrl, '--agent', 'coder', ...extra], { input });
  return { ...r, json: r.stdout.trim() === '' ? {} : (JSON.parse(r.stdout) as Json) };
}

describe('each host answers its recorded events in its own shape', () => {
  test('cursor: a denied shell command, an MCP call, a secrets read, a prompt injection, an edit', async () => {
    const shell = await hook('cursor', hookFixture('cursor-before-shell-execution'));
    expect(shell.code).toBe(0);
    expect(shell.json).toMatchObject({
      permission: 'deny',
      user_message: expect.stringContaining('recursive deletes are not allowed'),
      agent_message: expect.stringContaining('recursive deletes are not allowed'),
    });
    const ls = await hook('cursor', { ...hookFixture('cursor-before-shell-execution'), command: 'ls -la' });
    expect(ls.json).toEqual({ permission: 'allow' });
    expect((await hook('cursor', hookFixture('cursor-before-mcp-execution'))).json).toMatchObject({
      permission: 'deny',
    });
    expect((await hook('cursor', hookFixture('cursor-before-read-file'))).json).toMatchObject({ permission: 'deny' });
    const prompt = await hook('cursor', hookFixture('cursor-before-submit-prompt'));
    expect(prompt.json).toMatchObject({ continue: false });
    const edit = await hook('cursor', hookFixture('cursor-after-file-edit'));
    expect(edit).toMatchObject({ code: 0, json: {} });
  });

  test('cursor: beforeReadFile checks the content the model would read (context_egress) once the read is allowed', async () => {
    const read = { ...hookFixture('cursor-before-read-file'), file_path: '/home/dev/shop/notes.txt' };
    expect((await hook('cursor', { ...read, content: 'retries: 3\n' })).json).toEqual({ permission: 'allow' });
    const leaky = await hook('cursor', { ...read, content: 'key sk_live_4eC39HqLyjWDarjtT1zdp7dc' });
    expect(leaky.code).toBe(0);
    expect(leaky.json).toMatchObject({ permission: 'deny', agent_message: expect.stringContaining('a live API key') });
    expect(leaky.stdout).not.toContain('sk_live_');
  });

  test('cursor: ESCALATE is a deny by default and ask with --escalate ask; a rewrite it cannot apply is a deny', async () => {
    const push = { ...hookFixture('cursor-before-shell-execution'), command: 'git push origin main' };
    expect((await hook('cursor', push)).json).toMatchObject({ permission: 'deny' });
    expect((await hook('cursor', push, pdp.url, ['--escalate', 'ask'])).json).toMatchObject({ permission: 'ask' });
    const install = { ...hookFixture('cursor-before-shell-execution'), command: 'npm install' };
    expect((await hook('cursor', install)).json).toMatchObject({ permission: 'deny' });
  });

  test('gemini-cli: BeforeTool deny, a rewrite, AfterTool withholding a key, BeforeAgent blocking an injection', async () => {
    const rm = await hook('gemini-cli', hookFixture('gemini-cli-before-tool-shell'));
    expect(rm.code).toBe(0);
    expect(rm.json).toEqual({ decision: 'deny', reason: expect.stringContaining('recursive deletes') });
    const install = await hook('gemini-cli', {
      ...hookFixture('gemini-cli-before-tool-shell'),
      tool_input: { command: 'npm install', description: 'd' },
    });
    expect(install.json).toEqual({
      hookSpecificOutput: { hookEventName: 'BeforeTool', tool_input: { command: 'npm ci', description: 'd' } },
    });
    const after = await hook('gemini-cli', hookFixture('gemini-cli-after-tool-shell'));
    expect(after.json).toMatchObject({ decision: 'deny' });
    expect(after.stdout).not.toContain('sk_live_');
    expect((await hook('gemini-cli', hookFixture('gemini-cli-before-agent'))).json).toMatchObject({ decision: 'deny' });
    expect((await hook('gemini-cli', '{"x":1}', pdp.url, ['--escalate', 'ask'])).code).toBe(2);
  });

  test('copilot-cli: preToolUse deny, allow ({}), a rewrite as modifiedArgs', async () => {
    const rm = await hook('copilot-cli', hookFixture('copilot-cli-pre-tool-use-bash'));
    expect(rm.code).toBe(0);
    expect(rm.json).toEqual({
      permissionDecision: 'deny',
      permissionDecisionReason: expect.stringContaining('recursive'),
    });
    const ls = await hook('copilot-cli', {
      ...hookFixture('copilot-cli-pre-tool-use-bash'),
      toolArgs: '{"command":"ls"}',
    });
    expect(ls.json).toEqual({});
    const install = await hook('copilot-cli', {
      ...hookFixture('copilot-cli-pre-tool-use-bash'),
      toolArgs: { command: 'npm install' },
    });
    expect(install.json).toEqual({ permissionDecision: 'allow', modifiedArgs: { command: 'npm ci' } });
  });
});

describe.each(HOST_CASES)('$host fails closed: the host deny, and its failure exit code', ({ host, fixture, deny }) => {
  const failureCode = host === 'copilot-cli' ? 0 : 2;
  const event = hookFixture(fixture);

  test('on bad input (not JSON)', async () => {
    const r = await hook(host, '{"session_id":');
    expect(r.code).toBe(failureCode);
    expect(r.stderr).toContain('failed closed');
    // An event that could not be read is answered in the host's generic deny.
    expect(JSON.stringify(r.json)).toMatch(/deny|block/);
  });

  test('on an event of the wrong shape', async () => {
    const r = await hook(host, { ...event, tool_input: 'not an object', toolArgs: 7, command: 7 });
    expect(r.code).toBe(failureCode);
    expect(r.json).toMatchObject(deny);
  });

  test('with the PDP down', async () => {
    const r = await hook(host, event, down);
    expect(r.code).toBe(failureCode);
    expect(r.json).toMatchObject(deny);
    expect(r.stderr).toContain('pdp_unreachable');
  });

  test('on a crash (an uncaught exception of the process) while it decides', async () => {
    let crash: ((error: unknown) => void) | undefined;
    let stdout = '';
    let stderr = '';
    const stdin = new PassThrough();
    const io: CliIo = {
      stdin,
      stdout: {
        write(chunk, cb) {
          stdout += chunk;
          cb?.(null);
          return true;
        },
      },
      stderr: {
        write(chunk) {
          stderr += chunk;
          return true;
        },
      },
      env: {},
      onCrash: (handler) => {
        crash = handler;
      },
    };
    // The PDP hangs, so the hook is still deciding when the process crashes.
    const code = run([host, '--pdp', hung.url, '--agent', 'coder', '--timeout', '10000'], io);
    stdin.end(JSON.stringify(event));
    await new Promise((r) => setTimeout(r, 150));
    crash?.(new Error('boom'));
    expect(await code).toBe(failureCode);
    expect(JSON.parse(stdout)).toMatchObject(deny);
    expect(stderr).toContain('internal error');
  });

  test('with the PDP hanging: the deny at its own deadline', async () => {
    const started = Date.now();
    const r = await hook(host, event, hung.url, ['--timeout', '400']);
    expect(r.code).toBe(failureCode);
    expect(r.json).toMatchObject(deny);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
