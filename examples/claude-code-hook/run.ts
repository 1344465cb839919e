/**
 * The Claude Code command hook, offline: recorded Claude Code hook events piped into
 * `agent-pep hook claude-code`, as Claude Code runs it, against a local reference PDP this script starts.
 *
 *   npm run example:claude-code-hook
 *
 * Prints one line per event: the event, what the hook answered, and its exit code. The last event is
 * sent with no PDP listening: the hook fails closed (a deny and exit code 2). Then the same events go
 * to `agent-pep hook serve` as Claude Code's HTTP hooks post them (`agent-pep hook init claude-code
 * --http` writes those settings, claude-settings.json): the same answers, with no process per event.
 * @module
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startDevPdp } from 'agent-pep/dev-pdp';
import postToolUse from './events/post-tool-use-env.json' with { type: 'json' };
import gitPush from './events/pre-tool-use-git-push.json' with { type: 'json' };
import ls from './events/pre-tool-use-ls.json' with { type: 'json' };
import npmInstall from './events/pre-tool-use-npm-install.json' with { type: 'json' };
import rm from './events/pre-tool-use-rm.json' with { type: 'json' };
import prompt from './events/user-prompt-submit.json' with { type: 'json' };
import policy from './policy.json' with { type: 'json' };

// The package's own bin, as `npx agent-pep` finds it.
const manifest = createRequire(import.meta.url).resolve('agent-pep/package.json');
const bin = join(dirname(manifest), 'dist', 'cli', 'main.js');

/** Runs `agent-pep hook claude-code ...` with one event on stdin; resolves with its answer and exit code. */
function hook(pdpUrl: string, event: object): Promise<{ code: number | null; answer: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'hook', 'claude-code', '--pdp', pdpUrl, '--agent', 'coder'], {
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.once('error', reject);
    // 'close', not 'exit': the answer is read to the end of stdout (after 'exit' some of it may be unread).
    child.once('close', (code) => resolve({ code, answer: JSON.parse(out || '{}') as Record<string, unknown> }));
    child.stdin.end(JSON.stringify(event));
  });
}

/** One line: PreToolUse's permission decision and reason, or a text event's decision and reason. */
function summary(answer: Record<string, unknown>): string {
  const specific = answer.hookSpecificOutput as Record<string, unknown> | undefined;
  if (specific?.permissionDecision !== undefined) {
    const input = specific.updatedInput === undefined ? '' : ` updatedInput=${JSON.stringify(specific.updatedInput)}`;
    const reason =
      specific.permissionDecisionReason === undefined ? '' : ` ${String(specific.permissionDecisionReason)}`;
    return `${String(specific.permissionDecision)}${input}${reason}`;
  }
  return answer.decision === undefined ? 'continue' : `${String(answer.decision)} ${String(answer.reason)}`;
}

/** Starts `agent-pep hook serve` (a token file of its own); resolves with its URL, token and stop. */
function hookServe(pdpUrl: string, dir: string): Promise<{ url: string; token: string; stop: () => Promise<void> }> {
  const tokenFile = join(dir, 'hook-token');
  const args = ['hook', 'serve', '--pdp', pdpUrl, '--agent', 'coder', '--port', '0', '--quiet'];
  const child = spawn(process.execPath, [bin, ...args, '--token-file', tokenFile], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('error', reject);
    const look = (c: Buffer) => {
      out += c.toString();
      const url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
      if (url === undefined) return;
      child.stdout.off('data', look);
      const exited = new Promise<void>((done) => child.once('exit', () => done()));
      const stop = () => {
        child.kill('SIGTERM');
        return exited;
      };
      resolve({ url, token: readFileSync(tokenFile, 'utf8'), stop });
    };
    child.stdout.on('data', look);
  });
}

/** POSTs one event as a Claude Code HTTP hook does; resolves with the status and the answer. */
async function post(
  url: string,
  token: string,
  event: object,
): Promise<{ status: number; answer: Record<string, unknown> }> {
  const res = await fetch(`${url}/hooks/claude-code`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(event),
  });
  return { status: res.status, answer: (await res.json()) as Record<string, unknown> };
}

const pdp = await startDevPdp({ policy, log: false });
try {
  const events: [string, string, object][] = [
    ['PreToolUse Bash ls -la', pdp.url, ls],
    ['PreToolUse Bash npm install', pdp.url, npmInstall],
    ['PreToolUse Bash rm -rf build', pdp.url, rm],
    ['PreToolUse Bash git push origin main', pdp.url, gitPush],
    ['UserPromptSubmit', pdp.url, prompt],
    ['PostToolUse Bash cat .env', pdp.url, postToolUse],
    // No PDP on port 9: the hook fails closed.
    ['PreToolUse Bash ls -la, PDP down', 'http://127.0.0.1:9', ls],
  ];
  // Each hook is its own process, as Claude Code runs them: started at once, printed in order.
  const answers = await Promise.all(events.map(([, url, event]) => hook(url, event)));
  answers.forEach(({ code, answer }, i) => {
    console.log(`${events[i]?.[0]}: ${summary(answer)} (exit ${code})`);
  });

  // The same events through `hook serve`, as Claude Code's HTTP hooks post them.
  const dir = mkdtempSync(join(tmpdir(), 'agent-pep-hook-serve-'));
  const serve = await hookServe(pdp.url, dir);
  try {
    for (const [name, , event] of events.slice(0, 3)) {
      const { status, answer } = await post(serve.url, serve.token, event);
      console.log(`hook serve, ${name}: ${summary(answer)} (HTTP ${status})`);
    }
    const unauthorized = await fetch(`${serve.url}/hooks/claude-code`, { method: 'POST', body: JSON.stringify(ls) });
    console.log(`hook serve without the token: HTTP ${unauthorized.status} (Claude Code blocks: onFailure "block")`);
  } finally {
    await serve.stop();
    rmSync(dir, { recursive: true, force: true });
  }
} finally {
  await pdp.close();
}
