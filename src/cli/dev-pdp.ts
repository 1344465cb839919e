/**
 * `agent-pep dev-pdp`: the reference PDP's command lives in its own package, `@agent-pep/dev-pdp`
 * (CONTRACT section 19); this module loads it, or ends with a usage error that names the package
 * to install when it is absent.
 * @internal
 */
import type { CliIo } from './io.js';
import { usageExit } from './usage.js';

/** The package that carries the command (a variable, so the SDK's build needs none of its types). */
const PACKAGE_CLI: string = '@agent-pep/dev-pdp/cli';

/** What the package's command module exports. */
interface PdpCli {
  run(argv: string[], io: CliIo): Promise<number>;
  runCheckPolicy(argv: string[], io: CliIo): Promise<number>;
}

/** The package's command module, or a usage exit for `command` naming the package to install. */
async function loadPdpCli(command: string): Promise<PdpCli> {
  try {
    return (await import(PACKAGE_CLI)) as PdpCli;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' && String((err as Error).message).includes('@agent-pep/dev-pdp')) {
      usageExit(command, 'the reference PDP is a package of its own: npm install -D @agent-pep/dev-pdp');
    }
    throw err;
  }
}

/**
 * Loads the dev PDP's command module.
 * @throws CliExit (exit 2) naming `@agent-pep/dev-pdp` when that package is not installed
 */
export async function loadDevPdpCommand(): Promise<{ run(argv: string[], io: CliIo): Promise<number> }> {
  return loadPdpCli('dev-pdp');
}

/**
 * Loads `agent-pep check-policy`, which lives in the dev PDP's package with its policy language.
 * @throws CliExit (exit 2) naming `@agent-pep/dev-pdp` when that package is not installed
 */
export async function loadCheckPolicyCommand(): Promise<{ run(argv: string[], io: CliIo): Promise<number> }> {
  const cli = await loadPdpCli('check-policy');
  return { run: (argv, io) => cli.runCheckPolicy(argv, io) };
}
