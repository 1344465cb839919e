/**
 * `agent-pep hook <host>`: answers one command hook of a coding-agent host (docs/adapters.md and
 * docs/cli.md): Claude Code, Codex, Cursor, Gemini CLI or GitHub Copilot CLI. Reads one hook event on
 * stdin, asks the PDP, prints the host's JSON answer. `agent-pep hook serve` (hook-serve.ts) answers the
 * same events over HTTP; `agent-pep hook init` (hook-init.ts) prints a host's settings.
 * It fails closed on its own errors: unreadable or oversized stdin, malformed JSON, an unknown event
 * kind, a PDP failure, its own deadline or any exception give the host's deny answer, the reason on
 * stderr and exit code 2 (0 for Copilot CLI, which lets a call through on any other exit code than 0).
 * @internal
 */
import { answerStep, failedAnswer, failureContext, type HostAnswer, parseEvent } from '../hooks/answer.js';
import { HOST_NAMES, type HostStep, type HostWire, hostWire } from '../hooks/hosts/index.js';
import { type HookAnswer, HookEventError } from '../hooks/wire.js';
import type { Pep } from '../pep.js';
import { escalateFor, HOOK_FLAGS, hookPep, hookSettings } from './hook-options.js';
import type { CliIo } from './io.js';
import { EXIT, parseCommandLine, systemReason, UsageError, usageExit } from './usage.js';

/** What `agent-pep hook --help` prints. */
export const USAGE = `Usage: agent-pep hook <host> --pdp URL --agent ID [options]
       agent-pep hook serve --pdp URL --agent ID [--port N] [--token-file FILE] [options]
       agent-pep hook init <host> [--http] [--write]

Answers one command hook of a coding agent: reads the hook event (JSON) on stdin, asks the PDP,
prints the host's answer on stdout. Hosts: ${HOST_NAMES.join(', ')}.
A tool call is the action stage (allow, deny, or ask on ESCALATE where the host can ask, with the
rewritten input on WARN where the host can take it); a prompt is input; a tool's output is
context_egress (withheld where the host can withhold it).
Fails closed: any error of its own (bad stdin, unknown event, PDP failure, deadline) is the host's
deny answer with the reason on stderr and exit code 2 (exit code 0 for copilot-cli, whose hooks let a
call through on any other code).

'hook serve' answers the same events over HTTP (agent-pep hook serve --help);
'hook init' prints a host's settings with its fail-closed options (agent-pep hook init --help).

Options:
  --pdp URL           the PDP's base URL (required)
  --agent ID          this agent's id (required)
  --api-key-env VAR   read the PDP API key from env VAR (it must be set)
  --timeout MS        the hook's whole deadline, stdin read included, 100-60000 (default 5000);
                      keep it well under the host's hook timeout
  --protocol P        agent-pep (default) or authzen (AuthZEN 1.0)
  --escalate MODE     ask or deny: what ESCALATE becomes (default ask for claude-code, whose prompt
                      is the approval; deny for the others); codex and gemini-cli cannot ask
  -h, --help          show this help

The session is the event's session id (conversation_id on Cursor). Exit codes: 0 an answer, 2 a usage
error or a failure of the hook itself (the host blocks the call).
`;

const COMMAND = 'hook';
/** Largest hook event read from stdin, in bytes (a tool result can be large; more is refused). */
export const MAX_EVENT_BYTES = 4 * 1024 * 1024;

interface HookConfig {
  wire: HostWire;
  pep: Pep;
  timeoutMs: number;
  escalate: 'ask' | 'deny';
}

