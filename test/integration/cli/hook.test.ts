// `agent-pep hook` as Claude Code and Codex run a command hook: one recorded event on stdin, the answer
// on stdout, against a real dev PDP on 127.0.0.1. The command runs in this process (test/support/cli.ts);
// what only a process shows runs the built bin (`npm run build` first; npm test does): the exit codes,
// a deadline while stdin stays open or the PDP hangs, stdin over the cap, a crash before the command
// loads, and the Claude Code binary running the hook from its settings.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { query } from '@anthropic-ai/claude-agent-sdk';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type DevPdp, startDevPdp } from '../../../packages/dev-pdp/src/index.js';
import { type AnthropicStub, offlineClaudeEnv, startAnthropicStub } from '../../support/anthropic-stub.js';
import { type LateEnd, runInProcess } from '../../support/cli.js';
import { ROOT } from '../../support/processes.js';

const cli = join(ROOT, 'dist', 'cli', 'main.js');
const policy = JSON.parse(readFileSync(join(ROOT, 'examples/claude-code-hook/policy.json'), 'utf8')) as object;

type Json = Record<string, unknown>;
function fixture(name: string): Json {
  return JSON.parse(readFileSync(join(ROOT, 'test/fixtures/hooks', `${name}.json`), 'utf8')) as Json;
}
function withInput(event: Json, command: string): Json {
  return { ...event, tool_input: { ...(event.tool_input as Json), command } };
}

interface HookRun {
  code: number | null;
  stdout: string;
  stderr: string;
  json: Json;
}

function parsed(stdout: string): Json {
  try {
    return stdout.trim() === '' ? {} : (JSON.parse(stdout) as Json);
  } catch {
    return { unparsable: stdout };
  }
}

/** Runs `agent-pep hook ...` in this process; `stdin` undefined leaves stdin open (a host that never finishes writing). */
async function hook(
  args: string[],
  stdin: string | Buffer | LateEnd | undefined,
  env: Record<string, string> = {},
): Promise<HookRun> {
  const r = await runInProcess(['hook', ...args], { input: stdin ?? 'open', env });
  return { ...r, json: parsed(r.stdout) };
}

/** Spawns `agent-pep hook ...` (the built bin); `stdin` undefined leaves stdin open. */
function hookProcess(
  args: string[],
  stdin: string | Buffer | LateEnd | undefined,
  env: Record<string, string> = {},
): Promise<HookRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, 'hook', ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr, json: parsed(stdout) });
    });
    child.stdin.on('error', () => undefined);
    if (typeof stdin === 'object' && !Buffer.isBuffer(stdin)) {
      child.stdin.write(stdin.text);
      const ender = setTimeout(() => child.stdin.end(), stdin.endAfterMs);
      child.once('exit', () => clearTimeout(ender));
    } else if (stdin !== undefined) child.stdin.end(stdin);
  });
}

function pre(run: HookRun): Json {
  return run.json.hookSpecificOutput as Json;
}

let pdp: DevPdp;
/**
 * The Claude Code session's own PDP: the session runs beside the file's other tests, which read
 * `pdp`'s evidence (the last record, or that nothing was added) and must not see the session's calls.
 */
let sessionPdp: DevPdp;
let keyed: DevPdp;
/** Set to hang by one test, so none of the others sees the fault. */
let faulty: DevPdp;
let closedPort: number;
let hung: Server;
let hungUrl: string;
const hungSockets = new Set<Socket>();

