// Bundles the `agent-pep hook` command into one module, dist/cli/hook.js, from its sources (issue 30).
//
// Claude Code and Codex start `agent-pep hook` as a new process for every tool use; loading some 65
// small modules one by one was a large part of its start (node 20 has no module compile cache). The
// bin still loads it as `./hook.js` (src/cli/dispatch.ts), so a hook that cannot load still exits 2.
// Only agent-pep's own modules are bundled: packages (undici, jose, p-retry, lru-cache, ...) and
// node: builtins stay imports, resolved from node_modules as before, and loaded when they were. So
// does the CLI's usage.js, which the bin loads too: its `CliExit` is one class for the bin and the hook
// (the bin tells a command's own end from a crash by it).
//
// Run after `tsc -b` by every script that builds dist/ (build, build:examples, agent-pep): it reads
// src/, never a dist/ file, so it is never a bundle of a stale bundle.
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname } from 'node:path';
import { build } from 'rolldown';

const ROOT = new URL('../', import.meta.url);
const input = fileURLToPath(new URL('src/cli/hook.ts', ROOT));
const output = fileURLToPath(new URL('dist/cli/hook.js', ROOT));
const CLI_DIR = dirname(input);
/** Modules of src/cli/ the bin loads itself: imported, not copied (dist/cli/ has them beside hook.js). */
const SHARED_WITH_THE_BIN = new Set(['./usage.js']);

await build({
  input,
  platform: 'node',
  // A bare specifier or node: builtin is a package: it stays an import.
  external: (id, importer) =>
    (!id.startsWith('.') && !id.startsWith('/')) ||
    (importer !== undefined && dirname(importer) === CLI_DIR && SHARED_WITH_THE_BIN.has(id)),
  logLevel: 'warn',
  output: { file: output, format: 'esm', codeSplitting: false, sourcemap: false },
});
// tsc's map was of the module this file replaced.
rmSync(`${output}.map`, { force: true });
