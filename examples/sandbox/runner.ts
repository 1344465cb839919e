/**
 * A local process sandbox runner for `createPep({ sandboxes })` (docs/interceptors.md, "Routes to a
 * sandbox"): it runs a routed `run_script` call's `code` in a child Node process of its own, with an
 * empty environment (no API key or token of the host's), in a fresh temporary directory that is
 * removed afterwards, killed at a deadline or when the caller's signal fires, its output capped.
 * A remote sandbox (E2B, Daytona) has the same shape: see docs/interceptors.md.
 * @module
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxCall, SandboxRunner } from 'agent-pep';

/** Most bytes of output kept. */
const MAX_OUTPUT = 64 * 1024;

/** What a script run in the sandbox gave: its exit code and its standard output (capped). */
export interface ScriptResult {
  exitCode: number | null;
  stdout: string;
}

/**
 * A runner that runs `args.code` (a string of JavaScript) in a child process.
 * @param timeoutMs - the child is killed after this many milliseconds
 */
export function localProcessSandbox(timeoutMs = 5000): SandboxRunner {
  return async (call: SandboxCall): Promise<ScriptResult> => {
    const code = call.args.code;
    if (typeof code !== 'string') throw new TypeError('run_script needs args.code, a string');
    const dir = await mkdtemp(join(tmpdir(), 'agent-pep-sandbox-'));
    try {
      return await runChild(code, dir, timeoutMs, call.signal);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };
}

function runChild(
  code: string,
  cwd: string,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<ScriptResult> {
  return new Promise((resolve, reject) => {
    // env: {} is the point: nothing of the host's environment (keys, tokens) reaches the script.
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
      cwd,
      env: {},
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: timeoutMs,
      ...(signal !== undefined ? { signal } : {}),
    });
    let stdout = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      if (stdout.length < MAX_OUTPUT) stdout += chunk.slice(0, MAX_OUTPUT - stdout.length);
    });
    child.on('error', reject);
    child.on('close', (exitCode) => resolve({ exitCode, stdout }));
  });
}
