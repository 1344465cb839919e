/**
 * Runs the portable suite (test/fixtures/runtimes/cli.js) in another runtime's process (Deno, Bun)
 * and reads its one JSON line. The binaries come from the `deno` and `bun` npm packages
 * (node_modules/.bin); a missing one fails the test, never skips it.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { SuiteResult } from './runtime-expect.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const CLI = fileURLToPath(new URL('../fixtures/runtimes/cli.js', import.meta.url));

/** Runs `bin args... <config JSON>` from the repository root; rejects on a non-zero exit or no JSON. */
export function runSuiteIn(bin: string, args: string[], config: object, timeoutMs = 60_000): Promise<SuiteResult> {
  return new Promise((resolve, reject) => {
    execFile(
      bin,
      [...args, JSON.stringify(config)],
      { cwd: ROOT, timeout: timeoutMs, env: { ...process.env, NO_COLOR: '1' }, maxBuffer: 4 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) {
          reject(new Error(`${bin} failed: ${err.message}\n${stderr}`));
          return;
        }
        const line = stdout.trim().split('\n').at(-1) ?? '';
        try {
          resolve(JSON.parse(line) as SuiteResult);
        } catch {
          reject(new Error(`${bin} printed no JSON result:\n${stdout}\n${stderr}`));
        }
      },
    );
  });
}
