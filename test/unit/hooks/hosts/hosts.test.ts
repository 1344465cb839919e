/**
 * Each host's wire (src/hooks/hosts/): recorded events of the host read into steps, and every kind of
 * answer rendered in the host's documented shape; whatever cannot be carried is a deny.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { contextOf, type HostWire } from '../../../../src/hooks/hosts/host.js';
import { HOSTS } from '../../../../src/hooks/hosts/index.js';
import { failureAnswer, type HookAnswer, HookEventError } from '../../../../src/hooks/wire.js';

const fixture = (name: string) =>
  JSON.parse(readFileSync(join(import.meta.dirname, '../../../fixtures/hooks', `${name}.json`), 'utf8')) as Record<
    string,
    unknown
  >;
const ok = (stdout: Record<string, unknown>): HookAnswer => ({ stdout, stderr: undefined, exitCode: 0 });
const allow = ok({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow' } });
const rewrite = (updatedInput: Record<string, unknown>) =>
  ok({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', updatedInput } });
const deny = ok({
  hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'no' },
});
const ask = ok({
  hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'ask', permissionDecisionReason: 'held' },
});
const block = ok({ decision: 'block', reason: 'blocked' });
const render = (wire: HostWire, name: string, answer: HookAnswer) =>
  wire.render(contextOf(wire.read(fixture(name))), answer);

describe('cursor', () => {
  const w = HOSTS.cursor;
  test('reads its events: the shell as tool Shell, MCP args from their JSON text, a file read as Read', () => {
    expect(w.read(fixture('cursor-before-shell-execution'))).toEqual({
      event: 'PreToolUse',
      native: 'beforeShellExecution',
      session: '668320d2-2fd8-4888-b33c-2a466fec86e7',
      tool: 'Shell',
      args: { command: 'rm -rf build', cwd: '/home/dev/shop' },
    });
    expect(w.read(fixture('cursor-before-mcp-execution'))).toMatchObject({
      tool: 'refund_payment',
      args: { orderId: 'ord_1842', amount: 129.5 },
    });
    expect(w.read(fixture('cursor-before-read-file'))).toMatchObject({
      tool: 'Read',
      args: { file_path: '/home/dev/shop/.env' },
    });
    expect(w.read(fixture('cursor-before-submit-prompt'))).toMatchObject({ event: 'UserPromptSubmit' });
    expect(w.read(fixture('cursor-after-file-edit'))).toMatchObject({ event: 'PostToolUse', tool: 'Edit' });
  });

  test('answers permission events with permission, user_message and agent_message', () => {
    expect(render(w, 'cursor-before-shell-execution', allow).stdout).toEqual({ permission: 'allow' });
    expect(render(w, 'cursor-before-shell-execution', deny).stdout).toEqual({
      permission: 'deny',
      user_message: 'no',
      agent_message: 'no',
      userMessage: 'no',
      agentMessage: 'no',
    });
    expect(render(w, 'cursor-before-shell-execution', ask).stdout).toMatchObject({ permission: 'ask' });
  });

  test('where Cursor cannot ask (beforeReadFile) or cannot rewrite (beforeShellExecution), a deny', () => {
    expect(render(w, 'cursor-before-read-file', ask).stdout).toMatchObject({ permission: 'deny' });
    expect(render(w, 'cursor-before-shell-execution', rewrite({ command: 'npm ci' })).stdout).toMatchObject({
      permission: 'deny',
    });
  });

  test('beforeSubmitPrompt: continue true, or continue false with the reason', () => {
    expect(render(w, 'cursor-before-submit-prompt', ok({})).stdout).toEqual({ continue: true });
    expect(render(w, 'cursor-before-submit-prompt', block).stdout).toEqual({
      continue: false,
      user_message: 'blocked',
      userMessage: 'blocked',
    });
  });

  test('a failure of the hook is a deny in every form Cursor reads, exit 2', () => {
    const a = w.render({}, failureAnswer('claude-code', undefined, 'bad'));
    expect(a.exitCode).toBe(2);
    expect(a.stdout).toMatchObject({ permission: 'deny', continue: false });
  });

  test.each([
    [{ hook_event_name: 'stop', conversation_id: 'c' }],
    [{ hook_event_name: 'beforeShellExecution', command: 'ls' }],
    [{ hook_event_name: 'beforeMCPExecution', conversation_id: 'c', tool_name: 't', tool_input: '{' }],
    [{ hook_event_name: 'beforeMCPExecution', conversation_id: 'c', tool_name: 't', tool_input: '[1]' }],
  ])('refuses an event it cannot read: %j', (event) => {
    expect(() => w.read(event)).toThrow(HookEventError);
  });
});

describe('gemini-cli', () => {
  const w = HOSTS['gemini-cli'];
  test('reads BeforeTool, AfterTool and BeforeAgent', () => {
    expect(w.read(fixture('gemini-cli-before-tool-shell'))).toMatchObject({
      event: 'PreToolUse',
      native: 'BeforeTool',
      tool: 'run_shell_command',
      args: { command: 'rm -rf build' },
    });
    expect(w.read(fixture('gemini-cli-after-tool-shell'))).toMatchObject({ event: 'PostToolUse', native: 'AfterTool' });
    expect(w.read(fixture('gemini-cli-before-agent'))).toMatchObject({ event: 'UserPromptSubmit' });
  });

  test('a deny, an ask (Gemini CLI has none) and a block are decision deny with the reason', () => {
    expect(render(w, 'gemini-cli-before-tool-shell', deny).stdout).toEqual({ decision: 'deny', reason: 'no' });
    expect(render(w, 'gemini-cli-before-tool-shell', ask).stdout).toEqual({ decision: 'deny', reason: 'held' });
    expect(render(w, 'gemini-cli-before-agent', block).stdout).toEqual({ decision: 'deny', reason: 'blocked' });
    expect(render(w, 'gemini-cli-after-tool-shell', block).stdout).toEqual({ decision: 'deny', reason: 'blocked' });
  });

  test('an allow leaves the host its own confirmation ({}); a rewrite merges only when it keeps every argument', () => {
    expect(render(w, 'gemini-cli-before-tool-shell', allow).stdout).toEqual({});
    const kept = { command: 'npm ci', description: 'Remove the build folder' };
    expect(render(w, 'gemini-cli-before-tool-shell', rewrite(kept)).stdout).toEqual({
      hookSpecificOutput: { hookEventName: 'BeforeTool', tool_input: kept },
    });
    expect(render(w, 'gemini-cli-before-tool-shell', rewrite({ command: 'npm ci' })).stdout).toMatchObject({
      decision: 'deny',
    });
  });
});

describe('copilot-cli', () => {
  const w = HOSTS['copilot-cli'];
  test('reads preToolUse in its camelCase form, toolArgs from their JSON text', () => {
    expect(w.read(fixture('copilot-cli-pre-tool-use-bash'))).toEqual({
      event: 'PreToolUse',
      native: 'preToolUse',
      session: '7b3e2f10-4c6d-4a8e-9f21-0d5c3b7a9e14',
      tool: 'bash',
      args: { command: 'rm -rf build', description: 'Remove the build folder' },
    });
  });

  test('answers permissionDecision; a rewrite is modifiedArgs; an allow is {}', () => {
    expect(render(w, 'copilot-cli-pre-tool-use-bash', deny).stdout).toEqual({
      permissionDecision: 'deny',
      permissionDecisionReason: 'no',
    });
    expect(render(w, 'copilot-cli-pre-tool-use-bash', allow).stdout).toEqual({});
    expect(render(w, 'copilot-cli-pre-tool-use-bash', rewrite({ command: 'npm ci' })).stdout).toEqual({
      permissionDecision: 'allow',
      modifiedArgs: { command: 'npm ci' },
    });
  });

  test('ESCALATE with --escalate ask is ask; Cursor asks only where it can (not on preToolUse)', () => {
    expect(render(w, 'copilot-cli-pre-tool-use-bash', ask).stdout).toEqual({
      permissionDecision: 'ask',
      permissionDecisionReason: 'held',
    });
    const cursorPre = { hook_event_name: 'preToolUse', conversation_id: 'c', tool_name: 'Shell', tool_input: {} };
    const c = HOSTS.cursor;
    expect(c.render(contextOf(c.read(cursorPre)), ask).stdout).toMatchObject({ permission: 'deny' });
    expect(c.render(contextOf(c.read(cursorPre)), rewrite({ command: 'x' })).stdout).toEqual({
      permission: 'allow',
      updated_input: { command: 'x' },
    });
  });

  test('a failure of the hook is a deny with exit code 0 (Copilot CLI lets a call through on any other)', () => {
    const a = w.render({}, failureAnswer('claude-code', undefined, 'bad'));
    expect(a.exitCode).toBe(0);
    expect(a.stdout).toMatchObject({ permissionDecision: 'deny' });
    expect(a.stderr).toContain('failed closed');
  });

  test.each([
    [{ sessionId: 's', toolName: 'bash', toolArgs: {}, toolResult: { resultType: 'success' } }],
    [{ sessionId: 's', prompt: 'hi' }],
    [{ toolName: 'bash', toolArgs: {} }],
    [{ hook_event_name: 'PreToolUse', session_id: 's', tool_name: 'bash', tool_input: {} }],
  ])('refuses an event it does not answer: %j', (event) => {
    expect(() => w.read(event)).toThrow(HookEventError);
  });
});

describe('claude-code and codex', () => {
  test('answer in the Claude Code wire as it is', () => {
    for (const w of [HOSTS['claude-code'], HOSTS.codex]) {
      expect(w.render({ event: 'PreToolUse' }, deny)).toBe(deny);
    }
  });
});
