#!/usr/bin/env node
/**
 * The `agent-pep` command line (docs/cli.md): the process around {@link runCli}. `agent-pep --version`
 * prints the version; every command has `--help`; a usage error exits 2 with one line naming it, then
 * one line pointing to `--help`.
 * @packageDocumentation
 */
import { runCli } from './dispatch.js';
import { processIo } from './io.js';
import { CliExit, EXIT } from './usage.js';

const argv = process.argv.slice(2);
// A hook host lets the call through on any exit code but 0 and 2: a hook exits as soon as it has
// answered (nothing of it, such as a PDP request past its deadline or stdin still open, outlives the
// answer), and a hook that crashes (even before it could load) exits 2 with the reason on stderr,
// which both hosts read as a block.
const isHook = argv[0] === 'hook';
// A reader that went away (EPIPE) loses the output, never the exit code (`check`: 3 BLOCK, 4
// ESCALATE); the hook turns an answer it could not write into exit 2 itself.
process.stdout.on('error', () => {});

runCli(argv, processIo()).then(
  (code) => {
    if (isHook) process.exit(code);
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof CliExit) {
      process.stderr.write(error.stderr);
      process.exit(error.code);
    }
    process.stderr.write(`agent-pep: ${error instanceof Error ? error.message : 'unexpected error'}\n`);
    process.exit(isHook ? EXIT.usage : EXIT.failure);
  },
);