/** The command line read into a config, or `undefined` after printing `--help`. */
function configure(argv: string[], io: CliIo): HookConfig | undefined {
  const { values, positionals } = parseCommandLine(COMMAND, {
    args: argv,
    strict: true,
    allowPositionals: true,
    options: HOOK_FLAGS,
  });
  if (values.help) {
    io.stdout.write(USAGE);
    return undefined;
  }
  try {
    const [host, ...extra] = positionals;
    const hosts = HOST_NAMES.join(', ');
    if (host === undefined) throw new UsageError(`a host is required: ${hosts}`);
    const wire = hostWire(host);
    if (wire === undefined)
      throw new UsageError(`unknown host ${JSON.stringify(host.slice(0, 40))}: expected ${hosts}`);
    if (extra.length > 0) throw new UsageError('unexpected argument after the host');
    const settings = hookSettings(values, io, 'node-http');
    const escalate = escalateFor(wire, settings.escalate);
    return { wire, pep: hookPep(settings.pepOptions), timeoutMs: settings.timeoutMs, escalate };
  } catch (error) {
    usageExit(COMMAND, error instanceof Error ? error.message : 'bad arguments');
  }
}

/** Reads `stdin` whole, at most `maxBytes`; rejects on an error or on more bytes. */
function readStdin(stdin: NodeJS.ReadableStream, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stdin.on('data', (data: Buffer | string) => {
      const chunk = typeof data === 'string' ? Buffer.from(data) : data;
      size += chunk.length;
      if (size > maxBytes) {
        stdin.pause();
        reject(new HookEventError(`the hook event is larger than ${maxBytes} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    stdin.once('end', () => resolve(Buffer.concat(chunks)));
    stdin.once('error', (error) => reject(new HookEventError(`stdin could not be read (${systemReason(error)})`)));
  });
}

/**
 * Runs the command: one event in, one answer out. Resolves with the exit code (0, or 2 when it failed
 * closed) once the answer is written; the bin then exits at once (src/cli/main.ts). `serve` and `init`
 * load their own modules.
 */
export async function run(argv: string[], io: CliIo): Promise<number> {
  if (argv[0] === 'serve') return (await import('./hook-serve.js')).run(argv.slice(1), io);
  if (argv[0] === 'init') return (await import('./hook-init.js')).run(argv.slice(1), io);
  const config = configure(argv, io);
  if (config === undefined) return 0;
  const { wire } = config;
  let step: HostStep | undefined;
  /** A PostToolUse event's tool_response once read, for the failure answer to withhold. */
  let response: unknown;
  let done = false;
  let answered!: (code: number) => void;
  const exitCode = new Promise<number>((resolve) => {
    answered = resolve;
  });

  const finish = (answer: HookAnswer): void => {
    if (done) return;
    done = true;
    if (answer.stderr !== undefined) io.stderr.write(`${answer.stderr}\n`);
    // An answer that could not be written (the host closed the pipe) was not given: the hook's own
    // error, exit 2, which the hosts read as a block (an allow is no allow unless it was read).
    io.stdout.write(`${JSON.stringify(answer.stdout)}\n`, (error) => answered(error ? EXIT.usage : answer.exitCode));
  };
  const fail = (error: unknown): void => {
    const reason = error instanceof HookEventError ? error.message : 'internal error';
    finish(failedAnswer(wire, failureContext(error, step), reason, response));
  };

  // Nothing of this process outlives the deadline: at it, a deny answer.
  const timer = setTimeout(() => fail(new HookEventError('the hook deadline passed', step?.event)), config.timeoutMs);
  io.onCrash?.(fail);
  void (async () => {
    try {
      const value = parseEvent(await readStdin(io.stdin, MAX_EVENT_BYTES), 'stdin');
      if (typeof value === 'object' && value !== null) response = (value as { tool_response?: unknown }).tool_response;
      step = wire.read(value);
      // Answered already (the deadline passed): the PDP is not asked.
      if (done) return;
      const r: HostAnswer = await answerStep(config.pep, wire, step, config.escalate);
      finish(r.answer);
    } catch (error) {
      fail(error);
    } finally {
      clearTimeout(timer);
      // The bin exits on the answer; run in a test's process, the client's connections are closed.
      await config.pep.close().catch(() => undefined);
    }
  })();
  return exitCode;
}
