/** The built package, by its name, from ESM and CommonJS (needs `npm run build`; `npm test` builds first). */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../..', import.meta.url));
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

/** A fresh Node process that imports the package by name: its exports, and whether ioredis got loaded. */
let esm: { exports: string[]; ioredisLoaded: boolean } | undefined;
function importedFromEsm(): { exports: string[]; ioredisLoaded: boolean } {
  esm ??= JSON.parse(
    execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "import { createRequire } from 'node:module'; const m = await import('agent-pep'); const r = createRequire(import.meta.url); console.log(JSON.stringify({ exports: Object.keys(m), ioredisLoaded: Object.keys(r.cache).some((k) => k.includes('/ioredis/')) }));",
      ],
      { cwd: root, encoding: 'utf8' },
    ),
  ) as { exports: string[]; ioredisLoaded: boolean };
  return esm;
}

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
    for (const name of MAIN) expect(importedFromEsm().exports).toContain(name);
  });
});

describe('the main entry does not load the Redis client', () => {
  it('import("agent-pep") leaves ioredis unloaded', () => {
    expect(importedFromEsm().ioredisLoaded).toBe(false);
  });
});

describe('the agent-pep bin', () => {
  it('runs as an executable through the package.json bin mapping, with --host and --port 0, and stops on SIGTERM', async () => {
    const { spawn } = await import('node:child_process');
    const { readFileSync } = await import('node:fs');
    const pkg = JSON.parse(readFileSync(`${root}/package.json`, 'utf8')) as { bin: Record<string, string> };
    const bin = `${root}/${pkg.bin['agent-pep']}`;
    const child = spawn(bin, ['dev-pdp', '--policy', 'demo/policy.json', '--host', '127.0.0.1', '--port', '0'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    const url = await new Promise<string>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('no URL printed')), 10_000);
      child.stdout.on('data', () => {
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m?.[1]) {
          clearTimeout(t);
          resolve(m[1]);
        }
      });
    });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${url}/.well-known/jwks.json`);
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    const code = await new Promise<number | null>((resolve) => {
      child.on('exit', (c) => resolve(c));
      child.kill('SIGTERM');
    });
    expect(code).toBe(0);
  });
});
