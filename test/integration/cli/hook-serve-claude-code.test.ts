// The Claude Code binary the Agent SDK ships runs HTTP hooks ("type": "http", as `agent-pep hook init
// claude-code --http` writes them) against `hook serve` (src/hooks/server.ts), offline: a local stub of
// the Messages API proposes three Bash commands in one answer. The policy's BLOCK stops its command;
// an allowed command runs; a `hook serve` that has stopped blocks its command through
// `"onFailure": "block"`. The hooks that differ are scoped to their command by the hook's `if` rule.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { query } from '@anthropic-ai/claude-agent-sdk';
import { type DevPdp, startDevPdp } from 'agent-pep/dev-pdp';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type HookServeRecord, type HookServer, startHookServer } from '../../../src/hooks/server.js';
import { hostSettings, TOKEN_ENV } from '../../../src/hooks/settings.js';
import { createPep } from '../../../src/pep.js';
import { type AnthropicStub, offlineClaudeEnv, startAnthropicStub } from '../../support/anthropic-stub.js';
import { ROOT } from '../../support/processes.js';

const policy = JSON.parse(readFileSync(join(ROOT, 'examples/claude-code-hook/policy.json'), 'utf8')) as object;
const TOKEN = 'claude-code-http-hook-token';
let pdp: DevPdp;
let serve: HookServer;
let stopped: HookServer;
let stub: AnthropicStub;
let dir: string;
let home: string;
const records: HookServeRecord[] = [];
const victim = () => join(dir, 'victim');
const marker = (name: string) => join(dir, name);
// The proposed calls, in order.
const DENIED = 0;
const ALLOWED = 1;
const STOPPED = 2;

/** The HTTP hook entry `hook init claude-code --http` writes, pointed at `port`, scoped to one command. */
function httpHook(port: number, command: string): Record<string, unknown> {
  const settings = hostSettings('claude-code', {
    pdp: pdp.url,
    agent: 'coder',
    bin: 'unused',
    http: true,
    port,
    tokenEnv: TOKEN_ENV,
  }) as { hooks: { PreToolUse: [{ hooks: [Record<string, unknown>] }] } };
  return { ...settings.hooks.PreToolUse[0].hooks[0], if: `Bash(${command})` };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'agent-pep-http-hook-'));
  home = mkdtempSync(join(tmpdir(), 'agent-pep-http-hook-home-'));
  mkdirSync(victim());
  pdp = await startDevPdp({ policy, port: 0, log: false });
  const pep = () => createPep({ pdpUrl: pdp.url, agentId: 'coder', session: 's', permits: false });
  serve = await startHookServer({ pep: pep(), token: TOKEN, timeoutMs: 5000, onRecord: (r) => records.push(r) });
  stopped = await startHookServer({ pep: pep(), token: TOKEN, timeoutMs: 5000 });
  await stopped.close();
  const bash = (command: string) => ({ name: 'Bash', input: { command, description: 'test command' } });
  const commands = [`rm -rf ${victim()}`, `touch ${marker('marker-ok')}`, `touch ${marker('marker-stopped')}`];
  stub = await startAnthropicStub(commands.map(bash));
  try {
    for await (const _ of query({
      prompt: 'run the commands',
      options: {
        cwd: dir,
        settingSources: [],
        maxTurns: 3,
        allowedTools: ['Bash'],
        settings: {
          hooks: {
            PreToolUse: [
              {
                matcher: 'Bash',
                hooks: [
                  httpHook(serve.port, commands[DENIED] as string),
                  httpHook(serve.port, commands[ALLOWED] as string),
                  httpHook(stopped.port, commands[STOPPED] as string),
                ] as never,
              },
            ],
          },
        },
        env: { ...offlineClaudeEnv(stub, home), [TOKEN_ENV]: TOKEN },
      },
    })) {
      // drain
    }
  } finally {
    await stub.close();
  }
}, 120_000);

afterAll(async () => {
  await serve.close();
  await pdp.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

describe('Claude Code HTTP hooks against agent-pep hook serve', () => {
  const result = (i: number) => stub.toolResult(i) ?? '';

  test('the hooks reached hook serve with the token, and the model was sent a result for each call', () => {
    expect(records.filter((r) => r.status === 200 && r.event === 'PreToolUse').length).toBe(2);
    expect(records.some((r) => r.status === 401)).toBe(false);
    for (const i of [DENIED, ALLOWED, STOPPED]) expect(result(i)).not.toBe('');
  });

  test("the policy's BLOCK stops the command; the model sees the toolMessage", () => {
    expect(existsSync(victim())).toBe(true);
    expect(result(DENIED)).toContain('denied by policy: recursive deletes are not allowed');
  });

  test('an allowed command runs (the checks around it can fail)', () => {
    expect(existsSync(marker('marker-ok'))).toBe(true);
  });

  test('a hook serve that has stopped blocks the command (onFailure: "block")', () => {
    expect(existsSync(marker('marker-stopped'))).toBe(false);
    expect(result(STOPPED)).toContain('onFailure');
  });
});
