/**
 * The settings `agent-pep hook init` writes (src/hooks/settings.ts): one shell word per argument, the
 * guard's deny in the host's shape, and a merge that replaces only agent-pep's own entries.
 */
import { describe, expect, test } from 'vitest';
import { HOSTS } from '../../../src/hooks/hosts/index.js';
import { guardedCommand, hostSettings, mergeSettings, shellQuote } from '../../../src/hooks/settings.js';

const options = {
  pdp: 'http://127.0.0.1:8787',
  agent: "o'brien",
  bin: 'node_modules/.bin/agent-pep',
  http: false,
  port: 8788,
  tokenEnv: 'AGENT_PEP_HOOK_TOKEN',
};

describe('shellQuote', () => {
  test.each([
    ['coder', 'coder'],
    ['http://127.0.0.1:8787', 'http://127.0.0.1:8787'],
    ["o'brien", `'o'\\''brien'`],
    ['a b;rm -rf /', "'a b;rm -rf /'"],
    ['$(id)', "'$(id)'"],
  ])('%s is one shell word: %s', (s, quoted) => {
    expect(shellQuote(s)).toBe(quoted);
  });
});

describe('guardedCommand', () => {
  test('quotes every argument of the hook and ends in the host deny with its failure exit code', () => {
    const claude = guardedCommand(HOSTS['claude-code'], options, { event: 'PreToolUse' });
    expect(claude).toContain(
      `node_modules/.bin/agent-pep hook claude-code --pdp http://127.0.0.1:8787 --agent 'o'\\''brien'`,
    );
    expect(claude).toMatch(/"permissionDecision":"deny".*; exit 2$/);
    const copilot = guardedCommand(HOSTS['copilot-cli'], options, { event: 'PreToolUse' });
    expect(copilot).toMatch(/"permissionDecision":"deny".*; exit 0$/);
  });

  test('--http never puts the token on a command line', () => {
    const c = guardedCommand(HOSTS.codex, { ...options, http: true }, { event: 'PreToolUse' });
    expect(c).toContain('curl -sS --fail');
    expect(c).toContain('-K "$c"');
    expect(c).not.toMatch(/-H "Authorization/);
  });
});

describe('mergeSettings', () => {
  test('replaces the entries that run agent-pep, keeps every other entry and key', () => {
    const ours = hostSettings('codex', options);
    const mine = { type: 'command', command: './lint.sh' };
    const old = { hooks: [{ type: 'command', command: 'npx --no agent-pep@0.1.0 hook codex' }] };
    const merged = mergeSettings({ model: 'x', hooks: { PreToolUse: [{ hooks: [mine] }, old], Stop: [mine] } }, ours);
    expect(merged.model).toBe('x');
    const hooks = merged.hooks as Record<string, unknown[]>;
    expect(hooks.Stop).toEqual([mine]);
    expect(hooks.PreToolUse).toHaveLength(2);
    expect(hooks.PreToolUse?.[0]).toEqual({ hooks: [mine] });
    expect(JSON.stringify(hooks.PreToolUse?.[1])).toContain('node_modules/.bin/agent-pep hook codex');
  });
});
