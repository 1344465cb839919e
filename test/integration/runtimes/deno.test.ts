/**
 * CONTRACT.md section 18 on Deno (the `deno` npm package's binary, resolving this package through
 * node_modules): the transport's fail-closed suite on the default transport and on `fetch`, a permit
 * used once against the dev PDP on loopback, and the AI SDK adapter end to end.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectSuite } from '../../support/runtime-expect.js';
import { type RuntimePdps, startRuntimePdps } from '../../support/runtime-pdps.js';
import { CLI, ROOT, runSuiteIn } from '../../support/runtime-process.js';

let pdps: RuntimePdps;
beforeAll(async () => {
  pdps = await startRuntimePdps();
});
afterAll(async () => {
  await pdps.close();
});

describe('Deno', () => {
  it('keeps every fail-closed rule on both transports, uses a permit once, and runs the AI SDK adapter', async () => {
    const deno = `${ROOT}node_modules/.bin/deno`;
    const args = [
      'run',
      '--node-modules-dir=manual',
      '--allow-net=127.0.0.1',
      `--allow-read=${ROOT}`,
      '--allow-env',
      '--allow-sys',
      CLI,
    ];
    const result = await runSuiteIn(deno, args, pdps.config);
    expectSuite(result, 'accepted');
    expect(result.permit.first).toBe('verified');
  });
});
