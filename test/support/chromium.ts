/**
 * Chromium for the browser tests: Debian's `chromium` (or `CHROMIUM_BIN`), driven by playwright-core.
 *
 * - the binary runs: tests use it, headless, with a fresh user-data dir per launch.
 * - else: with `CI` set the tests FAIL (browser tests are never skipped in CI: `.ci/run` installs
 *   chromium); locally they skip, saying why.
 */
import { spawnSync } from 'node:child_process';
import { type Browser, chromium } from 'playwright-core';

const BIN = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';

/** The flags every launch uses: headless, no sandbox (containers), nothing that calls home. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Why the browser tests cannot run, or undefined when they can; throws in CI instead of skipping. */
export function chromiumUnavailableReason(): string | undefined {
  const r = spawnSync(BIN, ['--version'], { stdio: 'ignore', timeout: 20_000 });
  if (r.status === 0) return undefined;
  const why = `no runnable Chromium at ${BIN}`;
  if (process.env.CI) {
    throw new Error(`Browser tests must run in CI, but ${why}. Install it (apt-get install -y chromium).`);
  }
  console.warn(`[agent-pep tests] skipping browser tests: ${why}. Install chromium or set CHROMIUM_BIN.`);
  return why;
}

/**
 * Launches Chromium (playwright-core starts it with a fresh temporary user-data dir of its own); give
 * each test its own `browser.newContext()` for fresh cookies.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: BIN, headless: true, args: CHROMIUM_ARGS });
}
