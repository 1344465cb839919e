/**
 * Runs a compiled example (build/examples/...) in this test worker, as `node <file>` would run it: a
 * fresh module instance each time, loaded by Node itself (vitest.config.ts leaves build/ to Node, so
 * `agent-pep` resolves to the package's own dist/ as it does for a user), with the environment given.
 * What it prints is captured; its exit code is `process.exitCode` when it finishes (then reset), or 1
 * when it throws. The frameworks an example loads are already loaded in the worker, which is what
 * makes this cheaper than a process; the process itself is what `.ci/run` runs (`npm run example:*`).
 *
 * An example must also leave nothing running: a server it started and did not close is reported as
 * exit code 1 with the reason on stderr (a process would not exit).
 */
import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import { formatWithOptions } from 'node:util';
import { vi } from 'vitest';
import { built } from './processes.js';

let runs = 0;

/** Listening servers in this process, counted from the handles Node reports. */
function listeningServers(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap').length;
}

/**
 * Runs `build/<path>` to its end in this process.
 * @param path - the compiled file under build/, e.g. `examples/ai/agent.js` (or an absolute path)
 * @param env - environment variables set while it runs (restored after)
 */
export async function runExample(
  path: string,
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const url = `${pathToFileURL(isAbsolute(path) ? path : built(path)).href}?run=${++runs}`;
  let stdout = '';
  let stderr = '';
  // What console.log writes for these arguments (util.format), without colours.
  const line = (args: unknown[]) => `${formatWithOptions({ colors: false }, ...args)}\n`;
  const out = (args: unknown[]) => {
    stdout += line(args);
  };
  const err = (args: unknown[]) => {
    stderr += line(args);
  };
  const spies = [
    vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => out(a)),
    vi.spyOn(console, 'info').mockImplementation((...a: unknown[]) => out(a)),
    vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => err(a)),
    vi.spyOn(console, 'warn').mockImplementation((...a: unknown[]) => err(a)),
  ];
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  const servers = listeningServers();
  const exitCodeBefore = process.exitCode;
  process.exitCode = undefined;
  let code: number;
  try {
    await import(/* @vite-ignore */ url);
    code = Number(process.exitCode ?? 0);
  } catch (error) {
    stderr += `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`;
    code = 1;
  } finally {
    process.exitCode = exitCodeBefore;
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    for (const spy of spies) spy.mockRestore();
  }
  // A server's listen and close both complete on a later turn: let them, then give a closing one a
  // moment before calling it left open.
  for (let i = 0; i < 20; i++) {
    await new Promise((r) => setTimeout(r, 10));
    if (i >= 1 && listeningServers() <= servers) break;
  }
  if (listeningServers() > servers) {
    stderr += `${path} left a server listening: as a process it would not exit\n`;
    code = 1;
  }
  return { code, stdout, stderr };
}
