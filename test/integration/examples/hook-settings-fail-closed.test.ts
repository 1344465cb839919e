/**
 * The hook settings (examples/claude-code-hook, the same blocks as the README) pin the agent-pep
 * version they run and fail closed when the command is missing: `npx --no agent-pep@<version>` never
 * installs anything, and when it cannot run, the command exits 2 with a reason on stderr, which Claude
 * Code and Codex both read as a block (docs/adapters.md). Without the guard a missing package exits 1:
 * Claude Code without `onFailure: "block"` and Codex then run the tool.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../support/processes.js';

const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const FILES = ['examples/claude-code-hook/claude-settings.json', 'examples/claude-code-hook/codex-hooks.json'];

function commandsOf(file: string): string[] {
  const settings = JSON.parse(readFileSync(join(ROOT, file), 'utf8')) as {
    hooks: Record<string, Array<{ hooks: Array<{ command: string }> }>>;
  };
  return Object.values(settings.hooks).flatMap((groups) => groups.flatMap((g) => g.hooks.map((h) => h.command)));
}

describe('the hook settings pin their version and fail closed when the command is missing', () => {
  it.each(FILES)(
    'every command of %s runs agent-pep@<this version> with npx --no, then a guard that exits 2',
    (file) => {
      const commands = commandsOf(file);
      expect(commands.length).toBe(3);
      for (const command of commands) {
        expect(command).toMatch(new RegExp(`^npx --no agent-pep@${version.replaceAll('.', '\\.')} hook `));
        expect(command).toMatch(/ \|\| \{ echo '[^']+' >&2; exit 2; \}$/);
      }
    },
  );

  it.each(FILES)(
    'where agent-pep is not installed, the command of %s exits 2 with a reason on stderr',
    (file) => {
      const dir = mkdtempSync(join(tmpdir(), 'agent-pep-no-package-'));
      try {
        const command = commandsOf(file)[0] as string;
        const r = spawnSync('sh', ['-c', command], {
          cwd: dir,
          input: readFileSync(join(ROOT, 'test/fixtures/hooks/claude-code-pre-tool-use-bash.json')),
          // offline: npx must not reach a registry from a test; it fails as it does for a missing package
          env: { ...process.env, npm_config_offline: 'true', npm_config_update_notifier: 'false' },
          encoding: 'utf8',
          timeout: 60_000,
        });
        expect(r.status).toBe(2);
        expect(r.stderr).toContain('agent-pep hook did not run: the call is blocked');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    90_000,
  );
});
