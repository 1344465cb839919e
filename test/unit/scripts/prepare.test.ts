/**
 * `prepare` (scripts/prepare.js): installing from a git URL builds dist/, and `npm ci --omit=dev` in a
 * clone (no TypeScript) still installs: the script says it did not build and exits 0.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../../', import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };

describe('the prepare script', () => {
  it('package.json runs it on prepare, so an install from a git URL builds dist/', () => {
    expect(pkg.scripts.prepare).toBe('node scripts/prepare.js');
  });

  it('without TypeScript (devDependencies omitted) it says dist/ was not built and exits 0', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-pep-prepare-'));
    try {
      mkdirSync(join(dir, 'scripts'));
      copyFileSync(join(ROOT, 'scripts/prepare.js'), join(dir, 'scripts/prepare.js'));
      writeFileSync(join(dir, 'package.json'), '{"name":"agent-pep","type":"module"}');
      const r = spawnSync(process.execPath, [join(dir, 'scripts/prepare.js')], { cwd: dir, encoding: 'utf8' });
      expect(r.status).toBe(0);
      expect(r.stdout).toContain('TypeScript is not installed');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('with TypeScript it builds dist/ (incrementally) and leaves the bin executable', () => {
    const r = spawnSync(process.execPath, [join(ROOT, 'scripts/prepare.js')], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(statSync(join(ROOT, 'dist/cli/main.js')).mode & 0o111).not.toBe(0);
  }, 120_000);
});
