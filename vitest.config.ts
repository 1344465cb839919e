import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * Files that change what other files would see if they shared a module graph: module mocks
 * (`vi.mock('agent-pep')`) and the OpenTelemetry globals. Each runs in a fresh worker of its own.
 */
const ISOLATED = ['test/integration/telemetry/decision-spans.test.ts'];

/**
 * The transport's fail-closed suites, run a second time (project `node-http`) with every client on
 * the hook's node:http dispatcher (test/support/node-http-transport.ts mocks `createPep` to use it),
 * and a third time (project `fetch`) on the fetch transport (test/support/fetch-transport.ts).
 */
export const NODE_HTTP = [
  'test/integration/client/fail-closed.test.ts',
  'test/integration/client/deadline.test.ts',
  'test/integration/client/informational-responses.test.ts',
  // Not one-request-per-attempt.test.ts: its clients all send through a dispatcher of its own.
  'test/integration/transport/{charset,content-coding-refused,error-body-code,http-framing,no-redirects,repeated-headers,unsolicited-upgrade}.test.ts',
];

/**
 * End-to-end files: they start processes (the built bin, compiled examples, Node to load the package,
 * redis-server, Cerbos, the Claude Code binary, Chromium) or run a soak-like corpus, and several bound
 * a deadline that a loaded machine can starve. `npm run test:e2e` runs them in the `e2e` project with
 * two workers; `npm test` runs the others (projects `shared` and `isolated`); `npm run test:all` both.
 */
export const E2E = [
  // Chromium, driving the reviewer console.
  'packages/dev-pdp/test/integration/console/browser.test.ts',
  // The demo's CLI as a process, and its session corpus (soak-like); both mock modules (vi.mock).
  'test/integration/demo/**/*.test.ts',
  // The built `agent-pep` bin as a process.
  'test/integration/cli/hook.test.ts',
  'test/integration/cli/hook-serve.test.ts',
  'test/integration/cli/hook-init.test.ts',
  'test/integration/cli/hook-serve-claude-code.test.ts',
  'test/integration/cli/closed-stdout.test.ts',
  'packages/dev-pdp/test/integration/cli.test.ts',
  // Three dev PDP processes (the built bin) on one redis-server, which the test stops.
  'packages/dev-pdp/test/integration/replicas-redis.test.ts',
  'test/integration/cli/check.test.ts',
  'test/integration/cli/evidence.test.ts',
  'test/integration/cli/verify-permit.test.ts',
  // A real MCP server process, pinned.
  'test/integration/cli/pin.test.ts',
  // Examples that start processes (the bin's dev PDP, the hook, a service, `sh -c` settings commands).
  'test/integration/examples/quickstart.test.ts',
  'test/integration/examples/service.test.ts',
  'test/integration/examples/otel.test.ts',
  'test/integration/examples/payments-service.test.ts',
  'test/integration/examples/claude-code-hook.test.ts',
  'test/integration/examples/hook-settings-fail-closed.test.ts',
  // A child Node process as the sandbox.
  'test/integration/examples/sandbox.test.ts',
  // Node processes loading the package as a user's project would.
  'test/integration/package/**/*.test.ts',
  'test/integration/telemetry/loading.test.ts',
  'test/integration/adapters/ai-peer.test.ts',
  'test/integration/adapters/mcp-peer.test.ts',
  // npm install of the packed package with the MCP 2.x packages only, then tsc and Node on it.
  'test/integration/adapters/mcp-v2-only.test.ts',
  'test/unit/scripts/prepare.test.ts',
  // The Claude Code binary the Claude Agent SDK ships, run offline.
  'test/integration/adapters/claude-agent-sdk.test.ts',
  // redis-server processes of their own (restarted, stopped), and Cerbos.
  'test/integration/replay/redis*.test.ts',
  'packages/dev-pdp/test/integration/sessions-redis.test.ts',
  'test/integration/cerbos/**/*.test.ts',
];

/** A file of this repository, as an absolute path. */
const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));
/**
 * The runtime matrix (issue 42, CONTRACT.md section 18): the portable suite in Deno, Bun and workerd
 * processes, and the Edge check of the AI SDK adapter's entry. `npm run test:runtimes` runs them (one
 * file a runtime, so CI can run each in parallel); they need `dist/` built.
 */
export const RUNTIMES = ['test/integration/runtimes/**/*.test.ts'];

export default defineConfig({
  resolve: {
    // The dev PDP package (packages/dev-pdp) reaches the SDK through `agent-pep/internal`, and the SDK's CLI
    // loads `@agent-pep/dev-pdp/cli` by name: in tests both resolve to their sources, so the SDK's and the
    // PDP's modules are one instance (one CliExit class, one STAGES tuple), as they are in the built bin.
    alias: [
      { find: /^agent-pep\/internal$/, replacement: here('./src/internal-api.ts') },
      { find: /^@agent-pep\/dev-pdp$/, replacement: here('./packages/dev-pdp/src/index.ts') },
      { find: /^@agent-pep\/dev-pdp\/cli$/, replacement: here('./packages/dev-pdp/src/cli.ts') },
    ],
  },
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
          include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
          exclude: [...ISOLATED, ...E2E, ...RUNTIMES],
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
      {
        extends: true,
        test: {
          name: 'node-http',
          include: NODE_HTTP,
          isolate: true,
          setupFiles: ['test/support/node-http-transport.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'fetch',
          include: NODE_HTTP,
          isolate: true,
          setupFiles: ['test/support/fetch-transport.ts'],
        },
      },
      {
        extends: true,
        test: { name: 'runtimes', include: RUNTIMES, isolate: true },
      },
      {
        extends: true,
        // Each file in a fresh worker: the demo files mock modules, and none shares much with another.
        test: { name: 'e2e', include: E2E, isolate: true },
      },
    ],
  },
});
