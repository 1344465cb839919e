// npm's `prepack` and `postpack` (package.json): the package.json in the tarball carries no script npm
// runs when a package is installed.
//
// `prepare` builds dist/ where the sources are: `npm ci` / `npm install` in a clone, and an install from a
// git URL (npm installs the devDependencies, runs it, then packs). In the packed package it has nothing to
// build (neither scripts/ nor src/ is packed, dist/ is already there), yet npm 11 lists it on every install
// ("1 package has install scripts not yet covered by allowScripts: agent-pep (prepare: ...)"), and an
// install that allowed it would fail on the missing scripts/prepare.js.
//
//   node scripts/pack-manifest.js strip     prepack, after the build: saves package.json, then writes it
//                                           without the install-time scripts (INSTALL_SCRIPTS)
//   node scripts/pack-manifest.js restore   postpack: puts the saved package.json back, byte for byte
//
// A strip that finds a saved copy (a pack stopped before its postpack) restores that copy first, so the
// repository's package.json is never lost. scripts/check-pack.js checks the tarball and the restore.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The scripts npm runs on install (arborist: preinstall, install, postinstall, prepare) and their pre/post. */
export const INSTALL_SCRIPTS = [
  'preinstall',
  'install',
  'postinstall',
  'prepublish',
  'preprepare',
  'prepare',
  'postprepare',
];

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = join(root, 'package.json');
const saved = join(root, 'node_modules', '.cache', 'agent-pep-pack', 'package.json');

function restore() {
  if (!existsSync(saved)) return false;
  writeFileSync(manifest, readFileSync(saved));
  rmSync(saved);
  return true;
}

function strip() {
  restore();
  const text = readFileSync(manifest, 'utf8');
  const pkg = JSON.parse(text);
  mkdirSync(dirname(saved), { recursive: true });
  writeFileSync(saved, text);
  for (const name of INSTALL_SCRIPTS) delete pkg.scripts?.[name];
  writeFileSync(manifest, `${JSON.stringify(pkg, null, 2)}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const command = process.argv[2];
  if (command === 'strip') strip();
  else if (command === 'restore') restore();
  else {
    process.stderr.write('usage: node scripts/pack-manifest.js strip|restore\n');
    process.exit(2);
  }
}
