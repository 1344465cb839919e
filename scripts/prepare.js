// npm's `prepare` (package.json): builds dist/ when agent-pep is installed from a git URL (npm then
// installs the devDependencies, runs this, and packs the result) or with `npm install` / `npm ci` in a
// clone. Without TypeScript (`npm ci --omit=dev`) there is nothing to build with: it says so and exits
// 0, so the install goes on (dist/ is then missing: run `npm run build` after installing TypeScript).
// An incremental build (`tsc -b`): quick when dist/ is up to date.
import { spawnSync } from 'node:child_process';
import { chmodSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
let tsc;
try {
  tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
} catch {
  process.stdout.write('agent-pep prepare: TypeScript is not installed (devDependencies omitted), dist/ not built\n');
  process.exit(0);
}
process.stdout.write('agent-pep prepare: building dist/ ...\n');
const r = spawnSync(
  process.execPath,
  [tsc, '-b', join(root, 'tsconfig.build.json'), join(root, 'packages/dev-pdp/tsconfig.build.json')],
  { cwd: root, stdio: 'inherit' },
);
if (r.status !== 0) process.exit(r.status ?? 1);
// The hook command as one module (scripts/bundle-hook.js): without it the hook runs unbundled, slower to start.
const b = spawnSync(process.execPath, [join(root, 'scripts/bundle-hook.js')], { cwd: root, stdio: 'inherit' });
if (b.status !== 0)
  process.stdout.write('agent-pep prepare: the hook bundle was not built; dist/cli/hook.js is unbundled\n');
chmodSync(join(root, 'dist/cli/main.js'), 0o755);
