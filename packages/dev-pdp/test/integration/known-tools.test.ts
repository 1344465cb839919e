/**
 * `startDevPdp({ knownTools })` refuses a policy with a latch that can never match a known tool (fail
 * closed: the typo would leave the real tool ALLOWed); `agent-pep dev-pdp --known-tools` does the same; `agent-pep check-policy --tools` lists those
 * latches and the tools no latch covers, and exits 3 when a latch can never match.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runInProcess } from '../../../../test/support/cli.js';
import { InvalidPolicyError, startDevPdp } from '../../src/index.js';

const POLICY = {
  agents: ['a'],
  default: { action: 'BLOCK' },
  latches: [
    { id: 'reads', stage: 'action', tool: 'read_*', verdict: 'ALLOW' },
    { id: 'no-delete', stage: 'action', tool: 'delete_files', verdict: 'BLOCK' },
  ],
};

let dir: string;
let policyPath: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'check-policy-'));
  policyPath = join(dir, 'policy.json');
  await writeFile(policyPath, JSON.stringify(POLICY));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('startDevPdp({ knownTools })', () => {
  test('a latch that can never match a known tool: refused with InvalidPolicyError naming it', async () => {
    const error = await startDevPdp({ policy: POLICY, knownTools: ['read_file', 'delete_file'], log: false }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InvalidPolicyError);
    expect((error as InvalidPolicyError).issues).toEqual([
      { path: 'latches[1].tool', latch: 'no-delete', message: expect.any(String) },
    ]);
  });

  test('every latch matching a known tool: it starts, and a tool no latch names gets the default BLOCK', async () => {
    const pdp = await startDevPdp({ policy: POLICY, knownTools: ['read_file', 'delete_files', 'x'], log: false });
    try {
      expect(pdp.url).toMatch(/^http:/);
    } finally {
      await pdp.close();
    }
  });

  test('knownTools that are not tool names: a TypeError with option knownTools', async () => {
    const error = await startDevPdp({ policy: POLICY, knownTools: ['***'], log: false }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TypeError);
    expect((error as { option?: string }).option).toBe('knownTools');
  });
});

describe('agent-pep dev-pdp --known-tools', () => {
  test('a latch no known tool matches: exit 2, the latch named on its line; a bad name is a usage error', async () => {
    const r = await runInProcess([
      'dev-pdp',
      '--policy',
      policyPath,
      '--port',
      '0',
      '--known-tools',
      'read_file,delete_file',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('latches[1].tool (latch no-delete)');
    const bad = await runInProcess(['dev-pdp', '--policy', policyPath, '--port', '0', '--known-tools', '***']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('knownTools');
  });
});

describe('agent-pep check-policy', () => {
  test('--tools: lists the latch no tool matches and the tools no latch covers; exit 3', async () => {
    const r = await runInProcess([
      'check-policy',
      '--policy',
      policyPath,
      '--tools',
      'read_file,delete_file',
      '--tools',
      'send_email',
    ]);
    expect(r.code).toBe(3);
    expect(r.stdout).toContain('latches[1] no-delete: tool delete_files');
    expect(r.stdout).toMatch(/no latch covers: 2\n {2}delete_file\n {2}send_email\n/);
  });

  test('--json prints both lists; exit 0 when every latch matches a known tool', async () => {
    const r = await runInProcess([
      'check-policy',
      '--policy',
      policyPath,
      '--tools',
      'read_file,delete_files,x',
      '--json',
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ valid: true, unmatched: [], uncovered: ['x'] });
  });

  test('without --tools it validates the policy: 0 valid, 2 invalid with one line per problem', async () => {
    expect((await runInProcess(['check-policy', '--policy', policyPath])).code).toBe(0);
    const bad = join(dir, 'bad.json');
    await writeFile(bad, JSON.stringify({ ...POLICY, default: { action: 'WARN' } }));
    const r = await runInProcess(['check-policy', '--policy', bad]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('default.action');
  });

  test('usage errors exit 2: no --policy, an empty --tools, a tool name that is none', async () => {
    for (const args of [[], ['--policy', policyPath, '--tools', ','], ['--policy', policyPath, '--tools', '***']]) {
      expect((await runInProcess(['check-policy', ...args])).code).toBe(2);
    }
  });
});
