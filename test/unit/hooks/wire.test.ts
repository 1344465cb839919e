import { describe, expect, it, test } from 'vitest';
import { type PolicyDecision, synthesizeBlock } from '../../../src/decision.js';
import {
  answerFor,
  failureAnswer,
  HookEventError,
  type HookStep,
  isShapeKey,
  readHookEvent,
  responseText,
  withheld,
} from '../../../src/hooks/wire.js';

const pre: HookStep = { event: 'PreToolUse', session: 's', tool: 'Bash', args: { command: 'ls' } };
const post: HookStep = {
  event: 'PostToolUse',
  session: 's',
  tool: 'Bash',
  response: { stdout: 'a 555-123-4567', stderr: '' },
  content: '{"stdout":"a 555-123-4567","stderr":""}',
};
const prompt: HookStep = { event: 'UserPromptSubmit', session: 's', content: 'hi' };
const d = (verdict: PolicyDecision['verdict'], extra: Partial<PolicyDecision> = {}): PolicyDecision => ({
  verdict,
  stage: 'action',
  requestId: 'r',
  reason: 'because',
  ...extra,
});
const ask = { escalate: 'ask' } as const;

describe('readHookEvent', () => {
  test('reads the three event kinds into steps', () => {
    expect(
      readHookEvent({ hook_event_name: 'PreToolUse', session_id: 's', tool_name: 'Bash', tool_input: {} }),
    ).toEqual({
      event: 'PreToolUse',
      session: 's',
      tool: 'Bash',
      args: {},
    });
    expect(readHookEvent({ hook_event_name: 'UserPromptSubmit', session_id: 's', prompt: 'p' })).toEqual({
      event: 'UserPromptSubmit',
      session: 's',
      content: 'p',
    });
    const step = readHookEvent({
      hook_event_name: 'PostToolUse',
      session_id: 's',
      tool_name: 'T',
      tool_response: 'out',
    });
    expect(step).toMatchObject({ event: 'PostToolUse', content: 'out' });
  });

  test.each([
    [null, undefined],
    [{ hook_event_name: 'Stop', session_id: 's' }, undefined],
    [{ hook_event_name: 'toString', session_id: 's' }, undefined],
    [{ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: {} }, 'PreToolUse'],
    [{ hook_event_name: 'PreToolUse', session_id: 's', tool_name: '', tool_input: {} }, 'PreToolUse'],
    [{ hook_event_name: 'PreToolUse', session_id: 's', tool_name: 'Bash', tool_input: [] }, 'PreToolUse'],
    [{ hook_event_name: 'PostToolUse', session_id: 's', tool_name: 'Bash' }, 'PostToolUse'],
    [{ hook_event_name: 'UserPromptSubmit', session_id: 's', prompt: 1 }, 'UserPromptSubmit'],
  ])('refuses %j, naming the event kind when it was read', (value, event) => {
    try {
      readHookEvent(value);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(HookEventError);
      expect((err as HookEventError).event).toBe(event);
    }
  });

  test("the session is the host's session_id by the one rule (sessionOf): blank is none, a number is its text", () => {
    const event = (session_id: unknown) => ({ hook_event_name: 'UserPromptSubmit', session_id, prompt: 'p' });
    expect(readHookEvent(event('conv_1')).session).toBe('conv_1');
    expect(readHookEvent(event(42)).session).toBe('42');
    for (const none of ['', '   ', null, {}]) {
      expect(() => readHookEvent(event(none))).toThrow(HookEventError);
    }
  });

  test('a tool result is checked as text: a string as is, anything else as JSON', () => {
    expect(responseText('x')).toBe('x');
    expect(responseText({ a: 1 })).toBe('{"a":1}');
    expect(responseText(undefined)).toBe('');
  });
});

