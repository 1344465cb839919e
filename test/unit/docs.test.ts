/**
 * The docs say what the code does: every TypeScript block of the README is a marked region of an
 * example that the typecheck covers (and the tests run), every JSON block is an example file, every
 * relative link resolves inside the repository, docs/README.md indexes every page, and every
 * `npm run` named exists. Reads files of this repository only.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

/**
 * Pages other branches are writing (README links them already). Remove a name once its page is in
 * docs/: the last test fails until then, so the list cannot outlive its reason.
 */
const PENDING: string[] = [];

/** Every file under `dir` (relative to the root) whose name ends with `ext`. */
function filesUnder(dir: string, ext: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...filesUnder(path, ext));
    else if (entry.name.endsWith(ext)) out.push(path);
  }
  return out;
}

/** The fenced code blocks of a markdown text, with their language. */
function codeBlocks(markdown: string): { lang: string; code: string }[] {
  return [...markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1] ?? '', code: m[2] ?? '' }));
}

/** `// #region NAME` ... `// #endregion NAME` regions of the example files, by name. */
function exampleRegions(): Map<string, { file: string; code: string }> {
  const regions = new Map<string, { file: string; code: string }>();
  for (const file of filesUnder('examples', '.ts')) {
    for (const m of read(file).matchAll(/^\/\/ #region (\S+)\n([\s\S]*?)^\/\/ #endregion \1$/gm)) {
      const name = m[1] ?? '';
      expect(regions.has(name), `region ${name} is defined twice`).toBe(false);
      regions.set(name, { file, code: m[2] ?? '' });
    }
  }
  return regions;
}

/** The markdown pages the links of which are checked. */
const PAGES = [
  'README.md',
  ...filesUnder('docs', '.md'),
  ...filesUnder('demo', '.md'),
  ...filesUnder('examples', '.md'),
];

/** Relative link targets of a markdown page (no scheme, no bare anchor), without their anchor. */
function relativeLinks(page: string): string[] {
  const text = read(page).replace(/^```[\s\S]*?^```$/gm, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1] ?? '')
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('#'))
    .map((target) => target.split('#')[0] ?? '');
}

describe('README code blocks', () => {
  const readme = read('README.md');
  const blocks = codeBlocks(readme);

  it('every ts block is a marked region of an example, verbatim', () => {
    const regions = [...exampleRegions().values()];
    const ts = blocks.filter((b) => b.lang === 'ts' || b.lang === 'typescript');
    expect(ts.length).toBeGreaterThanOrEqual(2);
    for (const block of ts) {
      const found = regions.find((r) => r.code === block.code);
      expect(found, `README block not found in any examples/ region:\n${block.code.slice(0, 200)}`).toBeDefined();
    }
  });

  it('the quick start and the service are those regions', () => {
    const regions = exampleRegions();
    expect(regions.get('quickstart')?.file).toBe('examples/quickstart/agent.ts');
    expect(regions.get('service')?.file).toBe('examples/service.ts');
    for (const name of ['quickstart', 'service']) {
      expect(blocks.map((b) => b.code)).toContain(regions.get(name)?.code);
    }
  });

  it('every json block is an example file', () => {
    const files = filesUnder('examples', '.json').map((f) => JSON.parse(read(f)) as unknown);
    const json = blocks.filter((b) => b.lang === 'json');
    expect(json.length).toBeGreaterThanOrEqual(1);
    for (const block of json) expect(files).toContainEqual(JSON.parse(block.code));
  });

  it('names the install command and the two commands of a clone exactly', () => {
    const sh = blocks.filter((b) => b.lang === 'sh').map((b) => b.code.trim());
    expect(sh).toContain('npm i agent-pep');
    expect(sh).toContain('npm ci && npm run demo');
    expect(sh).toContain('npm test');
    expect(sh).toContain('npx agent-pep dev-pdp --policy policy.json');
  });
});