beforeAll(async () => {
  pdp = await startDevPdp({ policy, port: 0, log: false });
  sessionPdp = await startDevPdp({ policy, port: 0, log: false });
  keyed = await startDevPdp({ policy, port: 0, log: false, apiKey: 'hook-test-key' });
  faulty = await startDevPdp({ policy, port: 0, log: false });
  // A port that nothing listens on: bind one, note it, close it.
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  closedPort = (probe.address() as { port: number }).port;
  await new Promise<void>((r) => probe.close(() => r()));
  // A PDP that accepts connections and never answers.
  hung = createServer((socket) => {
    hungSockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('close', () => hungSockets.delete(socket));
  });
  await new Promise<void>((r) => hung.listen(0, '127.0.0.1', r));
  hungUrl = `http://127.0.0.1:${(hung.address() as { port: number }).port}`;
  claudeSession = runClaudeSession();
  // awaited by the describe that checks it; a failure is reported there, not as an unhandled rejection
  claudeSession.catch(() => undefined);
});
afterAll(async () => {
  // The Claude Code session uses sessionPdp: let it end (a filtered run may not have awaited it) first.
  await claudeSession?.catch(() => undefined);
  for (const d of [claude.dir, claude.home]) if (d !== '') rmSync(d, { recursive: true, force: true });
  await pdp?.close();
  await sessionPdp?.close();
  await keyed?.close();
  await faulty?.close();
  for (const socket of hungSockets) socket.destroy();
  await new Promise<void>((r) => (hung ? hung.close(() => r()) : r()));
});

const base = () => ['--pdp', pdp.url, '--agent', 'coder'];

describe.each(['claude-code', 'codex'] as const)('%s PreToolUse is the action stage', (host) => {
  const event = () => fixture(`${host}-pre-tool-use-bash`);

  test('ALLOW lets the tool run: allow (Claude Code) or an empty answer (Codex), exit 0', async () => {
    const r = await hook([host, ...base()], JSON.stringify(withInput(event(), 'ls -la')));
    expect(r.code).toBe(0);
    if (host === 'codex') expect(r.json).toEqual({});
    else expect(pre(r)).toEqual({ hookEventName: 'PreToolUse', permissionDecision: 'allow' });
  });

  test('BLOCK is a deny with the toolMessage, exit 0', async () => {
    const r = await hook([host, ...base()], JSON.stringify(event()));
    expect(r.code).toBe(0);
    expect(pre(r)).toEqual({
      hookEventName: 'PreToolUse',
      permissionDecision: 'deny',
      permissionDecisionReason: "ERROR: Tool 'Bash' denied by policy: recursive deletes are not allowed",
    });
  });

  test('WARN allows with updatedInput = transformedArgs', async () => {
    const r = await hook([host, ...base()], JSON.stringify(withInput(event(), 'npm install')));
    expect(r.code).toBe(0);
    expect(pre(r).permissionDecision).toBe('allow');
    expect((pre(r).updatedInput as Json).command).toBe('npm ci');
  });

  test('the session is the event session_id, and the PDP saw the action', async () => {
    const e = withInput(event(), 'echo session');
    await hook([host, ...base()], JSON.stringify(e));
    const last = pdp.evidence().at(-1);
    expect(last).toMatchObject({ session: e.session_id, stage: 'action', tool: 'bash', agentId: 'coder' });
  });
});

describe('--protocol authzen', () => {
  test('asks the PDP over AuthZEN 1.0 with the same answers: BLOCK a deny, ALLOW an allow', async () => {
    const args = ['claude-code', ...base(), '--protocol', 'authzen'];
    const denied = await hook(args, JSON.stringify(fixture('claude-code-pre-tool-use-bash')));
    expect(denied.code).toBe(0);
    expect(pre(denied).permissionDecision).toBe('deny');
    const allowed = await hook(args, JSON.stringify(withInput(fixture('claude-code-pre-tool-use-bash'), 'ls -la')));
    expect(allowed.code).toBe(0);
    expect(pre(allowed)).toEqual({ hookEventName: 'PreToolUse', permissionDecision: 'allow' });
    expect(pdp.evidence().at(-1)).toMatchObject({ stage: 'action', tool: 'bash', verdict: 'ALLOW' });
  });
});

