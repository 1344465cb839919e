/**
 * `@opentelemetry/api` is an optional peer: the built package loads it only when the `telemetry`
 * option is given (needs `npm run build`; `npm test` builds first).
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../..', import.meta.url));

function probe(script: string): string {
  const prelude =
    "import { createRequire } from 'node:module'; const r = createRequire(import.meta.url); const loaded = () => Object.keys(r.cache).some((k) => k.includes('/@opentelemetry/api/')) ? 'loaded' : 'not-loaded';";
  return execFileSync(process.execPath, ['--input-type=module', '-e', `${prelude} ${script}`], {
    cwd: root,
    encoding: 'utf8',
  }).trim();
}

describe('the main entry loads @opentelemetry/api only with the telemetry option', () => {
  it('leaves it unloaded after import("agent-pep") and createPep without telemetry', () => {
    expect(
      probe(
        "const { createPep } = await import('agent-pep'); const p = createPep({ pdpUrl: 'http://127.0.0.1:9', agentId: 'a', session: 's' }); await p.checkInput(1); await p.close(); console.log(loaded());",
      ),
    ).toBe('not-loaded');
  });

  it('loads it when createPep is given telemetry: true', () => {
    expect(
      probe(
        "const { createPep } = await import('agent-pep'); const p = createPep({ pdpUrl: 'http://127.0.0.1:9', agentId: 'a', session: 's', telemetry: true }); await p.close(); console.log(loaded());",
      ),
    ).toBe('loaded');
  });
});
