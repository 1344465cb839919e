/**
 * Runs the built `agent-pep` bin (`dist/cli/main.js`, from `npm run build`; `npm test` builds first)
 * to its end, with optional stdin, and parses what it printed.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { ROOT } from './processes.js';

export const BIN = `${ROOT}dist/cli/main.js`;

export interface BinResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `agent-pep <args>`; `env` is added to a copy of this process's environment (PDP_API_KEY cleared). */
export function runBin(
  args: string[],
  opts: { env?: Record<string, string>; input?: string } = {},
): Promise<BinResult> {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\` first`);
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: ROOT, env: { ...process.env, PDP_API_KEY: '', ...opts.env }, timeout: 20_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    child.stdin?.end(opts.input ?? '');
  });
}

/** A usage error: exit 2, one line naming it, then one line pointing to `--help`. */
export function expectUsage(r: BinResult, command: string, pattern: RegExp): void {
  const lines = r.stderr.trimEnd().split('\n');
  if (
    r.code !== 2 ||
    lines.length !== 2 ||
    !pattern.test(lines[0] ?? '') ||
    lines[1] !== `Run 'agent-pep ${command} --help' for usage.`
  ) {
    throw new Error(`expected a usage error matching ${pattern}, got exit ${r.code}: ${r.stderr}`);
  }
}
