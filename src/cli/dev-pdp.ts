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

/**
 * Loads the dev PDP's command module.
 * @throws CliExit (exit 2) naming `@agent-pep/dev-pdp` when that package is not installed
 */
export async function loadDevPdpCommand(): Promise<{ run(argv: string[], io: CliIo): Promise<number> }> {
  try {
    return (await import(PACKAGE_CLI)) as { run(argv: string[], io: CliIo): Promise<number> };
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' && String((err as Error).message).includes('@agent-pep/dev-pdp')) {
      usageExit('dev-pdp', 'the reference PDP is a package of its own: npm install -D @agent-pep/dev-pdp');
    }
    throw err;
  }
}
