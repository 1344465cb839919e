/**
 * CONTRACT.md section 18 on Vercel Edge, without Next.js: the entries an Edge route imports, bundled
 * as an Edge bundler does (platform `browser`, the `edge-light` export condition), import no Node
 * built-in anywhere in their module graph: `agent-pep/ai` (the AI SDK adapter) and the client entry.
 * The Worker bundle of workerd.test.ts runs the same graph in a runtime that has none.
 */
import { describe, expect, it } from 'vitest';
import { bundleFor, EDGE_CONDITIONS } from '../../support/runtime-bundle.js';
import { ROOT } from '../../support/runtime-process.js';

describe('Vercel Edge (edge-light)', () => {
  it.each(['agent-pep/ai', 'agent-pep', 'agent-pep/replay/durable-object'])(
    '%s imports no Node built-in',
    async (entry) => {
      const { code, nodeImports } = await bundleFor(entry, EDGE_CONDITIONS, ROOT);
      expect(nodeImports).toEqual([]);
      expect(code.length).toBeGreaterThan(1000);
    },
  );

  it('the check sees a Node built-in where one is imported (agent-pep/mcp is Node-only)', async () => {
    const { nodeImports } = await bundleFor('agent-pep/mcp', EDGE_CONDITIONS, ROOT);
    expect(nodeImports.length).toBeGreaterThan(0);
  });

  it('agent-pep/redis resolves, on the Edge, to a module that throws naming what to use', async () => {
    const { code } = await bundleFor('agent-pep/redis', EDGE_CONDITIONS, ROOT);
    expect(code).toContain('agent-pep/replay/durable-object');
  });
});
