/**
 * Bundles a module as a fetch-only runtime's bundler would (rolldown, platform `browser`, with that
 * runtime's export conditions), and lists every Node built-in the bundle would import: for the Edge
 * check of `agent-pep/ai` and the workerd Worker (issue 42). The package resolves to `dist/` (build first).
 */
import { builtinModules } from 'node:module';
import { rolldown } from 'rolldown';

/** Export conditions: Vercel Edge (`edge-light`) and Cloudflare Workers (`workerd`), as their bundlers pass them. */
export const EDGE_CONDITIONS = ['edge-light', 'worker', 'browser', 'import', 'default'];
export const WORKERD_CONDITIONS = ['workerd', 'worker', 'browser', 'import', 'default'];

const BUILTINS = new Set(builtinModules);

/** A bundle's code, and the Node built-ins its module graph imports (`node:x` or a bare built-in name), with who imports each. */
export interface Bundled {
  code: string;
  nodeImports: string[];
}

/** Bundles `input` (a path or a package specifier) into one ES module. */
export async function bundleFor(input: string, conditions: string[], cwd: string): Promise<Bundled> {
  const nodeImports: string[] = [];
  const bundle = await rolldown({
    input,
    cwd,
    platform: 'browser',
    resolve: { conditionNames: conditions },
    logLevel: 'silent',
    plugins: [
      {
        name: 'node-builtins',
        resolveId(id, importer) {
          if (id.startsWith('node:') || BUILTINS.has(id)) {
            nodeImports.push(`${id} <- ${importer ?? '(entry)'}`);
            return { id, external: true };
          }
          return null;
        },
      },
    ],
  });
  try {
    const { output } = await bundle.generate({ format: 'esm', codeSplitting: false });
    return { code: output[0].code, nodeImports };
  } finally {
    await bundle.close();
  }
}
