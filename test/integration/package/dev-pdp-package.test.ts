/**
 * CONTRACT.md section 19: the reference PDP is a package of its own (`@agent-pep/dev-pdp`). The SDK
 * installs and runs without it; `agent-pep/dev-pdp` and `agent-pep dev-pdp` load it, and without it
 * fail with an error that names the package to install (needs `npm run build`; `npm test` builds first).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../..', import.meta.url));
let project: string;

/** A project whose node_modules holds agent-pep (its packed files) and its runtime dependencies only. */
beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), 'agent-pep-no-pdp-'));
  const pkgDir = join(project, 'node_modules', 'agent-pep');
  mkdirSync(pkgDir, { recursive: true });
  for (const part of ['dist', 'lib', 'package.json']) cpSync(join(root, part), join(pkgDir, part), { recursive: true });
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  for (const dep of [...Object.keys(pkg.dependencies), 'is-network-error']) {
    mkdirSync(join(project, 'node_modules', dep, '..'), { recursive: true });
    symlinkSync(join(root, 'node_modules', dep), join(project, 'node_modules', dep), 'dir');
  }
});
afterAll(() => rmSync(project, { recursive: true, force: true }));

const esm = (code: string) =>
  spawnSync(process.execPath, ['--input-type=module', '-e', code], { cwd: project, encoding: 'utf8' });

describe('the SDK without @agent-pep/dev-pdp', () => {
  it('imports and decides without the PDP package (none of its dependencies is needed)', () => {
    const r = esm("const m = await import('agent-pep'); console.log(typeof m.createPep)");
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('function');
  });

  it("import('agent-pep/dev-pdp') fails with ERR_MODULE_NOT_FOUND naming @agent-pep/dev-pdp", () => {
    const r = esm(
      "try { await import('agent-pep/dev-pdp'); console.log('loaded') } catch (e) { console.log(JSON.stringify({ code: e.code, names: String(e.message).includes('@agent-pep/dev-pdp') })) }",
    );
    expect(JSON.parse(r.stdout)).toEqual({ code: 'ERR_MODULE_NOT_FOUND', names: true });
  });

  it('`agent-pep dev-pdp` is a usage error (exit 2) that says which package to install', () => {
    const r = spawnSync(
      process.execPath,
      [join(project, 'node_modules/agent-pep/dist/cli/main.js'), 'dev-pdp', '--policy', 'p.json'],
      {
        cwd: project,
        encoding: 'utf8',
      },
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('npm install -D @agent-pep/dev-pdp');
  });
});

describe('the SDK with @agent-pep/dev-pdp (this repository)', () => {
  it('agent-pep/dev-pdp re-exports startDevPdp and InvalidPolicyError from the package', () => {
    const out = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "const a = await import('agent-pep/dev-pdp'); const b = await import('@agent-pep/dev-pdp'); console.log(JSON.stringify([a.startDevPdp === b.startDevPdp, a.InvalidPolicyError === b.InvalidPolicyError]))",
      ],
      { cwd: root, encoding: 'utf8' },
    );
    expect(JSON.parse(out)).toEqual([true, true]);
  });
});
