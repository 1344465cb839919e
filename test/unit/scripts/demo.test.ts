/**
 * `npm run demo` (scripts/demo.js) says it is building on its first run instead of leaving the
 * terminal silent for the build, and says nothing once the demo is built.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error a plain JS script without types
import { buildNotice } from '../../../scripts/demo.js';

const ROOT = new URL('../../../', import.meta.url).pathname;

describe('npm run demo', () => {
  it('runs scripts/demo.js', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.demo).toBe('node scripts/demo.js');
  });

  it('the first run says it is building; once built, nothing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-pep-demo-'));
    try {
      expect(buildNotice(dir)).toMatch(/^agent-pep demo: building .* first/);
      mkdirSync(join(dir, 'build/demo'), { recursive: true });
      mkdirSync(join(dir, 'dist'));
      writeFileSync(join(dir, 'build/demo/main.js'), '');
      expect(buildNotice(dir)).toMatch(/building/); // the library is not built yet
      writeFileSync(join(dir, 'dist/index.js'), '');
      expect(buildNotice(dir)).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
