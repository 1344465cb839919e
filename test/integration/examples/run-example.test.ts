/**
 * test/support/examples.ts, which the example tests use to run a compiled example in the worker: what
 * a process would show must still show (its output, its exit code, a server it never closed).
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { runExample } from '../../support/examples.js';
import { ROOT } from '../../support/processes.js';

const fixture = (name: string) => join(ROOT, 'test/fixtures/examples', name);

it('captures stdout and stderr as console.log and console.error print them, and the exit code', async () => {
  const r = await runExample(fixture('prints-and-fails.mjs'));
  expect(r.stdout).toBe("{ scene: 'ALLOW' } ran 1\n");
  expect(r.stderr).toBe('UNEXPECTED: the tool ran twice\n');
  expect(r.code).toBe(1);
  // the worker's own exit code is left as it was
  expect(process.exitCode).toBeUndefined();
});

it('an example that leaves a server listening fails (as a process it would never exit)', async () => {
  const r = await runExample(fixture('leaves-a-server.mjs'));
  expect(r.stdout).toBe('started\n');
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('left running: TCPServerWrap');
  const left = (globalThis as { leftServer?: import('node:http').Server }).leftServer;
  await new Promise((resolve) => left?.close(resolve));
});

it('an example that leaves a timer running fails (as a process it would never exit)', async () => {
  const r = await runExample(fixture('leaves-a-timer.mjs'));
  clearInterval((globalThis as { leftTimer?: ReturnType<typeof setInterval> }).leftTimer);
  expect(r.stdout).toBe('started\n');
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('left running: Timeout');
});

it('an exit code set after the top-level code finished is still the exit code', async () => {
  const r = await runExample(fixture('fails-after-its-end.mjs'));
  expect(r.code).toBe(1);
  expect(process.exitCode).toBeUndefined();
});

it('each run is a fresh module instance: the same example runs twice', async () => {
  const first = await runExample(fixture('prints-and-fails.mjs'));
  const second = await runExample(fixture('prints-and-fails.mjs'));
  expect(second.stdout).toBe(first.stdout);
});
