/**
 * The MCP SDK is an optional peer dependency: without it, importing agent-pep/mcp throws an error
 * that names the package to install (needs `npm run build`; `npm test` builds first).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ROOT } from '../../support/processes.js';

it('importing agent-pep/mcp where @modelcontextprotocol/sdk is not installed throws an error naming it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agent-pep-mcp-'));
  try {
    // The built package alone, with no node_modules beside it.
    cpSync(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    const script = `import('./dist/adapters/mcp.js').then(() => console.log('loaded'), (e) => console.log(e.message))`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: dir, encoding: 'utf8' });
    expect(out).toContain("Cannot find package '@modelcontextprotocol/sdk'");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
