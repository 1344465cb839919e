// `npm run demo`: builds dist/ and build/ when needed, then runs the demo (build/demo/main.js) with the
// arguments given. The first build takes about half a minute: it says so on stderr (stdout stays the
// demo's, for --json) rather than leaving the terminal silent.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The line to print before building in `root`, or undefined when the demo was built before (an
 * incremental build then takes a few seconds at most).
 */
export function buildNotice(root) {
  if (existsSync(join(root, 'build/demo/main.js')) && existsSync(join(root, 'dist/index.js'))) return undefined;
  return 'agent-pep demo: building the library and the demo first (once; about 30 s on two cores) ...';
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const notice = buildNotice(ROOT);
  if (notice !== undefined) process.stderr.write(`${notice}\n`);
  const tsc = createRequire(join(ROOT, 'package.json')).resolve('typescript/bin/tsc');
  const build = spawnSync(
    process.execPath,
    [tsc, '-b', 'tsconfig.build.json', 'packages/dev-pdp/tsconfig.build.json', 'tsconfig.examples.json'],
    {
      cwd: ROOT,
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  if (build.status !== 0) process.exit(build.status ?? 1);
  if (notice !== undefined) process.stderr.write('agent-pep demo: built; starting\n');
  const demo = spawnSync(process.execPath, [join(ROOT, 'build/demo/main.js'), ...process.argv.slice(2)], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  process.exit(demo.status ?? 1);
}
