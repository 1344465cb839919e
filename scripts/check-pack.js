// `npm run check:package`: packs agent-pep once, as `npm pack` and `npm publish` do (prepack: the build,
// then scripts/pack-manifest.js strip; postpack: restore), into a temporary folder, and checks
//   - the packed package.json has no install-time script (INSTALL_SCRIPTS: npm 11 warns about each on
//     install, and the tarball has nothing for them to run), yet keeps the bin and the exports;
//   - the repository's package.json is back byte for byte (`prepare` stays for clones and git installs);
//   - @arethetypeswrong/cli on that same tarball (esm-only profile).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { INSTALL_SCRIPTS } from './pack-manifest.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const before = readFileSync(join(root, 'package.json'), 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'agent-pep-pack-'));

function run(command, args) {
  const r = spawnSync(command, args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (r.status !== 0) {
    process.stdout.write(r.stdout ?? '');
    throw new Error(`${command} ${args.join(' ')} exited ${r.status}`);
  }
  return r.stdout;
}

function fail(message) {
  process.stderr.write(`check-pack: ${message}\n`);
  process.exitCode = 1;
}

try {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  run(npm, ['pack', '--pack-destination', dir]);
  const filename = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  if (filename === undefined) throw new Error('npm pack wrote no tarball');
  const tarball = join(dir, filename);
  const pkg = JSON.parse(run('tar', ['-xzOf', tarball, 'package/package.json']));
  const found = INSTALL_SCRIPTS.filter((name) => pkg.scripts?.[name] !== undefined);
  if (found.length > 0) fail(`the packed package.json has install-time scripts: ${found.join(', ')}`);
  if (pkg.bin?.['agent-pep'] === undefined || pkg.exports?.['.'] === undefined)
    fail('the packed package.json lost its bin or exports');
  const after = readFileSync(join(root, 'package.json'), 'utf8');
  if (after !== before) fail('package.json was not restored after npm pack (postpack)');
  if (JSON.parse(after).scripts?.prepare === undefined)
    fail('package.json has no prepare script (clones and git installs build dist/ with it)');
  const attw = join(root, 'node_modules', '.bin', 'attw');
  const r = spawnSync(attw, [tarball, '--profile', 'esm-only'], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) fail('@arethetypeswrong/cli failed on the packed tarball');
  if (process.exitCode !== 1)
    process.stdout.write(`check-pack: ${filename} has no install-time script; package.json restored\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
