/**
 * A misconfiguration says what it is (issue 29 item 12; docs/cli.md): a wrong agent id and a PDP URL
 * with a path reach `check` and the hook as a synthesized BLOCK whose message names the PDP's error code
 * (`unknown_agent`, `not_found`); `check` prints it (stdout JSON and one stderr line), the hook puts it
 * on the stderr line the host reads, and the dev PDP logs the path it refused.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DevPdp, type RefusedRequest, startDevPdp } from '../../../packages/dev-pdp/src/index.js';
import { runInProcess } from '../../support/cli.js';
import { ROOT } from '../../support/processes.js';

const EVENT = readFileSync(join(ROOT, 'test/fixtures/hooks/claude-code-pre-tool-use-bash.json'), 'utf8').replace(
  'rm -rf build',
  'ls',
);
let pdp: DevPdp;
const refused: RefusedRequest[] = [];

beforeAll(async () => {
  pdp = await startDevPdp({ policy: { agents: ['coder'], latches: [] }, log: (r) => refused.push(r) });
});
afterAll(async () => {
  await pdp.close();
});

const CASES = [
  { name: 'a wrong agent id', url: () => pdp.url, agent: 'codre', code: 'unknown_agent' },
  { name: 'a PDP URL with a path', url: () => `${pdp.url}/v1`, agent: 'coder', code: 'not_found' },
] as const;

describe('a misconfiguration says what it is', () => {
  for (const c of CASES) {
    it(`check prints the PDP's error code for ${c.name}, on stdout and stderr`, async () => {
      const r = await runInProcess(['check', '--pdp', c.url(), '--agent', c.agent, '--tool', 'bash', '--args', '{}']);
      expect(r.code).toBe(3);
      const decision = JSON.parse(r.stdout) as { synthesized: { code: string; message: string } };
      expect(decision.synthesized.message).toContain(c.code);
      expect(r.stderr).toContain(`agent-pep: the policy check failed (${decision.synthesized.code}): `);
      expect(r.stderr).toContain(decision.synthesized.message);
    });

    it(`the hook's stderr names the PDP's error code for ${c.name}`, async () => {
      const r = await runInProcess(['hook', 'claude-code', '--pdp', c.url(), '--agent', c.agent], { input: EVENT });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(c.code);
      expect(JSON.parse(r.stdout)).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny' } });
    });
  }

  it('the dev PDP logged the path it refused', () => {
    const notFound = refused.filter((r) => r.code === 'not_found');
    expect(notFound.length).toBeGreaterThan(0);
    for (const r of notFound)
      expect(r).toMatchObject({ status: 404, route: '(other)', path: '/v1/api/policy/authorize' });
    expect(refused.some((r) => r.code === 'unknown_agent')).toBe(true);
  });
});
