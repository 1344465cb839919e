/** The built package, by its name, from ESM and CommonJS (needs `npm run build`; `npm test` builds first). */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const MAIN = [
  'PermitVerificationError',
  'PolicyBlockedError',
  'PolicyEscalatedError',
  'actionHash',
  'createMemoryReplayStore',
  'createPep',
  'createPermitVerifier',
  'normalizeToolName',
  'verifyEvidence',
];

describe('package entry points', () => {
  it('require("agent-pep") works from CommonJS on this Node', () => {
    const out = execFileSync(process.execPath, ['test/fixtures/require.cjs'], { cwd: root, encoding: 'utf8' });
    const r = JSON.parse(out) as { main: string[]; redis: string[]; devPdp: string[]; normalized: string };
    for (const name of MAIN) expect(r.main).toContain(name);
    expect(r.redis).toContain('createRedisReplayStore');
    expect(r.devPdp).toContain('startDevPdp');
    expect(r.normalized).toBe('refund_payment');
  });

  it('import("agent-pep") works from ESM', () => {
    const out = execFileSync(
      process.execPath,
      ['--input-type=module', '-e', "const m = await import('agent-pep'); console.log(Object.keys(m).join(','))"],
      { cwd: root, encoding: 'utf8' },
    );
    for (const name of MAIN) expect(out.split(',').map((s) => s.trim())).toContain(name);
  });
});