describe('ESCALATE', () => {
  const push = (host: string) =>
    JSON.stringify(withInput(fixture(`${host}-pre-tool-use-bash`), 'git push origin main'));
  const held = "ERROR: Tool 'Bash' is held for human review: pushes need review";

  test('Claude Code answers ask, so the host prompt is the approval', async () => {
    const r = await hook(['claude-code', ...base()], push('claude-code'));
    expect(r.code).toBe(0);
    expect(pre(r)).toEqual({ hookEventName: 'PreToolUse', permissionDecision: 'ask', permissionDecisionReason: held });
  });

  test('--escalate deny makes it a deny with the held text', async () => {
    const r = await hook(['claude-code', ...base(), '--escalate', 'deny'], push('claude-code'));
    expect(r.code).toBe(0);
    expect(pre(r)).toMatchObject({ permissionDecision: 'deny', permissionDecisionReason: held });
  });

  test('Codex cannot ask (an ask would fail open there): a deny with the held text', async () => {
    const r = await hook(['codex', ...base()], push('codex'));
    expect(r.code).toBe(0);
    expect(pre(r)).toMatchObject({ permissionDecision: 'deny', permissionDecisionReason: held });
    const usage = await hook(['codex', ...base(), '--escalate', 'ask'], push('codex'));
    expect(usage.code).toBe(2);
  });
});

describe.each(['claude-code', 'codex'] as const)('%s UserPromptSubmit is the input stage', (host) => {
  test('BLOCK blocks the prompt', async () => {
    const r = await hook([host, ...base()], JSON.stringify(fixture(`${host}-user-prompt-submit`)));
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ decision: 'block', reason: 'ERROR: input blocked by policy: prompt injection' });
    if (host === 'claude-code') expect(r.json.hookSpecificOutput).toMatchObject({ suppressOriginalPrompt: true });
    else expect(r.json.hookSpecificOutput).toBeUndefined();
  });

  test('ALLOW answers nothing to do', async () => {
    const e = { ...fixture(`${host}-user-prompt-submit`), prompt: 'Where is the build script?' };
    const r = await hook([host, ...base()], JSON.stringify(e));
    expect(r.code).toBe(0);
    expect(r.json).toEqual({});
  });
});

describe.each(['claude-code', 'codex'] as const)('%s PostToolUse is the context_egress stage', (host) => {
  test('BLOCK blocks the result and never repeats it', async () => {
    const r = await hook([host, ...base()], JSON.stringify(fixture(`${host}-post-tool-use-bash`)));
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ decision: 'block' });
    expect(r.json.reason).toBe(
      "ERROR: context_egress blocked by policy: a live API key is in the tool output (tool 'Bash')",
    );
    expect(r.stdout).not.toContain('sk_live_');
    if (host === 'claude-code') {
      expect(r.json.hookSpecificOutput).toEqual({
        hookEventName: 'PostToolUse',
        updatedToolOutput: {
          stdout: '[withheld by policy]',
          stderr: '[withheld by policy]',
          interrupted: false,
          isImage: false,
        },
      });
    } else {
      // Codex cannot replace a tool output: the turn is stopped.
      expect(r.json).toMatchObject({ continue: false });
    }
    expect(pdp.evidence().at(-1)).toMatchObject({ stage: 'context_egress', tool: 'bash' });
  });

  test('WARN replaces the output on Claude Code (same shape) and blocks on Codex', async () => {
    const e = fixture(`${host}-post-tool-use-bash`);
    const phone = 'call 555-123-4567';
    e.tool_response = host === 'claude-code' ? { ...(e.tool_response as Json), stdout: phone } : phone;
    const r = await hook([host, ...base()], JSON.stringify(e));
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain('555-123-4567');
    if (host === 'claude-code') {
      expect(r.json.hookSpecificOutput).toEqual({
        hookEventName: 'PostToolUse',
        updatedToolOutput: { stdout: 'call [phone]', stderr: '', interrupted: false, isImage: false },
      });
    } else {
      expect(r.json).toMatchObject({ decision: 'block', continue: false });
    }
  });
});

