/**
 * Each host's hook settings with the fail-closed options it has (CONTRACT.md section 17; written out by
 * `agent-pep hook init <host>`, docs/cli.md). Pure: the settings as an object, and where they go.
 *
 * Every command is wrapped so that a hook that gave no answer (the binary missing, node missing, a crash
 * before it could print) still yields the host's explicit deny: the wrapper passes the hook's own
 * answer through untouched when there is one (exit 0 or 2 with output), and only otherwise prints the
 * host's deny JSON and a reason of its own. It calls the project's own binary
 * (`node_modules/.bin/agent-pep`), never `npx`, which costs about 0.93 s a call against 0.17 s.
 * With `http`, Claude Code posts to `agent-pep hook serve` itself (`"type": "http"`); the other hosts
 * run `curl --fail` to it in the same wrapper, so a refused connection, a non-2xx status or a timeout
 * is the host's deny.
 * @internal
 */
import { failedAnswer } from './answer.js';
import type { AnswerContext, HostName, HostWire } from './hosts/host.js';
import { HOSTS } from './hosts/index.js';
import type { HookEventName } from './wire.js';

/** What the settings point at. */
export interface SettingsOptions {
  /** The PDP's base URL. */
  pdp: string;
  /** The agent's id. */
  agent: string;
  /** `--api-key-env`, when the PDP needs a key. */
  apiKeyEnv?: string | undefined;
  /** The binary the command runs. */
  bin: string;
  /** Post to `agent-pep hook serve` at `http://127.0.0.1:<port>` instead of starting a process. */
  http: boolean;
  /** `hook serve`'s port. */
  port: number;
  /** The environment variable that carries `hook serve`'s token to the host (the host's user sets it). */
  tokenEnv: string;
}

/** The host's hook timeout the settings set, in seconds; the hook's own deadline (5 s) is half of it. */
export const HOST_TIMEOUT_S = 10;
/** The environment variable that carries `hook serve`'s token to the host. */
export const TOKEN_ENV = 'AGENT_PEP_HOOK_TOKEN';

/** Where each host reads project hook settings, relative to the project's root. */
export const SETTINGS_PATHS: Readonly<Record<HostName, string>> = Object.freeze({
  'claude-code': '.claude/settings.json',
  codex: '.codex/hooks.json',
  cursor: '.cursor/hooks.json',
  'gemini-cli': '.gemini/settings.json',
  'copilot-cli': '.github/hooks/agent-pep.json',
});

/** A string as one shell word (single quotes). */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`;
}

/** The command that asks: the process hook, or curl posting to `hook serve`. */
function innerCommand(wire: HostWire, o: SettingsOptions): string {
  if (o.http) {
    const url = `http://127.0.0.1:${o.port}/hooks/${wire.name}`;
    // The token reaches curl in a config file only this user can read (mktemp), never on a command
    // line another process could read (printf is the shell's own); the event is curl's stdin.
    return (
      `c=$(mktemp) || exit 1; printf 'header = "Authorization: Bearer %s"\\n' "$${o.tokenEnv}" > "$c"; ` +
      `curl -sS --fail --max-time ${HOST_TIMEOUT_S - 2} -K "$c" -H 'content-type: application/json' ` +
      `--data-binary @- ${url}; s=$?; rm -f "$c"; exit $s`
    );
  }
  const args = ['hook', wire.name, '--pdp', o.pdp, '--agent', o.agent];
  if (o.apiKeyEnv !== undefined) args.push('--api-key-env', o.apiKeyEnv);
  // The binary is written as given (it may start with a variable the host sets, "$CLAUDE_PROJECT_DIR").
  return [o.bin, ...args.map(shellQuote)].join(' ');
}

/**
 * The wrapped command for one event: the hook's answer when it gave one (exit 0 or 2 with output),
 * else the host's deny for that event, a reason on stderr, and the host's failure exit code.
 */
export function guardedCommand(wire: HostWire, o: SettingsOptions, context: AnswerContext): string {
  const deny = failedAnswer(wire, context, 'it gave no answer (not installed, or it stopped before answering)');
  const json = JSON.stringify(deny.stdout);
  return (
    `out=$(${innerCommand(wire, o)}); s=$?; ` +
    `if [ -n "$out" ] && { [ $s -eq 0 ] || [ $s -eq 2 ]; }; then printf '%s\\n' "$out"; exit $s; fi; ` +
    `echo 'agent-pep hook gave no answer (exit '$s'): the call is blocked' >&2; ` +
    `printf '%s\\n' ${shellQuote(json)}; exit ${deny.exitCode}`
  );
}

