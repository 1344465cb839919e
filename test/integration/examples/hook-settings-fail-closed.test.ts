/**
 * The hook settings of examples/claude-code-hook (the ones the README links) are what
 * `agent-pep hook init <host>` prints, so they carry each host's fail-closed options and never drift
 * from it; and where agent-pep is not installed, each command still gives the host's deny (a JSON
 * answer, not an exit code alone) with the host's failure exit code.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../../support/cli.js';
import { ROOT } from '../../support/processes.js';

type Json = Record<string, unknown>;
const FILES: [string, string[], Json][] = [
  ['claude-settings.json', ['claude-code', '--http'], {}],
  ['claude-settings-command.json', ['claude-code'], { hookSpecificOutput: { permissionDecision: 'deny' } }],
  ['codex-hooks.json', ['codex'], { hookSpecificOutput: { permissionDecision: 'deny' } }],
  ['cursor-hooks.json', ['cursor'], { permission: 'deny' }],
  ['gemini-settings.json', ['gemini-cli'], { decision: 'deny' }],
  ['copilot-hooks.json', ['copilot-cli'], { permissionDecision: 'deny' }],
];
const read = (file: string) => JSON.parse(readFileSync(join(ROOT, 'examples/claude-code-hook', file), 'utf8')) as Json;

function firstCommand(settings: Json): string | undefined {
  const first = Object.values(settings.hooks as Record<string, Json[]>)[0]?.[0] as Json;
  const entry = (Array.isArray(first.hooks) ? first.hooks[0] : first) as Json;
  return (entry.command ?? entry.bash) as string | undefined;
}

describe('the example hook settings', () => {
  it.each(FILES)('%s is what `agent-pep hook init %j` prints', async (file, args) => {
    const r = await runInProcess(['hook', 'init', ...args]);
    expect(r.code).toBe(0);
    expect(read(file)).toEqual(JSON.parse(r.stdout));
  });

  it.each(FILES.filter(([, args]) => !args.includes('--http')))(
    'where agent-pep is not installed, the first command of %s gives the host deny',
    (file, args, deny) => {
      const dir = mkdtempSync(join(tmpdir(), 'agent-pep-no-package-'));
      try {
        const r = spawnSync('sh', ['-c', firstCommand(read(file)) as string], {
          cwd: dir,
          input: readFileSync(join(ROOT, 'test/fixtures/hooks/claude-code-pre-tool-use-bash.json')),
          env: { ...process.env, CLAUDE_PROJECT_DIR: dir },
          encoding: 'utf8',
          timeout: 30_000,
        });
        expect(r.status).toBe(args[0] === 'copilot-cli' ? 0 : 2);
        expect(JSON.parse(r.stdout)).toMatchObject(deny);
        expect(r.stderr).toContain('agent-pep hook gave no answer');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
