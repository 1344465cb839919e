// `agent-pep hook serve` as a process (the built bin): the token written to --token-file with mode 0600
// and never printed, a log line per request without content or token, --quiet, loopback only, and a
// graceful stop on SIGTERM and SIGINT (exit 0).
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DevPdp, startDevPdp } from 'agent-pep/dev-pdp';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runBin } from '../../support/bin.js';
import { HOSTS_POLICY, hookFixture } from '../../support/hook-hosts.js';
import { ROOT, startPrintingUrl } from '../../support/processes.js';

const cli = join(ROOT, 'dist', 'cli', 'main.js');
let pdp: DevPdp;
let dir: string;

beforeAll(async () => {
  pdp = await startDevPdp({ policy: HOSTS_POLICY, port: 0, log: false });
  dir = mkdtempSync(join(tmpdir(), 'agent-pep-serve-'));
});
afterAll(async () => {
  await pdp.close();
  rmSync(dir, { recursive: true, force: true });
});

function start(tokenFile: string, extra: string[] = []) {
  return startPrintingUrl([
    cli,
    'hook',
    'serve',
    '--pdp',
    pdp.url,
    '--agent',
    'coder',
    '--port',
    '0',
    '--token-file',
    tokenFile,
    ...extra,
  ]);
}

describe('agent-pep hook serve', () => {
  test('writes a new token (mode 0600) it never prints, logs one line per request, stops on SIGTERM with 0', async () => {
    const tokenFile = join(dir, 'token');
    // An old file (a link or another's token) is replaced, never written through.
    writeFileSync(tokenFile, 'old', { mode: 0o644 });
    const s = await start(tokenFile);
    try {
      const token = readFileSync(tokenFile, 'utf8');
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
      const event = hookFixture('claude-code-pre-tool-use-bash');
      const res = await fetch(`${s.url}/hooks/claude-code`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(event),
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny' } });
      const unauthorized = await fetch(`${s.url}/hooks/claude-code`, { method: 'POST', body: '{}' });
      expect(unauthorized.status).toBe(401);
      await new Promise((r) => setTimeout(r, 100));
      const lines = s.output().trim().split('\n');
      expect(lines.some((l) => / claude-code PreToolUse deny 200 \d+ms$/.test(l))).toBe(true);
      expect(lines.some((l) => / claude-code - unauthorized 401 \d+ms$/.test(l))).toBe(true);
      expect(s.output()).not.toContain(token);
      expect(s.output()).not.toContain('rm -rf');
    } finally {
      expect(await s.stop()).toBe(0);
    }
  });

  test('--keep-token: a restart keeps its own token (a running host keeps working); any other file gets a new one', async () => {
    const tokenFile = join(dir, 'kept-token');
    const first = await start(tokenFile, ['--quiet']);
    const token = readFileSync(tokenFile, 'utf8');
    expect(await first.stop()).toBe(0);
    const again = await start(tokenFile, ['--quiet', '--keep-token']);
    try {
      expect(readFileSync(tokenFile, 'utf8')).toBe(token);
      const res = await fetch(`${again.url}/hooks/codex`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
        body: JSON.stringify(hookFixture('codex-pre-tool-use-bash')),
      });
      expect(res.status).toBe(200);
    } finally {
      expect(await again.stop()).toBe(0);
    }
    // Readable by others, or not a token this command made: never reused.
    for (const [content, mode] of [
      [token, 0o644],
      ['guessable', 0o600],
    ] as const) {
      rmSync(tokenFile);
      writeFileSync(tokenFile, content, { mode });
      const s = await start(tokenFile, ['--quiet', '--keep-token']);
      try {
        expect(readFileSync(tokenFile, 'utf8')).not.toBe(content);
        expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
      } finally {
        expect(await s.stop()).toBe(0);
      }
    }
  });

  test('--quiet: no log line; SIGINT stops it with 0', async () => {
    const tokenFile = join(dir, 'quiet-token');
    const s = await start(tokenFile, ['--quiet']);
    const token = readFileSync(tokenFile, 'utf8');
    await fetch(`${s.url}/hooks/codex`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: JSON.stringify(hookFixture('codex-pre-tool-use-bash')),
    });
    expect(s.output().trim().split('\n')).toHaveLength(1);
    s.child.kill('SIGINT');
    expect(await s.stop()).toBe(0);
  });

  test.each([
    [['--host', '0.0.0.0'], 'loopback'],
    [['--port', '70000'], '--port'],
    [['--agent', 'coder'], '--pdp URL is required'],
  ])('a usage error exits 2 with one line naming it: %j', async (args, named) => {
    const r = await runBin([
      'hook',
      'serve',
      ...(args[0] === '--agent' ? args : ['--pdp', pdp.url, '--agent', 'a', ...args]),
      '--token-file',
      join(dir, 'x'),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')[0]).toContain(named);
  });
});
