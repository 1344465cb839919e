/**
 * `@mastra/core` and `agents` are optional peer dependencies: importing agent-pep/mastra or
 * agent-pep/cloudflare-agents where its framework is not installed throws an Error naming the package to
 * install (CONTRACT.md section 1, as agent-pep/ai does). Runs the built package (`npm test` builds first)
 * from a temporary install that has every runtime dependency, with and without the framework.
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

/** A project whose node_modules holds a copy of the built agent-pep, links to its dependencies and to `extra`. */
function install(entry: string, extra: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'agent-pep-peer-'));
  dirs.push(dir);
  const pkg = join(dir, 'node_modules', 'agent-pep');
  mkdirSync(pkg, { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(pkg, 'package.json'));
  cpSync(join(ROOT, 'dist'), join(pkg, 'dist'), { recursive: true });
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  for (const dep of [...Object.keys(manifest.dependencies), ...extra]) {
    mkdirSync(join(dir, 'node_modules', dep, '..'), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules', dep), join(dir, 'node_modules', dep), 'dir');
  }
  writeFileSync(
    join(dir, 'main.mjs'),
    [
      `import('${entry}').then(`,
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

describe.each([
  ['agent-pep/mastra', '@mastra/core', 'guardTools,pepInputProcessor,pepOutputProcessor'],
  ['agent-pep/cloudflare-agents', 'agents', 'agentSession,guardAgentMcp,guardTools'],
])('%s and its optional peer dependency', (entry, framework, exports) => {
  it(`without '${framework}' installed, importing it throws an Error naming the package to install`, async () => {
    const { code, stdout } = await run(install(entry, []));
    expect(code).toBe(3);
    expect(stdout.trim()).toMatch(new RegExp(`^Error: ${entry} needs .*npm install ${framework}$`));
  });

  it(`with '${framework}' installed, it loads and exports the adapter`, async () => {
    const { code, stdout } = await run(install(entry, [framework]));
    expect(code).toBe(0);
    expect(stdout.trim()).toBe(exports);
  });
});
