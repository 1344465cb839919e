/**
 * The built `agent-pep/openai-agents` entry by its name (needs `npm run build`; `npm test` builds
 * first): ESM and CommonJS load it, and without `@openai/agents` installed importing it throws an
 * Error naming the package to install (CONTRACT.md section 1).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const EXPORTS = ['guardTools', 'pepInputGuardrail', 'pepModelInputFilter', 'pepOutputGuardrail', 'pepToolContext'];

describe('agent-pep/openai-agents', () => {
  it('import() from ESM and require() from CommonJS give every export', () => {
    const esm = execFileSync(
      process.execPath,
      ['--input-type=module', '-e', "console.log(Object.keys(await import('agent-pep/openai-agents')).join(','))"],
      { cwd: root, encoding: 'utf8' },
    );
    const cjs = execFileSync(
      process.execPath,
      ['-e', "console.log(Object.keys(require('agent-pep/openai-agents')).join(','))"],
      { cwd: root, encoding: 'utf8' },
    );
    expect(esm.trim().split(',')).toEqual(EXPORTS);
    expect(cjs.trim().split(',')).toEqual(EXPORTS);
  });

  it('without @openai/agents installed, importing it throws an Error naming the package', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-pep-oa-'));
    try {
      const pkg = join(dir, 'node_modules', 'agent-pep');
      mkdirSync(pkg, { recursive: true });
      cpSync(join(root, 'dist'), join(pkg, 'dist'), { recursive: true });
      cpSync(join(root, 'package.json'), join(pkg, 'package.json'));
      const out = execFileSync(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          "try { await import('agent-pep/openai-agents'); console.log('loaded') } catch (e) { console.log(e instanceof Error, e.message) }",
        ],
        { cwd: dir, encoding: 'utf8' },
      );
      expect(out).toMatch(/^true .*'@openai\/agents'/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
