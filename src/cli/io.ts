/**
 * What a command reads and writes: stdin, stdout, stderr and the environment, passed in rather than
 * taken from `process`, so the bin (src/cli/main.ts) gives its own and a test gives buffers. A command
 * resolves with its exit code, or throws a `CliExit` (usage.ts); only the bin exits the process (and
 * the running `dev-pdp`, on SIGINT or SIGTERM).
 * @internal
 */

/** Where a command writes: `process.stdout`, `process.stderr`, or a test's buffer. */
export interface CliOutput {
  write(chunk: string, callback?: (error?: Error | null) => void): boolean;
}

/** The streams and environment of one command run. */
export interface CliIo {
  /** The command's stdin (a hook event, `--text -`, a permit or an evidence log). */
  readonly stdin: NodeJS.ReadableStream;
  readonly stdout: CliOutput;
  readonly stderr: CliOutput;
  /** The environment variables the command reads (`--api-key-env`, `PDP_API_KEY`, ...). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /**
   * Calls `handler` on any uncaught exception or unhandled rejection of the process, for a command
   * that must answer even then (`hook`). The bin's process gives it; a test run leaves it out.
   */
  readonly onCrash?: (handler: (error: unknown) => void) => void;
  /**
   * Calls `handler` once on SIGINT or SIGTERM, for a command that runs until stopped (`hook serve`).
   * The bin's process gives it; a test gives its own trigger.
   */
  readonly onStop?: (handler: (signal: string) => void) => void;
}

/** The bin's own: the process's streams and environment. */
export function processIo(): CliIo {
  return {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    onCrash(handler) {
      // `on`, not `once`: a second crash before the answer is written must not reach node's default (exit 1)
      process.on('uncaughtException', handler);
      process.on('unhandledRejection', handler);
    },
    onStop(handler) {
      let stopped = false;
      const once = (signal: NodeJS.Signals) => {
        if (stopped) return;
        stopped = true;
        handler(signal);
      };
      process.on('SIGINT', once);
      process.on('SIGTERM', once);
    },
  };
}
