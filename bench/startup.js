// Section `startup` of the benchmark (issue 30): what a fresh process pays before agent-pep answers.
//
// Claude Code and Codex start `agent-pep hook` as a new process for every tool use (twice: PreToolUse
// and PostToolUse), so its start is paid on every tool call. Two pairs, each measured side by side in
// interleaved runs (the order flips every round), medians compared:
//   - hook start: wall time from spawning `node dist/cli/main.js hook claude-code` (the installed bin)
//     with a PreToolUse event on stdin to its answer on stdout (the bench stub on loopback answers
//     ALLOW), against spawning `node` with a 15-line script that reads the same event, POSTs the same
//     request with `fetch` and prints the same answer;
//   - import cost: `await import('agent-pep')` in a fresh process against `await import('undici')` in a
//     fresh process, each timed inside the child (from before the import to after it), so node's own
//     boot, the same for both, is not in the figure. agent-pep loads undici's Pool when a client is
//     made, not on import: a third side, the import and one `createPep()`, shows that too (information,
//     ratio import_and_client_vs_undici).
//   - HTTP hook (issue 40): the same PreToolUse event POSTed to a running `agent-pep hook serve` on
//     loopback (a new connection each time, as a host that keeps none open would), round trip to the
//     ALLOW answer, beside the process hook's start: what a Claude Code HTTP hook pays instead.
// Ratios: hook_start_vs_node_fetch (target <= 1.0), import_vs_undici (target <= 1.3),
// hook_http_vs_process (HTTP round trip / process hook, target <= 0.1; hook_http_p50_ms the figure).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { skippedRow } from './lib.js';

export const STARTUP_ROWS = Object.freeze({
  hook: 'agent-pep hook claude-code (PreToolUse)',
  fetch: 'node + 15-line fetch script (same request)',
  importPep: "import('agent-pep') in a fresh process",
  importUndici: "import('undici') in a fresh process",
  importAndClient: "import('agent-pep') + createPep() in a fresh process",
  hookHttp: 'agent-pep hook serve, POST /hooks/claude-code (PreToolUse)',
});

/** Round trips timed through `hook serve` (cheap: no process start), and untimed ones first. */
const HTTP_RUNS = Object.freeze({ full: 300, quick: 60, smoke: 3 });
const HTTP_WARMUP = Object.freeze({ full: 30, quick: 10, smoke: 1 });

/** Runs of each row: the timed ones, and untimed ones first (the file cache warm for both sides). */
const RUNS = Object.freeze({ full: 30, quick: 5, smoke: 1 });
const WARMUP = Object.freeze({ full: 2, quick: 1, smoke: 0 });
/** A child that has not answered in this long is stopped and counted invalid. */
const CHILD_TIMEOUT_MS = 30_000;
const AGENT_ID = 'support-ai';
const EVENT = JSON.stringify({
  session_id: 'sess_bench_hook',
  transcript_path: '/tmp/agent-pep-bench.jsonl',
  cwd: '/tmp',
  hook_event_name: 'PreToolUse',
  tool_name: 'refund_payment',
  tool_input: { orderId: 'ord_1842', amount: 129.5, currency: 'EUR', reason: 'damaged on arrival' },
});
/** What both sides print for the ALLOW (Claude Code's PreToolUse answer). */
const ALLOW_ANSWER = JSON.stringify({
  hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow' },
});

/** The most naive script doing a hook's job: 15 lines, `fetch`, no checks beyond the verdict. */
const FETCH_SCRIPT = `let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => { input += chunk; });
process.stdin.on('end', async () => {
  const event = JSON.parse(input);
  const res = await fetch(process.argv[2] + '/api/policy/authorize', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ agentId: process.argv[3], session: event.session_id, stage: 'action',
      requestId: crypto.randomUUID(), tool: event.tool_name, args: event.tool_input }),
  });
  const d = await res.json();
  const decision = res.ok && d.verdict === 'ALLOW' ? 'allow' : 'deny';
  process.stdout.write(JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: decision } }) + '\\n');
});
`;

/** The child that times one import from inside: prints the milliseconds. */
const importScript = (specifier, then = '') =>
  `const t0 = performance.now(); const m = await import(${JSON.stringify(specifier)}); ${then} process.stdout.write(String(performance.now() - t0));`;
