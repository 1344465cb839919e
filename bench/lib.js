// Measurement helpers: interleaved, time-boxed batches recorded into perf_hooks histograms.
import { execFileSync, spawn } from 'node:child_process';
import net from 'node:net';
import os from 'node:os';
import { createHistogram, performance } from 'node:perf_hooks';

export const HOST = '127.0.0.1';

/**
 * CPU pinning: on Linux with 2 or more CPUs and `taskset`, the bench process (the clients measured) runs
 * on CPU 0 during the throughput sections (decisions, batch, cerbos, verify) and the servers it talks to
 * (the stub, redis-server, Cerbos) on the others, every thread of each (`taskset -a`). Unpinned, the scheduler moved client and stub between the two CPUs of the bench
 * machine, and one client's 800 ms batches at c64 read anywhere from 10k to 25k ops/s in one run; pinned,
 * within a few per cent. The same for every row, so no ratio favours a side. `BENCH_PIN=0` turns it off;
 * results.json records it (`pinned`).
 */
export const PIN =
  process.platform === 'linux' && process.env.BENCH_PIN !== '0' && os.availableParallelism() >= 2
    ? Object.freeze({
        client: '0',
        servers: os.availableParallelism() === 2 ? '1' : `1-${os.availableParallelism() - 1}`,
      })
    : null;

