/**
 * `ai` is an optional peer dependency: importing agent-pep/ai where it is not installed throws an
 * Error naming the package to install (CONTRACT.md section 1). Runs the built package (`npm test`
 * builds first) from a temporary install that has every runtime dependency, with and without `ai`.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../support/processes.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A project whose node_modules holds a copy of the built agent-pep and links to its dependencies. */
function install(withAi: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), 'agent-pep-ai-peer-'));
  dirs.push(dir);
  const pkg = join(dir, 'node_modules', 'agent-pep');
  mkdirSync(pkg, { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(pkg, 'package.json'));
  cpSync(join(ROOT, 'dist'), join(pkg, 'dist'), { recursive: true });
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  for (const dep of [...Object.keys(manifest.dependencies), ...(withAi ? ['ai'] : [])]) {
    symlinkSync(join(ROOT, 'node_modules', dep), join(dir, 'node_modules', dep), 'dir');
  }
  writeFileSync(
    join(dir, 'main.mjs'),
    [
      "import('agent-pep/ai').then(",
      "  (m) => console.log(Object.keys(m).sort().join(',')),",
      "  (e) => { console.log(e.name + ': ' + e.message); process.exitCode = 3; },",
      ');',
      '',
    ].join('\n'),
  );
  return dir;
}

function run(dir: string): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['main.mjs'], { cwd: dir, timeout: 20_000 }, (error, stdout) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout });
    });
  });
}

describe('agent-pep/ai and its optional peer dependency', () => {
  it("without 'ai' installed, importing it throws an Error naming the package to install", async () => {
    const { code, stdout } = await run(install(false));
    expect(code).toBe(3);
    expect(stdout).toMatch(/^Error: agent-pep\/ai needs the Vercel AI SDK: install the 'ai' package/);
  });

  it("with 'ai' installed, it loads and exports the adapter", async () => {
    const { code, stdout } = await run(install(true));
    expect(code).toBe(0);
    expect(stdout.trim()).toBe('guardTools,pepMiddleware,pepPrepareStep,pepToolApproval');
  });
});
