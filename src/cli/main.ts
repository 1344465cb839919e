#!/usr/bin/env node
/**
 * The `agent-pep` command line (docs/cli.md): the process around {@link runCli}. `agent-pep --version`
 * prints the version; every command has `--help`; a usage error exits 2 with one line naming it, then
 * one line pointing to `--help`.
 *
 * It starts light (a hook host starts it once per tool use): before it loads anything else it turns on
 * Node's module compile cache where Node has it (`module.enableCompileCache`, Node 22.1+; skipped on
 * Node 20), then loads the dispatcher, which loads only the command named.
 * @packageDocumentation
 */
import nodeModule from 'node:module';

const argv = process.argv.slice(2);
// A hook host lets the call through on any exit code but 0 and 2: a hook exits as soon as it has
// answered (nothing of it, such as a PDP request past its deadline or stdin still open, outlives the
// answer), and a hook that crashes (even before it could load) exits 2 with the reason on stderr,
// which both hosts read as a block.
const isHook = argv[0] === 'hook';

/** Node 22.1+: the modules compiled on one start are read from a cache on the next. */
function enableCompileCache(): void {
  const enable = (nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache;
  try {
    enable?.();
  } catch {
    // A cache that cannot be written (a read-only tmpdir) only costs the speed-up.
  }
}

/** The exit codes before usage.js is loaded (its `EXIT`): a usage error or a hook's failure, and a failure. */
const EXIT_USAGE = 2;
const EXIT_FAILURE = 1;

async function main(): Promise<void> {
  enableCompileCache();
  // A reader that went away (EPIPE) loses the output, never the exit code (`check`: 3 BLOCK, 4
  // ESCALATE); the hook turns an answer it could not write into exit 2 itself.
  process.stdout.on('error', () => {});
  try {
    const [{ runCli }, { processIo }] = await Promise.all([import('./dispatch.js'), import('./io.js')]);
    const code = await runCli(argv, processIo());
    if (isHook) process.exit(code);
    process.exitCode = code;
  } catch (error: unknown) {
    const usage = await import('./usage.js').catch(() => undefined);
    if (usage !== undefined && error instanceof usage.CliExit) {
      process.stderr.write(error.stderr);
      process.exit(error.code);
    }
    process.stderr.write(`agent-pep: ${error instanceof Error ? error.message : 'unexpected error'}\n`);
    process.exit(isHook ? EXIT_USAGE : EXIT_FAILURE);
  }
}

void main();