/** After the import: one client (its pool made, nothing sent), closed. */
const MAKE_CLIENT = `await m.createPep({ pdpUrl: 'http://127.0.0.1:9', agentId: '${AGENT_ID}', session: 's', permits: false }).close();`;

/**
 * Spawns one child and times it: from the spawn to the first line on stdout (`measure: 'line'`), or
 * the figure the child prints itself (`measure: 'printed'`, read when it exits).
 * @returns {Promise<{ ms: number, out: string, code: number | null }>}
 */
function timeChild(args, { cwd, stdin, measure }) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, args, { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let lineAt;
    const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_TIMEOUT_MS);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (s) => {
      out += s;
      if (lineAt === undefined && out.includes('\n')) lineAt = performance.now();
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (s) => {
      err += s;
    });
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      const ms = measure === 'line' ? (lineAt === undefined ? Number.NaN : lineAt - t0) : Number(out);
      resolve({ ms, out: measure === 'line' ? out.split('\n')[0] : out, code, err: err.slice(0, 300) });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(stdin ?? '');
  });
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  if (n === 0) return null;
  return n % 2 === 1 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

const round3 = (x) => (x === null || Number.isNaN(x) ? null : Math.round(x * 1000) / 1000);

/** A row of a startup pair: median (p50_ms) and slowest (p99_ms) of the valid runs, in milliseconds. */
function startupRow(client, samples, errors, lastError) {
  const xs = samples.filter((x) => Number.isFinite(x));
  const row = {
    scenario: 'startup',
    client,
    concurrency: 1,
    p50_ms: round3(median(xs)),
    p99_ms: xs.length > 0 ? round3(Math.max(...xs)) : null,
    ops_per_s: null,
    samples: samples.length + errors,
    errors,
  };
  if (errors > 0) row.note = `invalid runs: ${String(lastError).slice(0, 120)}`;
  return row;
}

/**
 * Runs two sides in interleaved rounds (A B, then B A, ...) after untimed warm-up runs.
 * @param sides `[{ name, run: () => Promise<{ ms, ok, why }> }, ...]`
 */
async function interleave(sides, runs, warmup) {
  const out = sides.map(() => ({ samples: [], errors: 0, lastError: undefined }));
  for (let i = 0; i < warmup; i++) for (const s of sides) await s.run();
  for (let i = 0; i < runs; i++) {
    const order = i % 2 === 0 ? sides.map((_, k) => k) : sides.map((_, k) => sides.length - 1 - k);
    for (const k of order) {
      const r = await sides[k].run();
      if (r.ok) out[k].samples.push(r.ms);
      else {
        out[k].errors += 1;
        out[k].lastError = r.why;
      }
    }
  }
  return out;
}

/** Starts `agent-pep hook serve` (the built bin) against the stub; resolves with its URL, token and stop. */
function startHookServe(bin, cwd, stubUrl, dir) {
  const tokenFile = path.join(dir, 'hook-token');
  const args = [bin, 'hook', 'serve', '--pdp', stubUrl, '--agent', AGENT_ID, '--port', '0', '--quiet'];
  const child = spawn(process.execPath, [...args, '--token-file', tokenFile], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    let started = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('hook serve did not start'));
    }, CHILD_TIMEOUT_MS);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (s) => {
      out += s;
      const m = started ? null : /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m === null) return;
      started = true;
      clearTimeout(timer);
      const exited = new Promise((r) => child.once('exit', r));
      const stop = () => {
        child.kill('SIGTERM');
        return exited;
      };
      resolve({ url: m[1], token: readFileSync(tokenFile, 'utf8'), stop });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`hook serve exited with ${code}`));
    });
  });
}

/** One POST of the event to `hook serve` on a new connection; the milliseconds to the whole answer. */
function timePost(url, token) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const req = http.request(`${url}/hooks/claude-code`, {
      method: 'POST',
      agent: false,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (s) => {
        body += s;
      });
      res.on('end', () => {
        const ms = performance.now() - t0;
        const ok = res.statusCode === 200 && body.trim() === ALLOW_ANSWER;
        resolve(ok ? { ms, ok } : { ms, ok, why: `status ${res.statusCode}, answer ${body.slice(0, 80)}` });
      });
    });
    req.on('error', (e) => resolve({ ms: Number.NaN, ok: false, why: e.message }));
    req.end(EVENT);
  });
}

