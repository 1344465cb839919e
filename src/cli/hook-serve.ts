/**
 * `agent-pep hook serve`: the hook endpoint over HTTP (CONTRACT.md section 17, docs/cli.md). One warm
 * client on loopback answers `POST /hooks/<host>` with the JSON `agent-pep hook <host>` prints
 * (src/hooks/server.ts), until SIGINT or SIGTERM. The bearer token is made at start and written to
 * `--token-file` (mode 0600, a new file); it is never printed or logged. One log line per request unless
 * `--quiet`: time, host, event, what the answer said, status and milliseconds; never the event's
 * content, its args or the token.
 * @internal
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { DEFAULT_MAX_PENDING, type HookServeRecord, startHookServer } from '../hooks/server.js';
import { HOOK_FLAGS, hookPep, hookSettings } from './hook-options.js';
import type { CliIo } from './io.js';
import { EXIT, exitWith, integerFlag, parseCommandLine, systemReason, UsageError, usageExit } from './usage.js';

/** What `agent-pep hook serve --help` prints. */
export const USAGE = `Usage: agent-pep hook serve --pdp URL --agent ID [options]

Answers coding-agent hooks over HTTP until SIGINT or SIGTERM: POST /hooks/<host> (claude-code, codex,
cursor, gemini-cli, copilot-cli) with the event JSON the process hook reads is answered 200 with the
JSON 'agent-pep hook <host>' prints, decided through one warm client. A Claude Code HTTP hook
("type": "http", "onFailure": "block") posts to it directly ('agent-pep hook init claude-code --http').
Every request needs 'Authorization: Bearer <token>': the token is made at start and written to
--token-file (mode 0600), never printed. Without it: 401; another path: 404; another method: 405;
a body over 1 MiB: 413; more than --max-pending requests at once: 503 with the host's deny. Bad
input, a PDP failure and the deadline are the host's deny (200), as the process hook answers them.

Options:
  --pdp URL           the PDP's base URL (required)
  --agent ID          this agent's id (required)
  --port N            port to listen on, 0-65535 (default 8788; 0 picks a free one)
  --host ADDR         loopback address to bind: 127.0.0.1 (default), ::1 or localhost
  --token-file FILE   where the token is written (default ~/.agent-pep/hook-token); replaced at start
  --keep-token        reuse the token already in --token-file (a regular file of this user, mode 0600,
                      holding a token this command made) so a running host keeps working across a
                      restart; any other file is replaced by a new token
  --api-key-env VAR   read the PDP API key from env VAR (it must be set)
  --timeout MS        each request's deadline, 100-60000 (default 5000); keep it well under the
                      host's hook timeout
  --max-pending N     requests answered at once, 1-10000 (default ${DEFAULT_MAX_PENDING})
  --protocol P        agent-pep (default) or authzen (AuthZEN 1.0)
  --escalate MODE     ask or deny: what ESCALATE becomes where the host can ask (default: each
                      host's own, ask for claude-code)
  --quiet             no log line per request
  -h, --help          show this help

Prints 'agent-pep hook serve listening on <url>' when it is up. Exit codes: 0 after a stop, 2 a usage
error, 1 when it cannot listen.
`;

const COMMAND = 'hook serve';
const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/** The form of a token this command makes: 32 random bytes, base64url. */
const TOKEN_FORM = /^[A-Za-z0-9_-]{43}$/;

/**
 * The token of `file` when it can be trusted as this command's own (`--keep-token`): a regular file,
 * not a link, of this user, readable by no one else, holding one token of {@link TOKEN_FORM}; else undefined.
 */
function keptToken(file: string): string | undefined {
  try {
    const st = lstatSync(file);
    const mine = typeof process.getuid !== 'function' || st.uid === process.getuid();
    if (!st.isFile() || !mine || (st.mode & 0o077) !== 0 || st.size > 64) return undefined;
    const token = readFileSync(file, 'utf8');
    return TOKEN_FORM.test(token) ? token : undefined;
  } catch {
    return undefined;
  }
}

/** Writes the token to a new file only its owner can read (an old file is removed first, never followed). */
function writeToken(file: string, token: string): void {
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    rmSync(file, { force: true });
    writeFileSync(file, token, { mode: 0o600, flag: 'wx' });
    chmodSync(file, 0o600);
  } catch (error) {
    throw new UsageError(`--token-file ${file} cannot be written (${systemReason(error)})`);
  }
}

function logLine(r: HookServeRecord): string {
  const label = r.code === undefined ? r.label : `${r.label} (${r.code})`;
  return `${new Date().toISOString()} ${r.host ?? '-'} ${r.event ?? '-'} ${label} ${r.status} ${r.ms}ms\n`;
}

/** Runs the endpoint; resolves with the exit code once it has stopped (SIGINT or SIGTERM). */
export async function run(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine(COMMAND, {
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      ...HOOK_FLAGS,
      port: { type: 'string' },
      host: { type: 'string' },
      'token-file': { type: 'string' },
      'keep-token': { type: 'boolean' },
      'max-pending': { type: 'string' },
      quiet: { type: 'boolean' },
    },
  });
  if (values.help) {
    io.stdout.write(USAGE);
    return EXIT.ok;
  }
  let setup: Parameters<typeof startHookServer>[0];
  let tokenFile: string;
  try {
    if (positionals.length > 0) throw new UsageError('unexpected argument');
    const host = values.host ?? '127.0.0.1';
    if (!LOOPBACK.has(host)) throw new UsageError('--host must be a loopback address: 127.0.0.1, ::1 or localhost');
    const port = integerFlag(values.port, 'port', 0, 65_535) ?? 8788;
    const maxPending = integerFlag(values['max-pending'], 'max-pending', 1, 10_000) ?? DEFAULT_MAX_PENDING;
    const settings = hookSettings(values, io, 'pool');
    tokenFile = values['token-file'] ?? join(homedir(), '.agent-pep', 'hook-token');
    let token = values['keep-token'] ? keptToken(tokenFile) : undefined;
    if (token === undefined) {
      token = randomBytes(32).toString('base64url');
      writeToken(tokenFile, token);
    }
    const pep = hookPep(settings.pepOptions);
    setup = { pep, token, host, port, timeoutMs: settings.timeoutMs, escalate: settings.escalate, maxPending };
    if (!values.quiet) setup.onRecord = (r) => io.stdout.write(logLine(r));
  } catch (error) {
    usageExit(COMMAND, error instanceof Error ? error.message : 'bad arguments');
  }
  let server: Awaited<ReturnType<typeof startHookServer>>;
  try {
    server = await startHookServer(setup);
  } catch (error) {
    await setup.pep.close().catch(() => undefined);
    exitWith(`hook serve cannot listen on ${setup.host}:${setup.port} (${systemReason(error)})`, EXIT.failure);
  }
  // The stop handler is in place before the line that says it is up: a supervisor may signal at once.
  const stopped = new Promise<number>((resolve) => {
    io.onStop?.((signal) => {
      io.stdout.write(`${signal}: stopping\n`);
      void server.close().then(() => resolve(EXIT.ok));
    });
  });
  io.stdout.write(`agent-pep hook serve listening on ${server.url} (token in ${tokenFile})\n`);
  return stopped;
}