/** Pins every thread of `pid` to `cpus` (a taskset list); false when it could not (no taskset, no permission). */
function pinTo(pid, cpus) {
  try {
    execFileSync('taskset', ['-a', '-cp', cpus, String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Pins this process to the client CPU; returns what results.json records (`null` when not pinned). */
export function pinClient() {
  return PIN !== null && pinTo(process.pid, PIN.client)
    ? { ...PIN, sections: ['decisions', 'batch', 'cerbos', 'devpdp', 'verify'] }
    : null;
}

/**
 * Lets this process run on every CPU again. The throughput sections are pinned; the tail-latency and
 * process sections (fail-closed p99s, sessions, startup, memory) are not: on one CPU with its GC and
 * libuv threads, the refused-connection p99 of both sides read 1 to 3 ms instead of 0.25 to 0.3.
 */
export function unpinClient() {
  if (PIN !== null) pinTo(process.pid, `0-${os.cpus().length - 1}`);
}

/** Pins a server process to the server CPUs (no-op when pinning is off). */
export function pinServer(pid) {
  if (PIN !== null && pid !== undefined) pinTo(pid, PIN.servers);
}

/** A latency histogram (nanoseconds) plus the op count and busy time that ops/s is computed from. */
export function createCell() {
  return { hist: createHistogram(), ops: 0, errors: 0, elapsedMs: 0, lastError: undefined, batches: [] };
}

function recordMs(cell, ms) {
  cell.hist.record(Math.max(1, Math.round(ms * 1e6)));
}

/**
 * Runs `call` from `concurrency` workers until `durationMs` has passed (or `maxOps` calls started),
 * recording each call's latency. `call` resolves `true` for a valid answer; anything else is an error.
 */
export async function runBatch(call, concurrency, durationMs, cell, maxOps = Number.POSITIVE_INFINITY) {
  const t0 = performance.now();
  const end = t0 + durationMs;
  let started = 0;
  // This batch alone too (cell.batches): the paired ratios of run.js compare a round's batches.
  const batch = cell ? { hist: createHistogram(), ops: 0 } : undefined;
  const worker = async () => {
    while (started < maxOps && performance.now() < end) {
      started++;
      const s = performance.now();
      let ok = false;
      try {
        ok = (await call()) === true;
      } catch (err) {
        if (cell) cell.lastError = err;
      }
      if (cell) {
        const ms = performance.now() - s;
        recordMs(cell, ms);
        recordMs(batch, ms);
        cell.ops++;
        batch.ops++;
        if (!ok) cell.errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  if (cell) {
    const ms = performance.now() - t0;
    cell.elapsedMs += ms;
    cell.batches.push({
      ops_per_s: batch.ops > 0 ? (batch.ops / ms) * 1000 : null,
      p50_ms: batch.hist.count > 0 ? batch.hist.percentile(50) / 1e6 : null,
    });
  }
}

/**
 * Measures clients side by side: a warm-up of each, then `profile.rounds` rounds in which each client
 * runs one `profile.batchMs` batch, in an order that rotates every round.
 * @returns a cell per client name
 */
export async function runRounds(section, clients, concurrency, profile, log) {
  const cells = new Map(clients.map((c) => [c.name, createCell()]));
  log(`${section}: warm-up`);
  for (const c of clients) await runBatch(c.call, concurrency, profile.warmupMs, null);
  for (let r = 0; r < profile.rounds; r++) {
    log(`${section}: round ${r + 1}/${profile.rounds}`);
    for (let i = 0; i < clients.length; i++) {
      const c = clients[(i + r) % clients.length];
      await runBatch(c.call, concurrency, profile.batchMs, cells.get(c.name));
    }
  }
  return cells;
}

/** Runs `call` exactly `count` times from `concurrency` workers, recording `measure(result, ms)` ms values. */
export async function runCount(call, concurrency, count, cell, measure = (_r, ms) => ms) {
  const t0 = performance.now();
  let started = 0;
  const worker = async () => {
    while (started < count) {
      started++;
      const s = performance.now();
      let r;
      try {
        r = await call();
      } catch (err) {
        r = err;
      }
      const value = measure(r, performance.now() - s);
      if (value === undefined) {
        cell.errors++;
      } else {
        cell.hist.record(Math.max(1, Math.round(value * 1e6)));
      }
      cell.ops++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  cell.elapsedMs += performance.now() - t0;
}

/**
 * The client CPU of each step a call, the steps run in time-boxed phases one after the other in
 * rotating order, after one warm-up phase each: the work-pricing tools' loop (bench/text-work.js,
 * bench/batch-work.js). Each step's `call` resolves true for an answer it accepts; a first call that does
 * not, or a phase with an invalid answer, throws. Prints the median over the rounds of each step's CPU
 * (µs a call) and the first step's over it.
 * @param {{ name: string, call: () => Promise<boolean> }[]} steps - the first is the floor
 * @param {string} what - what a call is, for the heading ("decision", "8-call batch")
 */
export async function printCpuSteps(steps, what, concurrency, rounds, phaseMs) {
  for (const s of steps) {
    if ((await s.call()) !== true) throw new Error(`${s.name}: its first answer was refused`);
    await runBatch(s.call, concurrency, phaseMs, null);
  }
  const cpu = steps.map(() => []);
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < steps.length; i++) {
      const k = (i + r) % steps.length;
      const cell = createCell();
      const c0 = process.cpuUsage();
      await runBatch(steps[k].call, concurrency, phaseMs, cell);
      const c = process.cpuUsage(c0);
      if (cell.errors > 0) throw new Error(`${steps[k].name}: ${cell.errors} invalid answers`);
      cpu[k].push((c.user + c.system) / cell.ops);
    }
  }
  const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  const floor = med(cpu[0]);
  const width = Math.max(...steps.map((s) => s.name.length)) + 2;
  process.stdout.write(`client CPU per ${what} at c${concurrency}, median of ${rounds} rounds:\n`);
  for (let i = 0; i < steps.length; i++) {
    const m = med(cpu[i]);
    process.stdout.write(
      `  ${steps[i].name.padEnd(width)} ${m.toFixed(2).padStart(6)} µs  floor / this ${(floor / m).toFixed(3)}\n`,
    );
  }
}

const round3 = (x) => (x === null || !Number.isFinite(x) ? null : Math.round(x * 1000) / 1000);

/** One results.json row from a cell. */
export function rowOf(scenario, client, concurrency, cell, extra = {}) {
  const has = cell.ops - cell.errors > 0 && cell.hist.count > 0;
  return {
    scenario,
    client,
    concurrency,
    p50_ms: has ? round3(cell.hist.percentile(50) / 1e6) : null,
    p99_ms: has ? round3(cell.hist.percentile(99) / 1e6) : null,
    ops_per_s: cell.elapsedMs > 0 && cell.ops > 0 ? Math.round((cell.ops / cell.elapsedMs) * 1000) : null,
    samples: cell.ops,
    errors: cell.errors,
    // Per timed batch (one a round, in round order): what the paired ratios of run.js compare.
    ...(cell.batches?.length > 1
      ? {
          batch_ops_per_s: cell.batches.map((b) => (b.ops_per_s === null ? null : Math.round(b.ops_per_s))),
          batch_p50_ms: cell.batches.map((b) => round3(b.p50_ms)),
        }
      : {}),
    ...extra,
  };
}

export function skippedRow(scenario, client, concurrency, note) {
  return { scenario, client, concurrency, p50_ms: null, p99_ms: null, ops_per_s: null, skipped: true, note };
}

/** A loopback port that nothing listens on (connecting to it is refused). */
export function closedPort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, HOST, () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * Spawns `redis-server` on a free loopback port without persistence.
 * @returns {Promise<{ url: string, version: string, stop(): Promise<void> } | { missing: true, message: string }>}
 */
export async function spawnRedis() {
  const port = await closedPort();
  const args = ['--port', String(port), '--bind', HOST, '--save', '', '--appendonly', 'no', '--protected-mode', 'yes'];
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c) => {
    if (out.length < 65536) out += c;
  });
  child.stderr.on('data', (c) => {
    if (out.length < 65536) out += c;
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(timer);
  };
  const started = await new Promise((resolve) => {
    const timer = setTimeout(() => resolve('timeout'), 10_000);
    child.once('error', (err) => {
      clearTimeout(timer);
      resolve(err);
    });
    child.once('exit', () => {
      clearTimeout(timer);
      resolve('exit');
    });
    const check = () => {
      if (/Ready to accept connections/i.test(out)) {
        clearTimeout(timer);
        resolve('ready');
      } else if (child.exitCode === null) setTimeout(check, 20);
    };
    check();
  });
  if (started !== 'ready') {
    await stop();
    const missing = started instanceof Error && started.code === 'ENOENT';
    return {
      missing: true,
      message: missing
        ? 'redis-server not found; install it with `apt-get install -y redis-server` (or `brew install redis`)'
        : `redis-server did not start (${started instanceof Error ? started.message : started}): ${out.slice(-300)}`,
    };
  }
  const version = /(?:version|v)=([\d.]+)/.exec(out)?.[1] ?? 'unknown';
  pinServer(child.pid);
  return { url: `redis://${HOST}:${port}`, version, pid: child.pid, stop };
}

/**
 * Spawns a real Cerbos PDP (the `@cerbos/cerbos-linux-x64` binary, or `CERBOS_BIN`) on free loopback
 * ports (HTTP, gRPC, debug listener), telemetry off, with the policies in `dir`, and waits (at most 20 s)
 * for `/_cerbos/health`.
 * @returns {Promise<{ url: string, version: string, stop(): Promise<void> } | { missing: true, message: string }>}
 */
export async function spawnCerbos(dir) {
  let bin = process.env.CERBOS_BIN;
  if (!bin) {
    try {
      const { createRequire } = await import('node:module');
      bin = createRequire(import.meta.url).resolve('@cerbos/cerbos-linux-x64');
    } catch {
      return { missing: true, message: `no Cerbos binary for ${process.platform}-${process.arch} (set CERBOS_BIN)` };
    }
  }
  const [httpPort, grpcPort, debugPort] = [await closedPort(), await closedPort(), await closedPort()];
  const child = spawn(
    bin,
    [
      'server',
      '--config=/dev/null',
      `--debug-listen-addr=${HOST}:${debugPort}`,
      '--log-level=error',
      `--set=server.httpListenAddr=${HOST}:${httpPort}`,
      `--set=server.grpcListenAddr=${HOST}:${grpcPort}`,
      '--set=storage.driver=disk',
      `--set=storage.disk.directory=${dir}`,
      '--set=storage.disk.watchForChanges=false',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH ?? '', CERBOS_NO_TELEMETRY: '1' } },
  );
  let out = '';
  child.stderr.on('data', (c) => {
    if (out.length < 65536) out += c;
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.once('error', () => {});
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(timer);
  };
  const url = `http://${HOST}:${httpPort}`;
  const until = performance.now() + 20_000;
  while (performance.now() < until && child.exitCode === null && child.signalCode === null) {
    try {
      const res = await fetch(`${url}/_cerbos/health`, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.ok) {
        const version = res.headers.get('grpc-metadata-cerbos-version') ?? 'unknown';
        pinServer(child.pid);
        return { url, version, pid: child.pid, stop };
      }
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop();
  return { missing: true, message: `Cerbos did not start: ${out.slice(-300)}` };
}

/**
 * The options agent-pep's transport gives its own undici `Pool` (src/transport/http.ts): no undici
 * timeouts (the deadlines are the client's), keep-alive, no pipelining. The floor rows use the same.
 */
export const FLOOR_POOL_OPTIONS = Object.freeze({
  headersTimeout: 0,
  bodyTimeout: 0,
  keepAliveTimeout: 4_000,
  keepAliveMaxTimeout: 60_000,
  pipelining: 1,
});

/**
 * The true floor of one decision on the wire (issue 30): one `dispatch` on an undici `Pool` with a
 * minimal handler that collects the body and `JSON.parse`s it; nothing else (no status, header, size
 * or shape checks, no request id, no deadline).
 * @returns the status code and the parsed body
 */
export function floorDispatch(pool, origin, path, headers, body) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let status = 0;
    pool.dispatch(
      { origin, path, method: 'POST', headers, body },
      {
        onRequestStart() {},
        onResponseStart(_c, statusCode) {
          status = statusCode;
        },
        onResponseData(_c, chunk) {
          chunks.push(chunk);
        },
        onResponseEnd() {
          try {
            resolve({ status, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
          } catch (err) {
            reject(err);
          }
        },
        onResponseError(_c, err) {
          reject(err);
        },
      },
    );
  });
}