describe('links', () => {
  it.each(PAGES)('every relative link of %s resolves to a file or folder inside the repository', (page) => {
    for (const target of relativeLinks(page)) {
      const path = resolve(ROOT, dirname(page), target);
      const inside = relative(ROOT, path);
      expect(inside.startsWith('..'), `${page} links outside the repository: ${target}`).toBe(false);
      if (PENDING.includes(inside)) continue;
      expect(existsSync(path), `${page} links a missing file: ${target}`).toBe(true);
    }
  });

  it('docs/README.md indexes every page of docs/', () => {
    const linked = new Set(relativeLinks('docs/README.md').map((t) => relative(ROOT, resolve(ROOT, 'docs', t))));
    for (const page of filesUnder('docs', '.md')) {
      if (page !== 'docs/README.md') expect(linked, `docs/README.md does not link ${page}`).toContain(page);
    }
    for (const page of PENDING) expect(linked).toContain(page);
  });

  it('the README links every page of docs/', () => {
    const linked = new Set(relativeLinks('README.md').map((t) => relative(ROOT, resolve(ROOT, t))));
    for (const page of [...filesUnder('docs', '.md'), ...PENDING]) {
      if (page !== 'docs/README.md') expect(linked, `README.md does not link ${page}`).toContain(page);
    }
  });

  it('PENDING names only pages that are not written yet', () => {
    const written = PENDING.filter((page) => existsSync(join(ROOT, page)) && statSync(join(ROOT, page)).isFile());
    expect(written, 'these pages exist now: remove them from PENDING in test/unit/docs.test.ts').toEqual([]);
  });
});

describe('docs/api.md', () => {
  /** The names an entry file exports (its `export { ... }` lists and exported declarations). */
  function exportedNames(file: string): string[] {
    const source = read(file);
    const names = new Set<string>();
    for (const m of source.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g)) {
      for (const item of (m[1] ?? '').split(',')) {
        const name = item
          .trim()
          .replace(/^type\s+/, '')
          .split(/\s+as\s+/)
          .pop();
        if (name) names.add(name);
      }
    }
    for (const m of source.matchAll(/export\s+(?:async\s+)?(?:function|const|class|interface|type)\s+(\w+)/g)) {
      names.add(m[1] ?? '');
    }
    return [...names];
  }

  const ENTRIES = [
    'src/index.ts',
    'src/replay/redis.ts',
    'src/dev-pdp/index.ts',
    'src/adapters/openai-agents.ts',
    'src/adapters/langchain.ts',
    'src/adapters/ai.ts',
    'src/adapters/mcp.ts',
    'src/adapters/claude-agent-sdk.ts',
  ];
  it.each(ENTRIES)('names every export of %s', (file) => {
    const api = read('docs/api.md');
    const names = exportedNames(file);
    expect(names.length).toBeGreaterThan(3);
    expect(names.filter((name) => !new RegExp(`\\b${name}\\b`).test(api))).toEqual([]);
  });
});

describe('commands', () => {
  it('the commands for a clone run the bin through `npm run agent-pep --`: `npx agent-pep` is not linked in a clone', () => {
    // npx resolves the bins of the project's dependencies; a package's own bin is not one of them.
    const script = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts['agent-pep'];
    expect(script).toContain('node dist/cli/main.js');
    for (const page of ['examples/README.md', 'demo/README.md']) {
      expect(read(page), `${page} tells a clone to run npx agent-pep`).not.toMatch(/npx agent-pep [a-z-]/);
    }
    // Files that only a clone has (demo/, examples/) are never the argument of an npx command.
    for (const page of PAGES) {
      for (const m of read(page).matchAll(/npx agent-pep [^\n`]*?\b((?:demo|examples)\/\S+)/g)) {
        expect.fail(`${page}: npx agent-pep with ${m[1]}, a file of a clone, where npx does not find the bin`);
      }
    }
  });

  it('no page sends the reader to a file outside the repository (CONTRACT.md)', () => {
    for (const page of PAGES) expect(read(page), page).not.toMatch(/CONTRACT\.md/);
  });

  it('every `npm run <script>` the docs name exists in package.json', () => {
    const scripts = Object.keys((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts);
    for (const page of PAGES) {
      for (const m of read(page).matchAll(/npm run (?:--silent )?([a-z][\w:-]*)/g)) {
        expect(scripts, `${page} names npm run ${m[1]}`).toContain(m[1]);
      }
    }
  });
});
