/**
 * scripts/bundle-hook.js (issue 30): dist/cli/hook.js, as `npm test` builds it, is one module that
 * imports only Node's builtins and the bin's usage.js; jose and undici are not in it (the hook checks no
 * permit and sends on node:http), and every package it carries is named, with its licence, beside it.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../../', import.meta.url);
const bundle = readFileSync(new URL('dist/cli/hook.js', ROOT), 'utf8');
const licenses = readFileSync(new URL('dist/cli/hook.licenses.txt', ROOT), 'utf8');

/** The specifiers of the bundle's static imports (`import x from "y"`, `import "y"`, minified or not). */
function staticImports(code: string): string[] {
  return [...code.matchAll(/(?:^|[;}\s])import\s*(?:[\w${},*\s]+from\s*)?["'`]([^"'`]+)["'`]/g)].map(
    (m) => m[1] as string,
  );
}

describe('dist/cli/hook.js', () => {
  it('imports only node: builtins and ./usage.js', () => {
    const imports = staticImports(bundle);
    expect(imports.length).toBeGreaterThan(3);
    expect(imports).toContain('./usage.js');
    expect(imports.filter((s) => !s.startsWith('node:') && s !== './usage.js')).toEqual([]);
  });

  it('carries neither jose nor undici (loaded, if ever, from node_modules: undici only by a client without a dispatcher)', () => {
    // booleans, not the bundle, in a failure message
    expect(/jose\/v\d/.test(bundle)).toBe(false);
    expect(bundle.includes('llhttp')).toBe(false);
    expect(bundle.includes('("undici/lib/dispatcher/pool.js")')).toBe(true);
  });

  it('names each package it carries, with its licence, in hook.licenses.txt', () => {
    for (const name of ['p-retry', 'lru-cache', 'content-type']) {
      expect(licenses).toMatch(new RegExp(`^${name}@\\d+\\.\\d+\\.\\d+ \\(`, 'm'));
    }
    expect(licenses).not.toMatch(/^(jose|undici)@/m);
  });
});
