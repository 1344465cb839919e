/**
 * `agent-pep hook init <host> [--http] [--write]`: prints (or writes) a host's hook settings with the
 * fail-closed options the host has (src/hooks/settings.ts, docs/cli.md): Claude Code `onFailure:
 * "block"` (HTTP to `hook serve`, or a command); Codex a JSON deny when the hook gave no answer; Cursor
 * `failClosed: true`; Gemini CLI and Copilot CLI the deny of the wrapper, with the hook's deadline half
 * the host's timeout (Copilot CLI lets a call through on a timeout).
 * @internal
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { HOST_NAMES, hostWire } from '../hooks/hosts/index.js';
import { hostSettings, mergeSettings, SETTINGS_PATHS, TOKEN_ENV } from '../hooks/settings.js';
import { decodeJsonBody } from '../wire/json.js';
import type { CliIo } from './io.js';
import { EXIT, integerFlag, parseCommandLine, systemReason, UsageError, usageExit } from './usage.js';

/** What `agent-pep hook init --help` prints. */
export const USAGE = `Usage: agent-pep hook init <host> [--http] [--write] [options]

Prints the hook settings of a host (${HOST_NAMES.join(', ')}) with its fail-closed options, or
with --write merges them into the host's project file (entries that run agent-pep are replaced).
Each command calls node_modules/.bin/agent-pep (not npx) inside a guard that prints the host's deny
only when the hook gave no answer (the binary or node missing, a crash before it printed).

  claude-code  .claude/settings.json   "onFailure": "block"; --http: "type": "http" to hook serve,
                                       the token from $${TOKEN_ENV}
  codex        .codex/hooks.json       a JSON deny when the hook gave no answer
  cursor       .cursor/hooks.json      "failClosed": true on every hook
  gemini-cli   .gemini/settings.json   BeforeTool, AfterTool, BeforeAgent
  copilot-cli  .github/hooks/agent-pep.json   preToolUse; every failure a deny with exit code 0

With --http the other hosts post the event with curl to hook serve (the token from $${TOKEN_ENV});
a refused connection, a non-2xx status or a timeout is the host's deny.

Options:
  --http              answer through 'agent-pep hook serve' instead of a process per event
  --write             write the settings into the host's file under the current directory
  --pdp URL           the PDP's base URL (default http://127.0.0.1:8787)
  --agent ID          this agent's id (default coder)
  --api-key-env VAR   pass --api-key-env VAR to the hook
  --port N            hook serve's port (default 8788)
  --bin PATH          the agent-pep binary (default node_modules/.bin/agent-pep; for claude-code
                      "$CLAUDE_PROJECT_DIR"/node_modules/.bin/agent-pep)
  -h, --help          show this help
`;

const COMMAND = 'hook init';

/** Runs the command: prints the settings, or writes them and prints the path. */
export async function run(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine(COMMAND, {
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      http: { type: 'boolean' },
      write: { type: 'boolean' },
      pdp: { type: 'string' },
      agent: { type: 'string' },
      'api-key-env': { type: 'string' },
      port: { type: 'string' },
      bin: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    io.stdout.write(USAGE);
    return EXIT.ok;
  }
  try {
    const [host, ...extra] = positionals;
    if (host === undefined) throw new UsageError(`a host is required: ${HOST_NAMES.join(', ')}`);
    const wire = hostWire(host);
    if (wire === undefined) throw new UsageError(`unknown host ${JSON.stringify(host.slice(0, 40))}`);
    if (extra.length > 0) throw new UsageError('unexpected argument after the host');
    const defaultBin =
      wire.name === 'claude-code' ? '"$CLAUDE_PROJECT_DIR"/node_modules/.bin/agent-pep' : 'node_modules/.bin/agent-pep';
    const settings = hostSettings(wire.name, {
      pdp: values.pdp ?? 'http://127.0.0.1:8787',
      agent: values.agent ?? 'coder',
      apiKeyEnv: values['api-key-env'],
      bin: values.bin ?? defaultBin,
      http: values.http === true,
      port: integerFlag(values.port, 'port', 1, 65_535) ?? 8788,
      tokenEnv: TOKEN_ENV,
    });
    if (!values.write) {
      io.stdout.write(`${JSON.stringify(settings, null, 2)}\n`);
      return EXIT.ok;
    }
    const file = resolve(SETTINGS_PATHS[wire.name]);
    let merged = settings;
    if (existsSync(file)) {
      const decoded = decodeJsonBody(readFileSync(file));
      if (!decoded.ok || typeof decoded.value !== 'object' || decoded.value === null || Array.isArray(decoded.value)) {
        throw new UsageError(`${SETTINGS_PATHS[wire.name]} is not a JSON object: not changed`);
      }
      merged = mergeSettings(decoded.value as Record<string, unknown>, settings);
    }
    try {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, `${JSON.stringify(merged, null, 2)}\n`);
    } catch (error) {
      throw new UsageError(`${SETTINGS_PATHS[wire.name]} cannot be written (${systemReason(error)})`);
    }
    io.stdout.write(`wrote ${SETTINGS_PATHS[wire.name]}\n`);
    return EXIT.ok;
  } catch (error) {
    usageExit(COMMAND, error instanceof Error ? error.message : 'bad arguments');
  }
}
