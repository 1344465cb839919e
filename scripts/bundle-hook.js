// Bundles the `agent-pep hook` command into one module, dist/cli/hook.js, from its sources (issue 30).
//
// Claude Code and Codex start `agent-pep hook` as a new process for every tool use, twice. Loading
// some 70 small modules and four small packages one by one was most of its start (Node 20 has no
// module compile cache; BENCHMARKS.md, "Hook start"). The bin still loads it as `./hook.js`
// (src/cli/dispatch.ts), so a hook that cannot load still exits 2.
//
// What is bundled: agent-pep's own modules, and the small packages the hook runs on every call
// (p-retry, lru-cache, content-type, canonicalize), at the versions installed when dist/ is built
// (the lockfile's); their licences go to dist/cli/hook.licenses.txt. What stays an import, loaded
// from node_modules when it was before: node: builtins; jose (loaded only when a permit is checked,
// never by the hook, which sets `permits: false`); undici (the hook sends on node:http); the optional
// peers; and the CLI's usage.js, which the bin loads too: its `CliExit` is one class for the bin and
// the hook (the bin tells a command's own end from a crash by it).
//
// Run after `tsc -b` by every script that builds dist/ (build, build:examples, agent-pep, prepare): it
// reads src/, never a dist/ file, so it is never a bundle of a stale bundle.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const input = join(ROOT, 'src/cli/hook.ts');
const output = join(ROOT, 'dist/cli/hook.js');
const CLI_DIR = dirname(input);
/**
 * Modules of src/cli/ that stay imports (dist/cli/ has them beside hook.js): the one the bin loads
 * itself, and `hook serve` and `hook init`, loaded only when named (a long-running endpoint and a
 * settings printer: neither is started per tool use, so neither weighs on the process hook's start).
 */
const SHARED_WITH_THE_BIN = new Set(['./usage.js', './hook-serve.js', './hook-init.js']);
/** Packages that stay imports: loaded lazily (or never) by the hook, or optional peers. */
const EXTERNAL_PACKAGES = ['jose', 'undici', 'ioredis', '@opentelemetry/'];

function external(id, importer) {
  if (id.startsWith('node:')) return true;
  if (EXTERNAL_PACKAGES.some((p) => id === p || id.startsWith(p.endsWith('/') ? p : `${p}/`))) return true;
  return importer !== undefined && dirname(importer) === CLI_DIR && SHARED_WITH_THE_BIN.has(id);
}

const result = await build({
  input,
  platform: 'node',
  external,
  logLevel: 'warn',
  output: { file: output, format: 'esm', codeSplitting: false, sourcemap: false, minify: true },
});
// tsc's map and declarations were of the module this file replaced; the declarations stay (the
// bundle exports what src/cli/hook.ts does).
rmSync(`${output}.map`, { force: true });

/** The package directory of a bundled module under node_modules, or undefined for our own. */
function packageDirOf(id) {
  const at = id.lastIndexOf('/node_modules/');
  if (at === -1) return undefined;
  const rest = id.slice(at + '/node_modules/'.length).split('/');
  const name = rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  return join(id.slice(0, at), 'node_modules', name);
}

const chunk = result.output.find((o) => o.type === 'chunk');
const dirs = [...new Set((chunk?.moduleIds ?? []).map(packageDirOf).filter((d) => d !== undefined))].sort();
const notices = dirs.map((dir) => {
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const file = ['LICENSE', 'LICENSE.md', 'LICENSE.txt', 'license', 'LICENCE'].find((f) => existsSync(join(dir, f)));
  const text =
    file === undefined ? `(no licence file; package.json says ${pkg.license})` : readFileSync(join(dir, file), 'utf8');
  return `${pkg.name}@${pkg.version} (${pkg.license})\n\n${text.trim()}\n`;
});
writeFileSync(
  join(ROOT, 'dist/cli/hook.licenses.txt'),
  `dist/cli/hook.js bundles these packages (scripts/bundle-hook.js):\n\n${notices.join(`\n${'-'.repeat(72)}\n\n`)}`,
);