type Json = Record<string, unknown>;

function claudeLike(wire: HostWire, o: SettingsOptions, blockOnFailure: boolean): Json {
  const entry = (event: HookEventName): Json => {
    if (o.http && wire.name === 'claude-code') {
      return {
        type: 'http',
        url: `http://127.0.0.1:${o.port}/hooks/claude-code`,
        headers: { Authorization: `Bearer $${o.tokenEnv}` },
        allowedEnvVars: [o.tokenEnv],
        timeout: HOST_TIMEOUT_S,
        onFailure: 'block',
      };
    }
    const e: Json = {
      type: 'command',
      command: guardedCommand(wire, o, { event, native: event }),
      timeout: HOST_TIMEOUT_S,
    };
    if (blockOnFailure) e.onFailure = 'block';
    return e;
  };
  return {
    hooks: {
      PreToolUse: [{ matcher: '*', hooks: [entry('PreToolUse')] }],
      PostToolUse: [{ matcher: '*', hooks: [entry('PostToolUse')] }],
      UserPromptSubmit: [{ hooks: [entry('UserPromptSubmit')] }],
    },
  };
}

function cursorSettings(o: SettingsOptions): Json {
  const wire = HOSTS.cursor;
  const events: [string, HookEventName][] = [
    ['beforeShellExecution', 'PreToolUse'],
    ['beforeMCPExecution', 'PreToolUse'],
    ['beforeReadFile', 'PreToolUse'],
    ['beforeSubmitPrompt', 'UserPromptSubmit'],
    ['afterFileEdit', 'PostToolUse'],
  ];
  const hooks: Json = {};
  for (const [native, event] of events) {
    hooks[native] = [
      { command: guardedCommand(wire, o, { native, event }), timeout: HOST_TIMEOUT_S, failClosed: true },
    ];
  }
  return { version: 1, hooks };
}

function geminiSettings(o: SettingsOptions): Json {
  const wire = HOSTS['gemini-cli'];
  const entry = (native: string, event: HookEventName) => ({
    type: 'command',
    name: 'agent-pep',
    command: guardedCommand(wire, o, { native, event }),
    // milliseconds
    timeout: HOST_TIMEOUT_S * 1000,
  });
  return {
    hooks: {
      BeforeTool: [{ matcher: '.*', hooks: [entry('BeforeTool', 'PreToolUse')] }],
      AfterTool: [{ matcher: '.*', hooks: [entry('AfterTool', 'PostToolUse')] }],
      BeforeAgent: [{ hooks: [entry('BeforeAgent', 'UserPromptSubmit')] }],
    },
  };
}

function copilotSettings(o: SettingsOptions): Json {
  const wire = HOSTS['copilot-cli'];
  const bash = guardedCommand(wire, o, { native: 'preToolUse', event: 'PreToolUse' });
  return { version: 1, hooks: { preToolUse: [{ type: 'command', bash, cwd: '.', timeoutSec: HOST_TIMEOUT_S }] } };
}

/** The host's settings: an object to write at {@link SETTINGS_PATHS}. */
export function hostSettings(host: HostName, o: SettingsOptions): Json {
  switch (host) {
    case 'claude-code':
      return claudeLike(HOSTS['claude-code'], o, true);
    case 'codex':
      return claudeLike(HOSTS.codex, o, false);
    case 'cursor':
      return cursorSettings(o);
    case 'gemini-cli':
      return geminiSettings(o);
    default:
      return copilotSettings(o);
  }
}

/**
 * Settings merged into a host's existing file: each event's entries that run agent-pep (or post to
 * `/hooks/`) are replaced, every other entry and key is kept.
 */
export function mergeSettings(existing: Json, ours: Json): Json {
  const out: Json = { ...existing, ...Object.fromEntries(Object.entries(ours).filter(([k]) => k !== 'hooks')) };
  const hooks: Json = { ...((existing.hooks as Json | undefined) ?? {}) };
  for (const [event, entries] of Object.entries(ours.hooks as Json)) {
    const before = Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : [];
    const kept = before.filter(
      (e) => !JSON.stringify(e).includes('agent-pep') && !JSON.stringify(e).includes('/hooks/'),
    );
    hooks[event] = [...kept, ...(entries as unknown[])];
  }
  out.hooks = hooks;
  return out;
}
