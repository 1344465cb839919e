// `agent-pep hook init <host>`: each host's settings with its fail-closed options, and the commands in
// them run as the host runs them (`sh -c`, with the event on stdin): the hook's own answer passed
// through untouched (never a second, contradicting line), and the host's deny when no answer came:
// the binary missing (a crash before it could answer) or `hook serve` refusing the connection.
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DevPdp, startDevPdp } from 'agent-pep/dev-pdp';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type HookServer, startHookServer } from '../../../src/hooks/server.js';
import { createPep } from '../../../src/pep.js';
import { runInProcess } from '../../support/cli.js';
import { closedPort, HOST_CASES, HOSTS_POLICY, hookFixture, hungPdp, type Json } from '../../support/hook-hosts.js';
import { ROOT } from '../../support/processes.js';

let pdp: DevPdp;
let down: string;
let refusedPort: number;
let server: HookServer;
/** A `hook serve` stand-in that accepts connections and never answers. */
let hungServe: { url: string; port: number; close(): Promise<void> };
const TOKEN = 'init-test-token';
/** A project with agent-pep installed (node_modules/.bin/agent-pep runs the built bin), and one without. */
let installed: string;
let bare: string;

beforeAll(async () => {
  pdp = await startDevPdp({ policy: HOSTS_POLICY, port: 0, log: false });
  refusedPort = await closedPort();
  down = `http://127.0.0.1:${refusedPort}`;
  const pep = createPep({ pdpUrl: pdp.url, agentId: 'coder', session: 's', permits: false });
  server = await startHookServer({ pep, token: TOKEN, timeoutMs: 3000 });
  const hung = await hungPdp();
  hungServe = { ...hung, port: Number(new URL(hung.url).port) };
  installed = mkdtempSync(join(tmpdir(), 'agent-pep-init-'));
  bare = mkdtempSync(join(tmpdir(), 'agent-pep-init-bare-'));
  mkdirSync(join(installed, 'node_modules/.bin'), { recursive: true });
  const shim = join(installed, 'node_modules/.bin/agent-pep');
  writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, 'dist/cli/main.js')}" "$@"\n`);
  chmodSync(shim, 0o755);
});
afterAll(async () => {
  await server.close();
  await hungServe.close();
  await pdp.close();
  rmSync(installed, { recursive: true, force: true });
  rmSync(bare, { recursive: true, force: true });
});

async function init(args: string[]): Promise<Json> {
  const r = await runInProcess(['hook', 'init', ...args]);
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as Json;
}

/** Every command (or URL) of a host's settings, with the event it is for. */
function entries(settings: Json): Json[] {
  return Object.values(settings.hooks as Record<string, Json[]>).flatMap((groups) =>
    groups.flatMap((g) => (Array.isArray(g.hooks) ? (g.hooks as Json[]) : [g])),
  );
}
function commandOf(e: Json): string {
  return (e.command ?? e.bash) as string;
}

function parsed(stdout: string): Json {
  try {
    return JSON.parse(stdout.trim() || '{}') as Json;
  } catch {
    return { unparsable: stdout };
  }
}

/** Runs a settings command with `sh -c` (asynchronously: the PDP and hook serve run in this process). */
function runCommand(command: string, cwd: string, event: Json, env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string; json: Json }>((resolve, reject) => {
    const child = spawn('sh', ['-c', command], {
      cwd,
      env: { ...process.env, CLAUDE_PROJECT_DIR: cwd, AGENT_PEP_HOOK_TOKEN: TOKEN, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr, json: parsed(stdout) });
    });
    // a command that ends without reading its input (the binary missing) closes the pipe: EPIPE here is expected
    child.stdin.on('error', () => {});
    child.stdin.end(JSON.stringify(event));
  });
}

describe('each host gets its fail-closed options', () => {
  test('claude-code: onFailure "block" on every entry; --http posts to hook serve with the token from the environment', async () => {
    for (const e of entries(await init(['claude-code']))) {
      expect(e).toMatchObject({ type: 'command', onFailure: 'block', timeout: 10 });
      expect(commandOf(e)).toContain('"$CLAUDE_PROJECT_DIR"/node_modules/.bin/agent-pep hook claude-code');
    }
    for (const e of entries(await init(['claude-code', '--http', '--port', '9999']))) {
      expect(e).toEqual({
        type: 'http',
        url: 'http://127.0.0.1:9999/hooks/claude-code',
        headers: { Authorization: 'Bearer $AGENT_PEP_HOOK_TOKEN' },
        allowedEnvVars: ['AGENT_PEP_HOOK_TOKEN'],
        timeout: 10,
        onFailure: 'block',
      });
    }
  });

  test('cursor: failClosed true on every hook; copilot-cli: a timeout in seconds; gemini-cli: in milliseconds', async () => {
    const cursor = await init(['cursor']);
    expect(cursor.version).toBe(1);
    expect(Object.keys(cursor.hooks as Json)).toEqual([
      'beforeShellExecution',
      'beforeMCPExecution',
      'beforeReadFile',
      'beforeSubmitPrompt',
      'afterFileEdit',
    ]);
    for (const e of entries(cursor)) expect(e).toMatchObject({ failClosed: true, timeout: 10 });
    for (const e of entries(await init(['copilot-cli']))) expect(e).toMatchObject({ type: 'command', timeoutSec: 10 });
    for (const e of entries(await init(['gemini-cli']))) expect(e).toMatchObject({ type: 'command', timeout: 10_000 });
  });

  test.each(HOST_CASES)('$host: the commands call the local binary, never npx', async ({ host }) => {
    for (const e of entries(await init([host]))) {
      expect(commandOf(e)).toContain('node_modules/.bin/agent-pep hook');
      expect(commandOf(e)).not.toContain('npx');
    }
  });
});

