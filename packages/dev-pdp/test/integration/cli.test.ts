// The first tests run the built bin (`npm run build` first; npm test does): the server's start, its
// signals and --version; the command's refusals run in this process (test/support/cli.ts).
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { runInProcess } from '../../../../test/support/cli.js';

const root = fileURLToPath(new URL('../../../..', import.meta.url));
const cli = join(root, 'dist', 'cli', 'main.js');
const examplePolicy = join(root, 'demo', 'policy.json');

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running: ChildProcess[] = [];

function run(args: string[], env: Record<string, string> = {}): Run {
  const child = spawn(process.execPath, [cli, ...args], {
    cwd: root,
    env: { ...process.env, PDP_API_KEY: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.push(child);
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString('utf8');
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  return { child, stdout: () => out, stderr: () => err, exit };
}

async function urlsOf(r: Run): Promise<{ url: string; jwksUrl: string }> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const url = /listening on (http:\/\/\S+)/.exec(r.stdout())?.[1];
    const jwksUrl = /JWKS: (http:\/\/\S+)/.exec(r.stdout())?.[1];
    if (url && jwksUrl) return { url, jwksUrl };
    if (r.child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`the CLI did not start; stderr: ${r.stderr()}`);
}

afterEach(() => {
  for (const child of running.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

describe('agent-pep dev-pdp (the bin)', () => {
  let dir: string;
  beforeAll(async () => {
    expect(existsSync(cli), 'build first: npm run build').toBe(true);
    dir = await mkdtemp(join(tmpdir(), 'agent-pep-cli-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const writeTemp = async (name: string, content: string | Buffer): Promise<string> => {
    const path = join(dir, name);
    await writeFile(path, content);
    return path;
  };

  test('check-policy --tools: the bin lists a latch no known tool matches and exits 3', async () => {
    const policy = await writeTemp(
      'typo.json',
      JSON.stringify({
        agents: ['a'],
        latches: [{ id: 'typo', stage: 'action', tool: 'delete_files', verdict: 'BLOCK' }],
      }),
    );
    const r = run(['check-policy', '--policy', policy, '--tools', 'delete_file']);
    expect(await r.exit).toEqual({ code: 3, signal: null });
    expect(r.stdout()).toContain('latches[0] typo: tool delete_files');
    expect(r.stdout()).toContain('known tools no latch covers: 1');
  });

  test('starts on port 0, prints the URL and JWKS URL, answers, and stops with exit 0 on SIGTERM', async () => {
    const r = run(['dev-pdp', '--policy', examplePolicy, '--port', '0']);
    const { url, jwksUrl } = await urlsOf(r);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(url).not.toMatch(/:0$/);
    expect(jwksUrl).toBe(`${url}/.well-known/jwks.json`);
    const jwks = (await (await fetch(jwksUrl)).json()) as { keys: unknown[] };
    expect(jwks.keys).toHaveLength(1);
    const res = await fetch(`${url}/api/policy/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'cli-1' },
      body: JSON.stringify({
        agentId: 'support-ai',
        session: 's',
        stage: 'action',
        requestId: 'cli-1',
        tool: 'refund_payment',
        args: { orderId: 'ord_1', amount: 900 },
      }),
    });
    expect(res.status).toBe(200);
    const held = (await res.json()) as { verdict: string; escalationId: string };
    expect(held.verdict).toBe('ESCALATE');
    // the log line of an ESCALATE names its esc_ id: the one POST /api/escalations/{id} takes
    await expect
      .poll(() => r.stdout())
      .toMatch(new RegExp(`ESCALATE action refund_payment .* ${held.escalationId}\\n`));
    r.child.kill('SIGTERM');
    expect(await r.exit).toEqual({ code: 0, signal: null });
    expect(r.stdout()).not.toContain('ord_1');
  });

  test('SIGTERM drains: the decision in flight is answered, no new connection is taken, then exit 0', async () => {
    const r = run(['dev-pdp', '--policy', examplePolicy, '--port', '0', '--quiet']);
    const { url } = await urlsOf(r);
    const body = JSON.stringify({
      agentId: 'support-ai',
      session: 's',
      stage: 'action',
      requestId: 'drain-1',
      tool: 'refund_payment',
      args: { orderId: 'ord_1', amount: 12 },
    });
    // a request in flight: headers and half its body sent, the rest after the SIGTERM
    const req = request(`${url}/api/policy/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
    });
    const answered = new Promise<{ status: number | undefined; text: string }>((resolve, reject) => {
      req.on('response', (res) => {
        let text = '';
        res.on('data', (c: Buffer) => {
          text += c.toString('utf8');
        });
        res.on('end', () => resolve({ status: res.statusCode, text }));
      });
      req.on('error', reject);
    });
    req.write(body.slice(0, 40));
    await new Promise((resolve) => setTimeout(resolve, 200));
    r.child.kill('SIGTERM');
    await expect.poll(() => r.stdout()).toContain('SIGTERM: draining');
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
    req.end(body.slice(40));
    const reply = await answered;
    expect(reply.status).toBe(200);
    expect((JSON.parse(reply.text) as { verdict: string }).verdict).toBe('ALLOW');
    expect(await r.exit).toEqual({ code: 0, signal: null });
  });

  test('SIGINT stops it with exit 0; the API key comes from PDP_API_KEY; evidence goes to --evidence', async () => {
    const evidence = join(dir, 'evidence.jsonl');
    const r = run(['dev-pdp', '--policy', examplePolicy, '--port', '0', '--evidence', evidence], {
      PDP_API_KEY: 'env-key',
    });
    const { url } = await urlsOf(r);
    const body = JSON.stringify({ agentId: 'support-ai', session: 's', stage: 'output', content: 'call 555-123-4567' });
    const json = { 'content-type': 'application/json' };
    const noKey = await fetch(`${url}/api/policy/authorize`, { method: 'POST', body, headers: json });
    expect(noKey.status).toBe(401);
    const withKey = await fetch(`${url}/api/policy/authorize`, {
      method: 'POST',
      body,
      headers: { ...json, authorization: 'Bearer env-key' },
    });
    expect(((await withKey.json()) as { verdict: string }).verdict).toBe('WARN');
    r.child.kill('SIGINT');
    expect((await r.exit).code).toBe(0);
    const lines = (await readFile(evidence, 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain('555-123-4567');
    expect(r.stdout()).not.toContain('env-key');
  });

  test.each<[string, string[]]>([
    ['an unknown flag', ['dev-pdp', '--policy', examplePolicy, '--nope']],
    ['no --policy', ['dev-pdp']],
    ['a bad port', ['dev-pdp', '--policy', examplePolicy, '--port', 'abc']],
    ['a ttl over 300', ['dev-pdp', '--policy', examplePolicy, '--ttl', '301']],
    ['a session store that is not redis://', ['dev-pdp', '--policy', examplePolicy, '--session-store', 'http://x']],
    ['a max history of 0', ['dev-pdp', '--policy', examplePolicy, '--max-history', '0']],
    ['a session ttl that is not a number', ['dev-pdp', '--policy', examplePolicy, '--session-ttl', 'soon']],
    ['no command', []],
  ])('%s exits 2 with a message on stderr', async (_name, args) => {
    const r = await runInProcess(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/agent-pep:/);
  });

  test('a bad policy exits 2 naming the problem by path', async () => {
    const bad = join(dir, 'bad.json');
    await writeFile(
      bad,
      JSON.stringify({ agents: ['a'], latches: [{ id: 'x', stage: 'input', content: '(', verdict: 'BLOCK' }] }),
    );
    const r = await runInProcess(['dev-pdp', '--policy', bad, '--port', '0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('latches[0].content');
    const notJson = join(dir, 'not.json');
    await writeFile(notJson, '{ agents');
    const r2 = await runInProcess(['dev-pdp', '--policy', notJson, '--port', '0']);
    expect(r2.code).toBe(2);
  });

  test('a policy file is decoded by the one JSON body decoder: a member named twice, a byte-order mark or bytes that are not UTF-8 exit 2', async () => {
    const twice = await writeTemp('twice.json', '{"agents":["a"],"latches":[],"agents":["b"]}');
    const r = await runInProcess(['dev-pdp', '--policy', twice, '--port', '0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`the policy file ${twice} names a member twice (I-JSON, RFC 7493)`);
    const bom = await writeTemp('bom.json', '\uFEFF{"agents":["a"],"latches":[]}');
    const r2 = await runInProcess(['dev-pdp', '--policy', bom, '--port', '0']);
    expect(r2.code).toBe(2);
    expect(r2.stderr).toContain(`the policy file ${bom} is not valid JSON at line 1, column 1 (position 0)`);
    const latin1 = await writeTemp('latin1.json', Buffer.from('{"agents":["\xe9"],"latches":[]}', 'latin1'));
    const r3 = await runInProcess(['dev-pdp', '--policy', latin1, '--port', '0']);
    expect(r3.code).toBe(2);
    expect(r3.stderr).toContain(`the policy file ${latin1} is not valid JSON (it is not UTF-8)`);
  });

  test('a port in use exits 1 with one line naming it and saying what to do (another --port, 0 for a free one)', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    try {
      const port = (blocker.address() as AddressInfo).port;
      const r = await runInProcess(['dev-pdp', '--policy', examplePolicy, '--port', String(port)]);
      expect(r.code).toBe(1);
      expect(r.stderr.trimEnd().split('\n')).toEqual([
        `agent-pep: cannot start the dev PDP (EADDRINUSE): 127.0.0.1:${port} is in use: stop what listens there, or pass another --port (0 for any free port)`,
      ]);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  test('--version prints the package version and exits 0', async () => {
    const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string };
    const r = run(['--version']);
    expect((await r.exit).code).toBe(0);
    expect(r.stdout()).toBe(`${pkg.version}\n`);
  });

  test('the bin: a usage error (an unknown command) exits 2 with two lines on stderr, nothing on stdout', async () => {
    const r = run(['serve']);
    expect((await r.exit).code).toBe(2);
    expect(r.stdout()).toBe('');
    expect(r.stderr().split('\n')).toEqual([
      'agent-pep: unknown command "serve"',
      "Run 'agent-pep --help' for usage.",
      '',
    ]);
  });

  /** The two lines of a usage error: the problem, then the pointer to `--help`. */
  async function usageLines(args: string[]): Promise<string[]> {
    const r = await runInProcess(args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.split('\n');
    expect(lines.pop()).toBe(''); // ends with a newline
    expect(lines).toHaveLength(2);
    return lines;
  }

  test('a missing policy file: two lines on stderr, the first with the system reason ENOENT, the second pointing to --help; exit 2', async () => {
    const [problem, help] = await usageLines(['dev-pdp', '--policy', join(dir, 'missing.json')]);
    expect(problem).toMatch(/^agent-pep: .*ENOENT/);
    expect(help).toContain('agent-pep dev-pdp --help');
  });

  test('a policy file that is not JSON: the first line names the JSON position, the second points to --help; exit 2', async () => {
    const notJson = join(dir, 'not-json.json');
    await writeFile(notJson, '{ agents'); // V8: "Expected property name ... at position 2"
    const [problem, help] = await usageLines(['dev-pdp', '--policy', notJson]);
    expect(problem).toMatch(/^agent-pep: .*position \d+/);
    expect(help).toContain('agent-pep dev-pdp --help');
  });

  test('an --evidence file that already holds records: a usage error naming the flag and the file, saying what to do; exit 2', async () => {
    const used = join(dir, 'used.jsonl');
    await writeFile(used, '{"seq":1}\n');
    const [problem, help] = await usageLines(['dev-pdp', '--policy', examplePolicy, '--port', '0', '--evidence', used]);
    expect(problem).toBe(
      `agent-pep: --evidence ${used} already holds records (a log is one chain, from one start): start afresh with a new file, --evidence ${join(dir, 'used-2.jsonl')}, or move the old log away (keep it and its JWKS for evidence verify)`,
    );
    // the name it offers is free: taken ones are passed over
    await writeFile(join(dir, 'used-2.jsonl'), '{"seq":1}\n');
    const [again] = await usageLines(['dev-pdp', '--policy', examplePolicy, '--port', '0', '--evidence', used]);
    expect(again).toContain(`--evidence ${join(dir, 'used-3.jsonl')},`);
    expect(help).toContain('agent-pep dev-pdp --help');
    expect(await readFile(used, 'utf8')).toBe('{"seq":1}\n'); // the old log is left as it was
  });

  test('an unknown command: exit 2, two lines, the first naming the command, the second pointing to agent-pep --help', async () => {
    const [problem, help] = await usageLines(['serve']);
    expect(problem).toMatch(/^agent-pep: unknown command "serve"/);
    expect(help).toContain('agent-pep --help');
  });

  test('--help prints usage and exits 0', async () => {
    const r = await runInProcess(['dev-pdp', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('--policy');
    // The schema where an installed package has it, for a policy's "$schema".
    expect(r.stdout).toContain('node_modules/@agent-pep/dev-pdp/schema/policy.schema.json');
  });
});