/** The HTTP hook row: round trips through a running `hook serve`, skipped (with the reason) when it cannot start. */
async function benchHookHttp(stub, profile, rows, log, { bin, cwd, dir }) {
  let serve;
  try {
    serve = await startHookServe(bin, cwd, stub.url, dir);
  } catch (e) {
    rows.push(skippedRow('startup', STARTUP_ROWS.hookHttp, 1, String(e.message)));
    return;
  }
  try {
    const runs = HTTP_RUNS[profile.name] ?? HTTP_RUNS.quick;
    log(`startup: hook serve round trips, ${runs} runs`);
    const [side] = await interleave(
      [{ run: () => timePost(serve.url, serve.token) }],
      runs,
      HTTP_WARMUP[profile.name] ?? 0,
    );
    rows.push(startupRow(STARTUP_ROWS.hookHttp, side.samples, side.errors, side.lastError));
  } finally {
    await serve.stop();
  }
}

/**
 * Runs the section: the hook start pair and the import pair. The hook rows are skipped (with the
 * reason) when the bin is not built or the stub is not running.
 */
export async function benchStartup(stub, profile, rows, log, root) {
  const runs = RUNS[profile.name] ?? RUNS.quick;
  const warmup = WARMUP[profile.name] ?? 0;
  const cwd = fileURLToPath(root);
  const bin = fileURLToPath(new URL('dist/cli/main.js', root));
  const dir = mkdtempSync(path.join(os.tmpdir(), 'agent-pep-bench-'));
  try {
    const script = path.join(dir, 'hook-fetch.mjs');
    writeFileSync(script, FETCH_SCRIPT);
    const answered = (r) =>
      r.code === 0 && r.out === ALLOW_ANSWER && Number.isFinite(r.ms)
        ? { ms: r.ms, ok: true }
        : { ms: r.ms, ok: false, why: `exit ${r.code}, answer ${r.out.slice(0, 80)} ${r.err}` };
    const hookArgs = [bin, 'hook', 'claude-code', '--pdp', stub.url, '--agent', AGENT_ID];
    const probe = await timeChild(hookArgs, { cwd, stdin: EVENT, measure: 'line' });
    if (!answered(probe).ok) {
      rows.push(skippedRow('startup', STARTUP_ROWS.hook, 1, `the hook did not answer ALLOW: ${answered(probe).why}`));
      rows.push(skippedRow('startup', STARTUP_ROWS.fetch, 1, 'no hook row to compare with'));
    } else {
      log(`startup: hook vs node + fetch, ${runs} runs each, interleaved`);
      const [hook, fetchSide] = await interleave(
        [
          { run: async () => answered(await timeChild(hookArgs, { cwd, stdin: EVENT, measure: 'line' })) },
          {
            run: async () =>
              answered(await timeChild([script, stub.url, AGENT_ID], { cwd, stdin: EVENT, measure: 'line' })),
          },
        ],
        runs,
        warmup,
      );
      rows.push(startupRow(STARTUP_ROWS.hook, hook.samples, hook.errors, hook.lastError));
      rows.push(startupRow(STARTUP_ROWS.fetch, fetchSide.samples, fetchSide.errors, fetchSide.lastError));
    }
    await benchHookHttp(stub, profile, rows, log, { bin, cwd, dir });
    log(`startup: import('agent-pep') (and + createPep) vs import('undici'), ${runs} runs each, interleaved`);
    const imported = (specifier, then) => async () => {
      const r = await timeChild(['--input-type=module', '-e', importScript(specifier, then)], {
        cwd,
        measure: 'printed',
      });
      return r.code === 0 && Number.isFinite(r.ms) && r.ms > 0
        ? { ms: r.ms, ok: true }
        : { ms: r.ms, ok: false, why: `exit ${r.code}: ${r.err}` };
    };
    const [pep, undici, client] = await interleave(
      [{ run: imported('agent-pep') }, { run: imported('undici') }, { run: imported('agent-pep', MAKE_CLIENT) }],
      runs,
      warmup,
    );
    rows.push(startupRow(STARTUP_ROWS.importPep, pep.samples, pep.errors, pep.lastError));
    rows.push(startupRow(STARTUP_ROWS.importUndici, undici.samples, undici.errors, undici.lastError));
    rows.push(startupRow(STARTUP_ROWS.importAndClient, client.samples, client.errors, client.lastError));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