describe.each(HOST_CASES)('$host settings, run as the host runs them', ({ host, fixture, deny }) => {
  const failureCode = host === 'copilot-cli' ? 0 : 2;
  const event = hookFixture(fixture);
  const preToolUse = async (args: string[] = []) => commandOf(entries(await init([host, ...args]))[0] as Json);

  test('the hook answers: its answer passes through untouched', async () => {
    const r = await runCommand(await preToolUse(['--pdp', pdp.url]), installed, event);
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject(deny);
    expect(r.stderr).toBe('');
  });

  test('the hook fails closed itself (PDP down): its own reason, no second line saying it did not run', async () => {
    const r = await runCommand(await preToolUse(['--pdp', down]), installed, event);
    expect(r.code).toBe(failureCode);
    expect(r.json).toMatchObject(deny);
    expect(r.stderr).toContain('pdp_unreachable');
    expect(r.stderr).not.toContain('gave no answer');
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
  });

  test('a crash before any answer (the binary missing): the host deny from the guard', async () => {
    const r = await runCommand(await preToolUse(), bare, event);
    expect(r.code).toBe(failureCode);
    expect(r.json).toMatchObject(deny);
    expect(r.stderr).toContain('gave no answer');
  });

  if (host !== 'claude-code') {
    test('--http: posts to hook serve and passes its answer through', async () => {
      const r = await runCommand(await preToolUse(['--http', '--port', String(server.port)]), bare, event);
      expect(r.code).toBe(0);
      expect(r.json).toMatchObject(deny);
      // The event reached hook serve: the policy's own reason, not a failure of the hook.
      expect(JSON.stringify(r.json)).toContain('recursive deletes are not allowed');
    });

    test('--http with hook serve refusing the connection: the host deny', async () => {
      const r = await runCommand(await preToolUse(['--http', '--port', String(refusedPort)]), bare, event);
      expect(r.code).toBe(failureCode);
      expect(r.json).toMatchObject(deny);
    });

    test("--http with hook serve hanging: the host deny at curl's own deadline, below the host timeout", async () => {
      const started = Date.now();
      const r = await runCommand(await preToolUse(['--http', '--port', String(hungServe.port)]), bare, event);
      expect(r.code).toBe(failureCode);
      expect(r.json).toMatchObject(deny);
      expect(Date.now() - started).toBeLessThan(10_000);
    }, 20_000);

    test('--http without the token (401): the host deny', async () => {
      const command = await preToolUse(['--http', '--port', String(server.port)]);
      const r = await runCommand(command, bare, event, { AGENT_PEP_HOOK_TOKEN: 'wrong' });
      expect(r.code).toBe(failureCode);
      expect(r.json).toMatchObject(deny);
    });
  }
});

describe('usage', () => {
  test('hook init --help and hook serve --help print their usage; an unknown host is a usage error', async () => {
    expect(await runInProcess(['hook', 'init', '--help'])).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('Usage: agent-pep hook init'),
    });
    expect(await runInProcess(['hook', 'serve', '--help'])).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('Usage: agent-pep hook serve'),
    });
    const r = await runInProcess(['hook', 'init', 'windsurf']);
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')[0]).toContain('unknown host');
  });
});

describe('--write', () => {
  test('merges into the host file: the agent-pep entries replaced, every other entry and key kept', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-pep-write-'));
    try {
      mkdirSync(join(dir, '.cursor'));
      const other = { command: './audit.sh' };
      const old = { command: 'npx agent-pep hook cursor --pdp x --agent y' };
      writeFileSync(
        join(dir, '.cursor/hooks.json'),
        JSON.stringify({ version: 1, hooks: { beforeShellExecution: [other, old] }, x: 1 }),
      );
      const r = await runCommand(
        `"${process.execPath}" "${join(ROOT, 'dist/cli/main.js')}" hook init cursor --write`,
        dir,
        {},
      );
      expect(r.code).toBe(0);
      const written = JSON.parse(readFileSync(join(dir, '.cursor/hooks.json'), 'utf8')) as Json;
      expect(written.x).toBe(1);
      const shell = (written.hooks as Record<string, Json[]>).beforeShellExecution as Json[];
      expect(shell).toHaveLength(2);
      expect(shell[0]).toEqual(other);
      expect(shell[1]).toMatchObject({ failClosed: true });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