describe('fails closed on its own errors: a deny answer, the reason on stderr, exit 2', () => {
  const event = JSON.stringify(fixture('claude-code-pre-tool-use-bash'));

  test.each(['claude-code', 'codex'] as const)('%s: PDP down', async (host) => {
    const r = await hook(
      [host, '--pdp', `http://127.0.0.1:${closedPort}`, '--agent', 'coder'],
      JSON.stringify(withInput(fixture(`${host}-pre-tool-use-bash`), 'ls')),
    );
    expect(r.code).toBe(2);
    expect(pre(r)).toMatchObject({ permissionDecision: 'deny' });
    expect(pre(r).permissionDecisionReason).toBe(
      "ERROR: Tool 'Bash' was not run: the policy check failed (pdp_unreachable)",
    );
    expect(r.stderr).toContain('pdp_unreachable');
  });

  // The deadline cases only wait (a hung PDP, stdin left open): they run at once, each on its own PDP.
  test.concurrent('PDP hung: the decision deadline fires well within --timeout, and the process exits', async () => {
    const started = Date.now();
    const r = await hookProcess(['claude-code', '--pdp', hungUrl, '--agent', 'coder', '--timeout', '1500'], event);
    expect(r.code).toBe(2);
    expect(pre(r).permissionDecisionReason).toBe(
      "ERROR: Tool 'Bash' was not run: the policy check failed (pdp_timeout)",
    );
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  test.concurrent('the dev PDP hanging (fault) gives the same', async () => {
    faulty.setFault({ kind: 'hang' });
    try {
      const r = await hook(
        ['codex', '--pdp', faulty.url, '--agent', 'coder', '--timeout', '1000'],
        JSON.stringify(fixture('codex-pre-tool-use-bash')),
      );
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('pdp_timeout');
    } finally {
      faulty.setFault(null);
    }
  });

  test.concurrent('stdin that never ends: the hook deadline answers deny, and the process exits', async () => {
    const started = Date.now();
    const r = await hookProcess(['claude-code', ...base(), '--timeout', '800'], undefined);
    expect(r.code).toBe(2);
    expect(r.json).toEqual({
      decision: 'block',
      reason: 'ERROR: agent-pep hook failed closed: the hook deadline passed',
    });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  test.concurrent('the hook deadline passing during a PostToolUse decision still withholds the output (Claude Code)', async () => {
    // stdin ends 2000 ms after the start (more than 500 ms into the hook's 4000 ms); the hung PDP's
    // decision (3500 ms) would end past the hook deadline, so the hook's own deadline answers, knowing
    // the event: the deny must not leave the output in place.
    const event = JSON.stringify(fixture('claude-code-post-tool-use-bash'));
    const r = await hook(['claude-code', '--pdp', hungUrl, '--agent', 'coder', '--timeout', '4000'], {
      text: event,
      endAfterMs: 2000,
    });
    expect(r.code).toBe(2);
    expect(r.json).toMatchObject({
      decision: 'block',
      reason: 'ERROR: agent-pep hook failed closed: the hook deadline passed',
      hookSpecificOutput: {
        hookEventName: 'PostToolUse',
        updatedToolOutput: { stdout: '[withheld by policy]', stderr: '[withheld by policy]' },
      },
    });
    expect(r.stdout).not.toContain('sk_live_');
  });

  test('a PostToolUse output too deep to read is answered in the PostToolUse form, the output withheld', async () => {
    const n = 200_000;
    const deep = `${'{"a":'.repeat(n)}"sk_live_deep"${'}'.repeat(n)}`;
    const e = fixture('claude-code-post-tool-use-bash');
    const text = JSON.stringify({ ...e, tool_response: 0 }).replace('"tool_response":0', `"tool_response":${deep}`);
    const r = await hook(['claude-code', ...base()], text);
    expect(r.code).toBe(2);
    expect(r.json).toMatchObject({
      decision: 'block',
      reason: 'ERROR: agent-pep hook failed closed: PostToolUse tool_response cannot be read as text',
      hookSpecificOutput: { hookEventName: 'PostToolUse' },
    });
    expect(r.stdout).not.toContain('sk_live_');
    expect((r.json.hookSpecificOutput as Json).updatedToolOutput).toBeDefined();
  });

  test.each([
    [
      'malformed JSON',
      '{"hook_event_name": "PreToolUse", ',
      'the hook event is not JSON at line 1, column 35 (position 34) (it ends early)',
    ],
    ['not an object', '[1, 2]', 'the hook event is not a JSON object'],
    [
      'a member named twice (one parser reads Bash, another Read)',
      '{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_name":"Read","tool_input":{}}',
      'the hook event names a member twice',
    ],
    ['empty stdin', '', 'the hook event is not JSON: stdin is empty'],
    ['unknown event kind', JSON.stringify(fixture('claude-code-stop')), 'unknown hook event kind'],
  ])('%s', async (_name, stdin, reason) => {
    const r = await hook(['claude-code', ...base()], stdin);
    expect(r.code).toBe(2);
    expect(r.json).toEqual({ decision: 'block', reason: `ERROR: agent-pep hook failed closed: ${reason}` });
    expect(r.stderr.trim()).toBe(`ERROR: agent-pep hook failed closed: ${reason}`);
  });

  test('invalid UTF-8 on stdin', async () => {
    const r = await hook(['codex', ...base()], Buffer.from([0x7b, 0xff, 0xfe, 0x7d]));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('not valid UTF-8');
  });

  test('a PreToolUse event without session_id or with a non-object tool_input is a deny of that kind', async () => {
    const e = fixture('claude-code-pre-tool-use-bash');
    delete e.session_id;
    const r = await hook(['claude-code', ...base()], JSON.stringify(e));
    expect(r.code).toBe(2);
    expect(pre(r)).toMatchObject({ permissionDecision: 'deny' });
    const r2 = await hook(
      ['codex', ...base()],
      JSON.stringify({ ...fixture('codex-pre-tool-use-bash'), tool_input: 'rm' }),
    );
    expect(r2.code).toBe(2);
    expect(pre(r2)).toMatchObject({ permissionDecision: 'deny' });
  });

  test('a crash before the hook runs (its module cannot load) exits 2 with a reason, never 1 (which lets the call through)', async () => {
    // A module resolve hook makes `import('./hook.js')` fail, as a broken install would.
    const dir = mkdtempSync(join(tmpdir(), 'agent-pep-hook-crash-'));
    try {
      const resolver = join(dir, 'resolve.mjs');
      const register = join(dir, 'register.mjs');
      writeFileSync(
        resolver,
        "export async function resolve(s, c, next) { if (s === './hook.js') throw new Error('broken install'); return next(s, c); }\n",
      );
      writeFileSync(register, "import { register } from 'node:module';\nregister('./resolve.mjs', import.meta.url);\n");
      const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, ['--import', register, cli, 'hook', 'claude-code', ...base()], {
          cwd: ROOT,
          stdio: ['pipe', 'pipe', 'pipe'],
        });
        let stderr = '';
        child.stderr.on('data', (c: Buffer) => {
          stderr += c.toString();
        });
        child.once('exit', (code) => resolve({ code, stderr }));
        child.stdin.on('error', () => undefined);
        child.stdin.end(event);
      });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('broken install');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('stdin larger than the cap is refused without reading it all', async () => {
    const big = JSON.stringify({ ...fixture('claude-code-user-prompt-submit'), prompt: 'x'.repeat(5 * 1024 * 1024) });
    const before = pdp.evidence().length;
    const r = await hookProcess(['claude-code', ...base()], big);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('larger than');
    expect(pdp.evidence().length).toBe(before); // the PDP was never asked
  });
});

describe('options', () => {
  const event = JSON.stringify(withInput(fixture('claude-code-pre-tool-use-bash'), 'ls'));

  test('--api-key-env sends the key from the environment', async () => {
    const args = ['claude-code', '--pdp', keyed.url, '--agent', 'coder', '--api-key-env', 'HOOK_TEST_KEY'];
    const ok = await hook(args, event, { HOOK_TEST_KEY: 'hook-test-key' });
    expect(ok.code).toBe(0);
    expect(pre(ok).permissionDecision).toBe('allow');
    const wrong = await hook(args, event, { HOOK_TEST_KEY: 'not-the-key' });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('pdp_status');
    const unset = await hook(args, event, { HOOK_TEST_KEY: '' });
    expect(unset.code).toBe(2);
    expect(unset.stderr).toContain('--api-key-env: the environment variable HOOK_TEST_KEY is not set');
    // The line says what to do: set the variable, or drop the flag for a PDP without a key.
    expect(unset.stderr).toContain("set it to the PDP's API key, or leave --api-key-env out for a PDP that needs none");
  });

  test.each([
    [['claude-code', '--agent', 'coder'], '--pdp URL is required'],
    [['claude-code', '--pdp', 'http://127.0.0.1:1'], '--agent ID is required'],
    [['windsurf', '--pdp', 'http://127.0.0.1:1', '--agent', 'a'], 'unknown host'],
    [[], 'a host is required'],
    [['claude-code', '--pdp', 'ftp://x', '--agent', 'a'], '--pdp'],
    [['claude-code', '--pdp', 'http://127.0.0.1:1', '--agent', 'a', '--timeout', '0'], '--timeout'],
    [['claude-code', '--pdp', 'http://127.0.0.1:1', '--agent', 'a', '--protocol', 'grpc'], '--protocol'],
    [['claude-code', '--pdp', 'http://127.0.0.1:1', '--agent', 'a', '--escalate', 'maybe'], '--escalate'],
    [['claude-code', '--pdp', 'http://127.0.0.1:1', '--agent', 'a', '--bogus'], 'bogus'],
  ])('a usage error exits 2 with one line naming it: %j', async (args, named) => {
    const r = await hook(args, event);
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')[0]).toContain(named);
    expect(r.stdout).toBe('');
  });

  test('--help prints the usage and exits 0', async () => {
    const r = await hook(['--help'], '');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: agent-pep hook <host>');
  });
});

describe('the bin', () => {
  test('answers on stdout and exits 0 with a policy answer, 2 when it fails closed or on a usage error', async () => {
    const allowed = JSON.stringify(withInput(fixture('claude-code-pre-tool-use-bash'), 'ls -la'));
    const [ok, down, usage] = await Promise.all([
      hookProcess(['claude-code', ...base()], allowed),
      hookProcess(
        ['codex', '--pdp', `http://127.0.0.1:${closedPort}`, '--agent', 'coder'],
        JSON.stringify(withInput(fixture('codex-pre-tool-use-bash'), 'ls')),
      ),
      hookProcess(['claude-code', '--agent', 'coder'], allowed),
    ]);
    expect(ok.code).toBe(0);
    expect(pre(ok)).toEqual({ hookEventName: 'PreToolUse', permissionDecision: 'allow' });
    expect(down.code).toBe(2);
    expect(pre(down)).toMatchObject({ permissionDecision: 'deny' });
    expect(down.stderr).toContain('pdp_unreachable');
    expect(usage.code).toBe(2);
    expect(usage.stderr.split('\n')[0]).toContain('--pdp URL is required');
    expect(usage.stdout).toBe('');
  });
});

// The Claude Code binary the Agent SDK ships runs the command hook from its settings, offline: a local
// stub of the Messages API proposes five Bash commands in one answer (as a model may); what the model is
// sent back for each is recorded. One session, so the binary starts once: the hooks that differ (a PDP
// that is down, a hook that crashes) are scoped to their command by the hook's `if` rule. The session
// runs in child processes (the binary, the hooks it starts), so it starts with this file's servers and
// runs beside its other tests; the describe at the end checks what it did.
let claudeSession: Promise<void> | undefined;
const claude = {
  dir: '',
  home: '',
  stub: undefined as AnthropicStub | undefined,
};

async function runClaudeSession(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'agent-pep-hook-'));
  const home = mkdtempSync(join(tmpdir(), 'agent-pep-hook-home-'));
  claude.dir = dir;
  claude.home = home;
  const victim = () => join(dir, 'victim');
  const marker = (name: string) => join(dir, name);
  mkdirSync(victim());
  const bash = (command: string) => ({ name: 'Bash', input: { command, description: 'test command' } });
  const stub = await startAnthropicStub([
    bash(`rm -rf ${victim()}`),
    bash(`touch ${marker('marker-down')}`),
    bash(`touch ${marker('marker-ok')}`),
    bash('echo STRIPE_KEY=sk_live_abc123'),
    bash(`touch ${marker('marker-crash')}`),
  ]);
  claude.stub = stub;
  const hookCommand = (pdpUrl: string) =>
    `"${process.execPath}" "${cli}" hook claude-code --pdp ${pdpUrl} --agent coder --timeout 8000`;
  // The README settings: onFailure "block", so a hook that cannot answer blocks the call.
  const pepHook = {
    type: 'command' as const,
    command: hookCommand(sessionPdp.url),
    timeout: 10,
    onFailure: 'block' as const,
  };
  const downHook = {
    type: 'command' as const,
    command: hookCommand(`http://127.0.0.1:${closedPort}`),
    timeout: 10,
    onFailure: 'block' as const,
    if: `Bash(touch ${marker('marker-down')})`,
  };
  const crashingHook = {
    type: 'command' as const,
    command: 'exit 1',
    timeout: 10,
    onFailure: 'block' as const,
    if: `Bash(touch ${marker('marker-crash')})`,
  };
  // Each call reaches only the PreToolUse hook its case is about (one process each, as Claude Code
  // skips a hook whose `if` rule does not match); every call that ran reaches the PostToolUse hook.
  const pepHookFor = (command: string) => ({ ...pepHook, if: `Bash(${command})` });
  try {
    for await (const _ of query({
      prompt: 'run the commands',
      options: {
        cwd: dir,
        settingSources: [],
        maxTurns: 3,
        allowedTools: ['Bash'],
        settings: {
          hooks: {
            PreToolUse: [
              {
                matcher: 'Bash',
                hooks: [
                  pepHookFor(`rm -rf ${victim()}`),
                  pepHookFor(`touch ${marker('marker-ok')}`),
                  pepHookFor('echo STRIPE_KEY=sk_live_abc123'),
                  downHook,
                  crashingHook,
                ],
              },
            ],
            PostToolUse: [{ matcher: 'Bash', hooks: [pepHook] }],
          },
        },
        env: offlineClaudeEnv(stub, home),
      },
    })) {
      // drain
    }
  } finally {
    await stub.close();
  }
}

describe('the Claude Code binary runs the command hook', () => {
  let dir: string;
  let stub: AnthropicStub;
  const victim = () => join(dir, 'victim');
  const marker = (name: string) => join(dir, name);
  // The proposed calls, in order; `result(i)` is what the model was sent back for call i.
  const DENIED = 0;
  const DOWN = 1;
  const ALLOWED = 2;
  const LEAKY = 3;
  const CRASHED = 4;
  const result = (i: number) => stub.toolResult(i) ?? '';

  beforeAll(async () => {
    await claudeSession;
    dir = claude.dir;
    stub = claude.stub as AnthropicStub;
  }, 90_000);

  test('every proposed call reached the hooks and the model was sent a result for each', () => {
    expect(stub.calls()).toBeGreaterThanOrEqual(2);
    for (const i of [DENIED, DOWN, ALLOWED, LEAKY, CRASHED]) expect(result(i)).not.toBe('');
  });

  test('a PreToolUse deny: the command never runs and the model sees the toolMessage', () => {
    expect(existsSync(victim())).toBe(true);
    expect(result(DENIED)).toContain('denied by policy: recursive deletes are not allowed');
  });

  test('the PDP down: exit 2 blocks the call', () => {
    expect(existsSync(marker('marker-down'))).toBe(false);
    expect(result(DOWN)).toContain('pdp_unreachable');
  });

  test('an allowed command runs (the checks above can fail)', () => {
    expect(existsSync(marker('marker-ok'))).toBe(true);
    expect(result(ALLOWED)).not.toContain('policy');
  });

  test('a PostToolUse block: the key in the output is never sent to the model', () => {
    expect(result(LEAKY)).toContain('[withheld by policy]');
    expect(stub.toolResults().join('\n')).not.toContain('sk_live_abc123');
  });

  test('a hook that cannot answer (exit 1) under onFailure: "block" (the README settings) blocks the call', () => {
    expect(existsSync(marker('marker-crash'))).toBe(false);
    expect(result(CRASHED)).toContain('onFailure');
  });
});
