import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Worker threads start faster than forked processes: most test files are small, so start-up is a
    // large share of the run. Nothing in the suite needs a process of its own (no process.chdir).
    pool: 'threads',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Unhandled rejections fail the run (vitest's default); keep it explicit.
    dangerouslyIgnoreUnhandledErrors: false,
  },
});
