/**
 * Real processes for the example tests: the `agent-pep` bin's dev PDP (as a newcomer starts it) and
 * the compiled examples in build/ (`npm test` runs `npm run build:examples` first).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A compiled example or demo file under build/, checked to exist. */
export function built(path: string): string {
  const file = `${ROOT}build/${path}`;
  if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build:examples\` first`);
  return file;
}

/** A running process that printed a URL. */
export interface RunningProcess {
  url: string;
  child: ChildProcess;
  /** Everything it wrote to stdout so far. */
  output(): string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Spawns `node <args>` and resolves once it prints an http://127.0.0.1:<port> URL on stdout. */
export function startPrintingUrl(args: string[], env: Record<string, string> = {}): Promise<RunningProcess> {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    err += c.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no URL printed by ${args.join(' ')}: ${err}`));
    }, 15_000);
    const look = () => {
      const m = /(http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (!m?.[1]) return;
      clearTimeout(timer);
      child.stdout?.off('data', look);
      resolve({
        url: m[1],
        child,
        output: () => out,
        stop() {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          return exited;
        },
      });
    };
    child.stdout?.on('data', look);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${args.join(' ')} exited with ${code} before printing a URL: ${err}`));
    });
  });
}

/** Starts the dev PDP through the package's bin, on a free port. */
export function startDevPdpProcess(policy: string, extra: string[] = []): Promise<RunningProcess> {
  const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { bin: Record<string, string> };
  const bin = `${ROOT}${pkg.bin['agent-pep']}`;
  return startPrintingUrl([bin, 'dev-pdp', '--policy', policy, '--port', '0', '--quiet', ...extra]);
}

/** Runs `node <file> <args>` to its end. */
export function runNode(
  file: string,
  args: string[] = [],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [file, ...args],
      { cwd: ROOT, env: { ...process.env, ...env }, timeout: 30_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}
