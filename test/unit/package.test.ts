/** CONTRACT.md section 1: the package's shape, and the retry constants of section 3. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../src/index.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  name: string;
  type: string;
  engines: { node: string };
  exports: Record<string, unknown>;
  bin: Record<string, string>;
  dependencies: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
};

describe('package.json', () => {
  it('is the ESM package agent-pep for Node >= 20.19 with the three entry points and the bin', () => {
    expect(pkg.name).toBe('agent-pep');
    expect(pkg.type).toBe('module');
    expect(pkg.engines.node).toBe('>=20.19');
    for (const entry of ['.', './redis', './dev-pdp']) {
      expect(pkg.exports[entry]).toMatchObject({ types: expect.stringMatching(/\.d\.ts$/) });
    }
    expect(pkg.bin['agent-pep']).toBe('./dist/cli/main.js');
  });

  it('runtime dependencies are caret ranges (the lockfile pins what CI runs); every peer is optional', () => {
    expect(Object.keys(pkg.dependencies).sort()).toEqual([
      'canonicalize',
      'content-type',
      'jose',
      'lru-cache',
      'p-retry',
      'undici',
    ]);
    for (const v of Object.values(pkg.dependencies)) expect(v).toMatch(/^\^\d+\.\d+\.\d+$/);
    for (const peer of [
      'ioredis',
      'ai',
      'langchain',
      '@openai/agents',
      '@modelcontextprotocol/sdk',
      '@opentelemetry/api',
      '@agent-pep/dev-pdp',
      '@mastra/core',
      'agents',
    ]) {
      expect(pkg.peerDependencies?.[peer]).toBeDefined();
      expect(pkg.peerDependenciesMeta?.[peer]?.optional).toBe(true);
    }
  });
});

describe('retry constants', () => {
  it('backoff base is 100 ms (retry n waits at most 100 x 2^(n-1) ms), defaults as documented', () => {
    expect(DEFAULTS.backoffBaseMs).toBe(100);
    expect(DEFAULTS.timeoutMs).toBe(2000);
    expect(DEFAULTS.retries).toBe(2);
    expect(DEFAULTS.maxResponseBytes).toBe(65536);
    expect(DEFAULTS.clockToleranceSec).toBe(5);
    expect(DEFAULTS.maxPermitLifetimeSec).toBe(300);
  });
});
