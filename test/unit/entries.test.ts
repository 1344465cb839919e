/**
 * What each package entry loads at run time (its static import closure in src/, `import type` left
 * out, as TypeScript erases it): `agent-pep/ai` checks a session id without loading jose, which only
 * the permit checks need; the main entry loads neither zod, jose nor undici (each is loaded when first
 * used: `src/permit/jose.ts`, `src/transport/pool.ts`).
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const RUNTIME_IMPORT = /^(?:import|export)\s+(?!type\b)(?:[^'";]*?\bfrom\s+)?['"]([^'"]+)['"]/gm;

/** Every package an entry's closure imports, each with the chain of files that brings it in. */
function packagesLoadedBy(entry: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const from = new Map<string, string | undefined>([[entry, undefined]]);
  const stack = [entry];
  while (stack.length > 0) {
    const file = stack.pop() as string;
    for (const m of readFileSync(join(ROOT, file), 'utf8').matchAll(RUNTIME_IMPORT)) {
      const spec = m[1] as string;
      if (!spec.startsWith('.')) {
        if (spec.startsWith('node:') || out.has(spec)) continue;
        const chain: string[] = [];
        for (let f: string | undefined = file; f !== undefined; f = from.get(f)) chain.push(f);
        out.set(spec, chain);
        continue;
      }
      const target = relative(ROOT, join(ROOT, dirname(file), spec)).replace(/\.js$/, '.ts');
      if (from.has(target)) continue;
      from.set(target, file);
      stack.push(target);
    }
  }
  return out;
}

describe('agent-pep/ai', () => {
  it('loads no jose (a session id check needs no JWT library)', () => {
    const loaded = packagesLoadedBy('src/adapters/ai.ts');
    const jose = [...loaded.keys()].filter((p) => p === 'jose' || p.startsWith('jose/'));
    expect(jose.map((p) => `${p} <- ${loaded.get(p)?.join(' <- ')}`)).toEqual([]);
  });

  it('the walk does see a package where it is loaded (the main entry, p-retry for its retries)', () => {
    const loaded = packagesLoadedBy('src/index.ts');
    expect([...loaded.keys()]).toContain('p-retry');
  });
});

describe('agent-pep (issue 30: the import is light)', () => {
  it('loads no schema library, no JOSE library and no HTTP client on import: each is loaded on first use', () => {
    const loaded = packagesLoadedBy('src/index.ts');
    const heavy = [...loaded.keys()].filter((p) => /^(zod|jose|undici)(\/|$)/.test(p));
    expect(heavy.map((p) => `${p} <- ${loaded.get(p)?.join(' <- ')}`)).toEqual([]);
  });
});

describe('agent-pep/mastra and agent-pep/cloudflare-agents (issue 42)', () => {
  it.each([
    ['src/adapters/mastra.ts', /^@mastra\//],
    ['src/adapters/cloudflare-agents.ts', /^(agents|@modelcontextprotocol\/|ai)(\/|$)/],
  ])(
    '%s loads no module of its framework: it reads it for types, and checks at load that it is installed',
    (entry, framework) => {
      const loaded = packagesLoadedBy(entry);
      const found = [...loaded.keys()].filter((p) => framework.test(p));
      expect(found.map((p) => `${p} <- ${loaded.get(p)?.join(' <- ')}`)).toEqual([]);
    },
  );
});
