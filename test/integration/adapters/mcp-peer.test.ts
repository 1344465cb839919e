/**
 * Both MCP stacks are optional peers, chosen by the object given (CONTRACT section 16): agent-pep/mcp
 * loads with neither installed, and only guarding a 1.x object needs `@modelcontextprotocol/sdk`, with a
 * TypeError naming it (needs `npm run build`; `npm test` builds first).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ROOT } from '../../support/processes.js';

it('agent-pep/mcp loads without any MCP SDK; guarding a 1.x McpServer then is a TypeError naming @modelcontextprotocol/sdk', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agent-pep-mcp-'));
  try {
    // The built package with its own dependencies and nothing else: no MCP package beside it.
    cpSync(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true });
    const deps = Object.keys(
      (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: object }).dependencies,
    );
    mkdirSync(join(dir, 'node_modules'));
    for (const dep of deps) symlinkSync(join(ROOT, 'node_modules', dep), join(dir, 'node_modules', dep), 'dir');
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    // A 1.x-shaped McpServer (registerTool and tool, a low-level server taking schemas): the guard needs the SDK for it.
    const script = `
      const mcp = await import('./dist/adapters/mcp.js');
      const low = { setRequestHandler() {}, removeRequestHandler() {}, assertCanSetRequestHandler() {}, connect: async () => {} };
      const server = { registerTool() {}, tool() {}, server: low };
      const { createPep } = await import('./dist/index.js');
      const pep = createPep({ pdpUrl: 'http://127.0.0.1:9', agentId: 'support-ai', session: 'sess_1', permits: false });
      let out;
      try { mcp.guardMcpServer(pep, server, { tools: {} }); out = 'guarded'; } catch (e) { out = e.constructor.name + ': ' + e.message; }
      // require() of the ESM entry (Node 22+) works only without top-level await.
      const { createRequire } = await import('node:module');
      const required = typeof createRequire(import.meta.url)('./dist/adapters/mcp.js').guardMcpServer;
      console.log(JSON.stringify({ exports: typeof mcp.guardMcpServer + ',' + typeof mcp.guardMcpClient, required, out }));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: dir, encoding: 'utf8' });
    const got = JSON.parse(out) as { exports: string; required: string; out: string };
    expect(got.exports).toBe('function,function');
    expect(got.required).toBe('function');
    expect(got.out).toMatch(/^TypeError: .*@modelcontextprotocol\/sdk/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
