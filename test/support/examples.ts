/**
 * Runs a compiled example (build/examples/...) in this test worker, as `node <file>` would run it: a
 * fresh module instance each time, loaded by Node itself (vitest.config.ts leaves build/ to Node, so
 * `agent-pep` resolves to the package's own dist/ as it does for a user), with the environment given.
 * What it prints is captured; its exit code is `process.exitCode` when it finishes (then reset), or 1
 * when it throws. The frameworks an example loads are already loaded in the worker, which is what
 * makes this cheaper than a process; the process itself is what `.ci/run` runs (`npm run example:*`).
 *
 * An example must also leave nothing running: a handle it opened and did not close (a server, a
 * socket, a timer, a child process) is reported as exit code 1 with the handle's kind on stderr (a
 * process would not exit). An exit code it sets on a later turn still counts.
 */
import { randomUUID } from 'node:crypto';
import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import { formatWithOptions } from 'node:util';
import { vi } from 'vitest';
import { built } from './processes.js';

// The settle loop's own timers are not the example's.
const realSetTimeout = globalThis.setTimeout;

/** The handles and requests keeping this process alive, counted by kind (what Node reports), timers aside. */
function activeResources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) {
    // The worker's own timers come and go during a run; the example's are tracked one by one instead.
    if (kind !== 'Timeout' && kind !== 'Immediate') counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  return counts;
}

/** The kinds of which `now` has more than `before`. */
function leftRunning(before: Map<string, number>, now: Map<string, number>): string[] {
  return [...now].filter(([kind, n]) => n > (before.get(kind) ?? 0)).map(([kind]) => kind);
}

/**
 * Records the timers made while it is in place; `pending()` is how many of them would still keep a
 * process alive (referenced, neither fired nor cleared).
 */
function trackTimers(): { pending(): number; restore(): void } {
  const made: NodeJS.Timeout[] = [];
  const track = <F extends (...args: never[]) => NodeJS.Timeout>(original: F): F =>
    ((...args: Parameters<F>) => {
      const timer = original(...args);
      made.push(timer);
      return timer;
    }) as F;
  const { setTimeout: timeout, setInterval: interval } = globalThis;
  globalThis.setTimeout = track(timeout as never) as typeof setTimeout;
  globalThis.setInterval = track(interval as never) as typeof setInterval;
  return {
    // `_destroyed` is set by Node when a timer fires (one-shot) or is cleared
    pending: () => made.filter((t) => t.hasRef() && !(t as { _destroyed?: boolean })._destroyed).length,
    restore() {
      globalThis.setTimeout = timeout;
      globalThis.setInterval = interval;
    },
  };
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
  const url = `${pathToFileURL(isAbsolute(path) ? path : built(path)).href}?run=${randomUUID()}`;
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
  const before = activeResources();
  const timers = trackTimers();
  const exitCodeBefore = process.exitCode;
  process.exitCode = undefined;
  let threw = false;
  try {
    await import(/* @vite-ignore */ url);
  } catch (error) {
    stderr += `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`;
    threw = true;
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    for (const spy of spies) spy.mockRestore();
  }
  // What the example opened closes on later turns (a server's close, a socket's end): let it, then give
  // what is still closing a moment before calling it left running.
  let left: string[] = [];
  try {
    for (let i = 0; i < 20; i++) {
      await new Promise((r) => realSetTimeout(r, 10));
      left = leftRunning(before, activeResources());
      if (timers.pending() > 0) left.push('Timeout');
      if (i >= 1 && left.length === 0) break;
    }
  } finally {
    timers.restore();
  }
  // An exit code set on one of those later turns is the process's exit code too.
  let code = threw ? 1 : Number(process.exitCode ?? 0);
  process.exitCode = exitCodeBefore;
  if (left.length > 0) {
    stderr += `${path} left running: ${left.join(', ')} (as a process it would not exit)\n`;
    code = 1;
  }
  return { code, stdout, stderr };
}