describe('answerFor: PreToolUse', () => {
  test('ALLOW: allow on Claude Code, {} on Codex (a bare allow is a hook failure there)', () => {
    expect(answerFor('claude-code', pre, d('ALLOW'), ask)).toEqual({
      stdout: { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow' } },
      stderr: undefined,
      exitCode: 0,
    });
    expect(answerFor('codex', pre, d('ALLOW'), ask).stdout).toEqual({});
  });

  test('WARN: allow with updatedInput = transformedArgs on both hosts', () => {
    for (const host of ['claude-code', 'codex'] as const) {
      const a = answerFor(host, pre, d('WARN', { transformedArgs: { command: 'ls -l' } }), ask);
      expect(a.stdout.hookSpecificOutput).toEqual({
        hookEventName: 'PreToolUse',
        permissionDecision: 'allow',
        updatedInput: { command: 'ls -l' },
      });
    }
  });

  test('ESCALATE: ask on Claude Code, deny with --escalate deny and always on Codex', () => {
    const held = "ERROR: Tool 'Bash' is held for human review: because";
    const spec = (a: ReturnType<typeof answerFor>) => a.stdout.hookSpecificOutput;
    expect(spec(answerFor('claude-code', pre, d('ESCALATE'), ask))).toMatchObject({
      permissionDecision: 'ask',
      permissionDecisionReason: held,
    });
    expect(spec(answerFor('claude-code', pre, d('ESCALATE'), { escalate: 'deny' }))).toMatchObject({
      permissionDecision: 'deny',
    });
    expect(spec(answerFor('codex', pre, d('ESCALATE'), ask))).toMatchObject({
      permissionDecision: 'deny',
      permissionDecisionReason: held,
    });
  });

  test('a PDP BLOCK exits 0; a synthesized BLOCK exits 2 with the reason on stderr', () => {
    expect(answerFor('codex', pre, d('BLOCK'), ask).exitCode).toBe(0);
    const failed = answerFor('codex', pre, synthesizeBlock('action', 'r', 'pdp_timeout', 'x', 1), ask);
    expect(failed.exitCode).toBe(2);
    expect(failed.stderr).toBe("ERROR: Tool 'Bash' was not run: the policy check failed (pdp_timeout)");
    expect(failed.stdout.hookSpecificOutput).toMatchObject({ permissionDecision: 'deny' });
    // Codex refuses these on PreToolUse (and would then fail open).
    expect(failed.stdout).not.toHaveProperty('continue');
    expect(failed.stdout).not.toHaveProperty('stopReason');
  });
});

describe('answerFor: text events', () => {
  test('ALLOW answers {}', () => {
    expect(answerFor('claude-code', prompt, d('ALLOW', { stage: 'input' }), ask).stdout).toEqual({});
    expect(answerFor('codex', post, d('ALLOW', { stage: 'context_egress' }), ask).stdout).toEqual({});
  });

  test('a prompt cannot be rewritten: WARN blocks it', () => {
    const a = answerFor('claude-code', prompt, d('WARN', { stage: 'input', transformedContent: 'x' }), ask);
    expect(a.stdout).toMatchObject({ decision: 'block' });
  });

  test('PostToolUse WARN replaces the output in its own shape on Claude Code, blocks on Codex', () => {
    const transformedContent = '{"stdout":"a [phone]","stderr":""}';
    const warn = d('WARN', { stage: 'context_egress', transformedContent });
    expect(answerFor('claude-code', post, warn, ask).stdout).toEqual({
      hookSpecificOutput: { hookEventName: 'PostToolUse', updatedToolOutput: { stdout: 'a [phone]', stderr: '' } },
    });
    expect(answerFor('codex', post, warn, ask).stdout).toMatchObject({ decision: 'block', continue: false });
    // A transformed text that is no longer JSON of the output's shape is a block, never the original.
    const broken = d('WARN', { stage: 'context_egress', transformedContent: '{"stdout": [phone' });
    expect(answerFor('claude-code', post, broken, ask).stdout).toMatchObject({ decision: 'block' });
  });

  test('PostToolUse BLOCK withholds every string of the output on Claude Code', () => {
    const a = answerFor('claude-code', post, d('BLOCK', { stage: 'context_egress' }), ask);
    expect(a.stdout).toEqual({
      decision: 'block',
      reason: "ERROR: context_egress blocked by policy: because (tool 'Bash')",
      hookSpecificOutput: {
        hookEventName: 'PostToolUse',
        updatedToolOutput: { stdout: '[withheld by policy]', stderr: '[withheld by policy]' },
      },
    });
  });
});

describe('answerFor: a withheld output keeps nothing of the original', () => {
  test('PostToolUse BLOCK withholds strings nested deeper than the shape is kept', () => {
    let response: unknown = { secret: 'ignore previous instructions' };
    for (let i = 0; i < 100; i++) response = { inner: i % 2 === 0 ? response : [response] };
    const step: HookStep = { event: 'PostToolUse', session: 's', tool: 'mcp__x__y', response, content: 'c' };
    const a = answerFor('claude-code', step, d('BLOCK', { stage: 'context_egress' }), ask);
    expect(JSON.stringify(a.stdout)).not.toContain('ignore previous instructions');
    expect(a.stdout).toMatchObject({ hookSpecificOutput: { hookEventName: 'PostToolUse' } });
  });
});

describe('withheld: a blocked output keeps its shape and none of its data', () => {
  test('strings and numbers are withheld (a number reads 0, so the shape the host checks holds); booleans, null and keys are kept', () => {
    const response = {
      customer: { name: 'Jane', card: 4111111111111111, vip: true, note: null },
      rows: [1.5, -2, 'x'],
    };
    const step: HookStep = { event: 'PostToolUse', session: 's', tool: 'mcp__crm__lookup', response, content: 'c' };
    const a = answerFor('claude-code', step, d('BLOCK', { stage: 'context_egress' }), ask);
    expect(JSON.stringify(a.stdout)).not.toContain('4111111111111111');
    expect((a.stdout.hookSpecificOutput as { updatedToolOutput: unknown }).updatedToolOutput).toEqual({
      customer: { name: '[withheld by policy]', card: 0, vip: true, note: null },
      rows: [0, 0, '[withheld by policy]'],
    });
  });
});

describe('withheld: keys that carry data', () => {
  test('a key that is not an identifier (a card number, an e-mail) is withheld too; identifier keys stay (the shape)', () => {
    const response = {
      cards: { '4111111111111111': { holder: 'Jane' } },
      byEmail: { 'jane@example.com': 3, 'joe@example.com': 4 },
    };
    const step: HookStep = { event: 'PostToolUse', session: 's', tool: 'mcp__crm__lookup', response, content: 'c' };
    const a = answerFor('claude-code', step, d('BLOCK', { stage: 'context_egress' }), ask);
    const text = JSON.stringify(a.stdout);
    expect(text).not.toContain('4111111111111111');
    expect(text).not.toContain('example.com');
    expect((a.stdout.hookSpecificOutput as { updatedToolOutput: unknown }).updatedToolOutput).toEqual({
      cards: { '[withheld by policy] 1': { holder: '[withheld by policy]' } },
      byEmail: { '[withheld by policy] 1': 0, '[withheld by policy] 2': 0 },
    });
  });
});

describe('failureAnswer', () => {
  test('a deny in the event form when its kind is known, else a generic block; always exit 2 with stderr', () => {
    const a = failureAnswer('claude-code', 'PreToolUse', 'the hook deadline passed');
    expect(a.exitCode).toBe(2);
    expect(a.stderr).toBe('ERROR: agent-pep hook failed closed: the hook deadline passed');
    expect(a.stdout.hookSpecificOutput).toMatchObject({ permissionDecision: 'deny' });
    expect(failureAnswer('codex', undefined, 'x').stdout).toEqual({
      decision: 'block',
      reason: 'ERROR: agent-pep hook failed closed: x',
    });
    expect(failureAnswer('codex', 'UserPromptSubmit', 'x').stdout).toEqual({
      decision: 'block',
      reason: 'ERROR: agent-pep hook failed closed: x',
    });
  });
});

describe('a withheld output keeps no secret-shaped keys', () => {
  it.each([
    'AKIAIOSFODNN7EXAMPLE',
    'ghp_16C7e42F292c6912E7710c838347Ae178B4a',
    'ghp_abcdefghijklmnopqrstuvwxyzabcdefghij',
    'sk_live_4eC39HqLyjWDarjtT1zdp7dc',
    'xoxb-123456789012-abc',
    '4111-1111-1111-1111',
    'ada@example.com',
  ])('%s is withheld as a key', (key) => {
    const out = JSON.stringify(withheld({ stdout: 'x', [key]: { nested: 1 } }));
    expect(out).not.toContain(key);
    expect(out).toContain('"stdout"');
  });

  it.each([
    'stdout',
    'stderr',
    'filePath',
    'is_error',
    'structuredPatch',
    'userID',
    'numLines',
    'x-request-id',
    'line2',
  ])('the output field %s is kept (the host needs the shape)', (key) => {
    expect(isShapeKey(key)).toBe(true);
  });
});

describe('the hook maps a decision by the enforcement rules', () => {
  const pre = { event: 'PreToolUse' as const, session: 's', tool: 'Bash', args: { command: 'ls' } };
  it('an ALLOW carrying transformedArgs (an interceptor replaced them) allows with exactly those args', () => {
    const a = answerFor(
      'claude-code',
      pre,
      { verdict: 'ALLOW', stage: 'action', requestId: 'r', transformedArgs: { command: 'ls -a' } },
      { escalate: 'ask' },
    );
    expect(a.stdout).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'allow',
        updatedInput: { command: 'ls -a' },
      },
    });
  });
  it('a simulated ALLOW is refused (code simulated), exit 2', () => {
    const a = answerFor(
      'claude-code',
      pre,
      { verdict: 'ALLOW', stage: 'action', requestId: 'r', simulated: true },
      { escalate: 'ask' },
    );
    expect(a.exitCode).toBe(2);
    expect(JSON.stringify(a.stdout)).toContain('(simulated)');
  });
  it('a text ALLOW carrying transformedContent (an interceptor replaced it) replaces the tool output', () => {
    const post = {
      event: 'PostToolUse' as const,
      session: 's',
      tool: 'Bash',
      response: 'SSN 123-45-6789',
      content: 'SSN 123-45-6789',
    };
    const a = answerFor(
      'claude-code',
      post,
      { verdict: 'ALLOW', stage: 'context_egress', requestId: 'r', transformedContent: 'SSN [ssn]' },
      { escalate: 'ask' },
    );
    expect(a.stdout).toEqual({ hookSpecificOutput: { hookEventName: 'PostToolUse', updatedToolOutput: 'SSN [ssn]' } });
  });
});

describe('a tool result is checked as the model reads it', () => {
  it('a string inside an object that holds line breaks is checked with real line breaks too', () => {
    const pem = '-----BEGIN PRIVATE KEY-----\nMIIEv\n-----END PRIVATE KEY-----';
    const text = responseText({ stdout: pem, exitCode: 0 });
    expect(text).toMatch(/^-----BEGIN PRIVATE KEY-----$/m);
    expect(text.startsWith(JSON.stringify({ stdout: pem, exitCode: 0 }))).toBe(true);
  });
  it('an MCP-shaped result is its text parts', () => {
    expect(
      responseText({
        content: [
          { type: 'text', text: 'a\nb' },
          { type: 'text', text: 'c' },
        ],
      }),
    ).toBe('a\nb\nc');
  });
});
