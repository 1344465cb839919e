import { defineConfig } from 'vitest/config';

/**
 * Files that change what other files would see if they shared a module graph: module mocks
 * (`vi.mock('agent-pep')`) and the OpenTelemetry globals. Each runs in a fresh worker of its own.
 */
const ISOLATED = [
  'test/integration/demo/**/*.test.ts',
  'test/integration/examples/payments-service.test.ts',
  'test/integration/telemetry/decision-spans.test.ts',
];

export default defineConfig({
  test: {
    // Worker threads start faster than forked processes: most test files are small, so start-up is a
    // large share of the run. Nothing in the suite needs a process of its own (no process.chdir).
    pool: 'threads',
    // More workers than cores: many files mostly wait (deadlines, hung servers, child processes), and
    // vitest's default (cores - 1) runs one file at a time on a 2-core machine.
    maxWorkers: 4,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Unhandled rejections fail the run (vitest's default); keep it explicit.
    dangerouslyIgnoreUnhandledErrors: false,
    // Transformed test and source files are kept on disk between runs (node_modules/.experimental-
    // vitest-cache, keyed by content): a run after the first transforms only what changed.
    experimental: { fsModuleCache: true },
    // The compiled examples (build/examples), and the fixtures that test their runner, are loaded by
    // Node itself, as `node <file>` loads them: `agent-pep` resolves to the package's dist/, and each
    // run is a fresh module instance (test/support/examples.ts).
    server: { deps: { external: [/\/build\/examples\//, /\/test\/fixtures\/examples\//] } },
    projects: [
      {
        extends: true,
        test: {
          name: 'shared',
          include: ['test/**/*.test.ts'],
          exclude: ISOLATED,
          // The files of a worker share its module graph instead of loading the package and the
          // frameworks again per file (most of the suite's time). Each file restores what it changes
          // (spies, fake timers, listeners) and closes its servers; the others are in ISOLATED.
          isolate: false,
        },
      },
      {
        extends: true,
        test: { name: 'isolated', include: ISOLATED, isolate: true },
      },
    ],
  },
});
