/**
 * A real Cerbos PDP for the tests: the `@cerbos/cerbos-linux-x64` binary (a devDependency), or
 * `CERBOS_BIN`, started on 127.0.0.1 on free HTTP and gRPC ports (its debug listener on a free port
 * too, telemetry off, nothing read from a config file) with a policy folder from `test/fixtures/cerbos/`,
 * waited for (bounded), and stopped at the end. Cerbos serves AuthZEN 1.0 at `/access/v1/evaluation`,
 * `/access/v1/evaluations` and `/.well-known/authzen-configuration` on its HTTP port.
 *
 * With `CI` set a Cerbos that cannot start FAILS the tests (they are never skipped in CI); locally, on a
 * platform without the binary, they skip, saying why.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { freePort } from './redis.js';

/** A policy folder under test/fixtures/cerbos/. */
export function cerbosPolicies(name: string): string {
  return fileURLToPath(new URL(`../fixtures/cerbos/${name}/`, import.meta.url));
}

/** The Cerbos binary, or undefined when none is installed here. */
export function cerbosBinary(): string | undefined {
  if (process.env.CERBOS_BIN) return process.env.CERBOS_BIN;
  try {
    const bin = createRequire(import.meta.url).resolve('@cerbos/cerbos-linux-x64');
    accessSync(bin, constants.X_OK);
    return bin;
  } catch {
    return undefined;
  }
}

/** Why the Cerbos tests cannot run here, or undefined when they can; throws in CI instead of skipping. */
export function cerbosUnavailableReason(): string | undefined {
  if (cerbosBinary() !== undefined) return undefined;
  const why = `no Cerbos binary (@cerbos/cerbos-linux-x64 is for linux-x64; set CERBOS_BIN elsewhere) on ${process.platform}-${process.arch}`;
  if (process.env.CI) throw new Error(`Cerbos tests must run in CI, but there is ${why}.`);
  console.warn(`[agent-pep tests] skipping Cerbos tests: ${why}.`);
  return why;
}

/** A running Cerbos. */
export interface CerbosHandle {
  /** `http://127.0.0.1:<httpPort>`: the AuthZEN base URL. */
  url: string;
  process: ChildProcess;
  /** What it wrote, for a failure message. */
  output(): string;
  /** Stops it (SIGTERM, then SIGKILL after 5 s); resolves once it exited. */
  stop(): Promise<void>;
}

const READY_WITHIN_MS = 20_000;

/**
 * Starts Cerbos on free ports with the policies in `dir` and resolves once its HTTP port answers
 * `/_cerbos/health`. Rejects (loudly: the tests fail) if it exits or is not ready within 20 s.
 */
export async function startCerbos(dir: string): Promise<CerbosHandle> {
  // A free port can be taken by another process between our probe and Cerbos's bind: a Cerbos that
  // exits at once, or whose port another server answers on, is started again on other ports, at most
  // three times in all.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startCerbosOnce(dir);
    } catch (err) {
      if (attempt >= 3 || !(err instanceof CerbosExited)) throw err;
    }
  }
}

class CerbosExited extends Error {}

async function startCerbosOnce(dir: string): Promise<CerbosHandle> {
  const bin = cerbosBinary();
  if (bin === undefined) throw new Error('no Cerbos binary installed (see cerbosUnavailableReason)');
  const [httpPort, grpcPort, debugPort] = [await freePort(), await freePort(), await freePort()];
  const child = spawn(
    bin,
    [
      'server',
      '--config=/dev/null',
      `--debug-listen-addr=127.0.0.1:${debugPort}`,
      '--log-level=error',
      `--set=server.httpListenAddr=127.0.0.1:${httpPort}`,
      `--set=server.grpcListenAddr=127.0.0.1:${grpcPort}`,
      '--set=storage.driver=disk',
      `--set=storage.disk.directory=${dir}`,
      '--set=storage.disk.watchForChanges=false',
    ],
    {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', CERBOS_NO_TELEMETRY: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  const url = `http://127.0.0.1:${httpPort}`;
  const handle: CerbosHandle = {
    url,
    process: child,
    output: () => out,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
  const until = Date.now() + READY_WITHIN_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new CerbosExited(`Cerbos exited (${child.exitCode ?? child.signalCode}) before it was ready: ${out}`);
    }
    let body: string | undefined;
    try {
      const res = await fetch(`${url}/_cerbos/health`, { signal: AbortSignal.timeout(1_000) });
      const text = await res.text();
      if (res.ok) body = text;
    } catch {
      // not listening yet
    }
    if (body !== undefined) {
      // Cerbos answers {"status":"SERVING"}. Anything else on its port is another test's server that
      // took the port between the probe and Cerbos's bind (Cerbos then exits, or not yet): start again.
      if (body.includes('"SERVING"')) return handle;
      await handle.stop();
      throw new CerbosExited(`another server answered on Cerbos's port ${httpPort}`);
    }
    if (Date.now() > until) {
      await handle.stop();
      throw new Error(`Cerbos was not ready within ${READY_WITHIN_MS} ms: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
