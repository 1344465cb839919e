/** A tiny smoke run of the benchmark (every scenario, a few iterations): it runs and exits 0. Figures are not asserted. */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

it('bench/smoke.js runs every scenario and exits 0', async () => {
  const { code, out } = await new Promise<{ code: number | null; out: string }>((resolve) => {
    const child = execFile(process.execPath, ['bench/smoke.js'], { cwd: root, timeout: 60_000 }, (err, stdout) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout }),
    );
    child.stdin?.end();
  });
  expect(code).toBe(0);
  expect(out).toContain('checkInput_p50_c1_vs_undici');
}, 90_000);
