/**
 * What a command reads and writes: stdin, stdout, stderr and the environment, passed in rather than
 * taken from `process`, so the bin (src/cli/main.ts) gives its own and a test gives buffers. A command
 * resolves with its exit code, or throws a `CliExit` (usage.ts); only the bin exits the process (and
 * the running `dev-pdp`, on SIGINT or SIGTERM).
 * @internal
 */
/** The bin's own: the process's streams and environment. */
export function processIo() {
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
    };
}
