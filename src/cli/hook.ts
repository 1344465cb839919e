/**
 * `agent-pep hook claude-code|codex`: answers one Claude Code or Codex command hook (docs/adapters.md and docs/cli.md). Reads one hook event on stdin, asks the PDP, prints the host's JSON answer.
 * It fails closed on its own errors: unreadable or oversized stdin, malformed JSON, an unknown event
 * kind, a PDP failure, its own deadline or any exception give a deny answer, the reason on stderr and
 * exit code 2 (both hosts block a call on exit 2 with a reason on stderr).
 * @internal
 */
import type { PolicyDecision } from '../decision.js';
import { kernelOf } from '../enforce/registry.js';
import {
  type AnswerOptions,
  answerAction,
  answerPostToolUse,
  answerPrompt,
  failureAnswer,
  type HookAnswer,
  HookEventError,
  type HookEventName,
  type HookHost,
  type HookStep,
  readHookEvent,
} from '../hooks/wire.js';
import type { PepOptions } from '../options/pep.js';
import { createPep, type Pep } from '../pep.js';
import { NodeHttpDispatcher } from '../transport/node-http.js';
import { decodeJsonBody } from '../wire/json.js';
import { apiKeyFromEnv, protocolFlag } from './input.js';
import type { CliIo } from './io.js';
import { EXIT, integerFlag, jsonPosition, parseCommandLine, systemReason, UsageError, usageExit } from './usage.js';

export const USAGE = `Usage: agent-pep hook claude-code|codex --pdp URL --agent ID [options]

Answers one Claude Code or Codex command hook: reads the hook event (JSON) on stdin, asks the PDP,
prints the host's answer on stdout. PreToolUse is the action stage (allow, deny, or ask on ESCALATE,
with updatedInput on WARN); UserPromptSubmit is input; PostToolUse is context_egress (block).
Fails closed: any error of its own (bad stdin, unknown event, PDP failure, deadline) is a deny
answer with the reason on stderr and exit code 2.

Options:
  --pdp URL           the PDP's base URL (required)
  --agent ID          this agent's id (required)
  --api-key-env VAR   read the PDP API key from env VAR (it must be set)
  --timeout MS        the hook's whole deadline, stdin read included, 100-60000 (default 5000);
                      keep it well under the host's hook timeout
  --protocol P        agent-pep (default) or authzen (AuthZEN 1.0)
  --escalate MODE     ask (default for claude-code: the host's prompt is the approval) or deny
                      (a deny with the held text); codex always denies (it has no ask)
  -h, --help          show this help

The session is the event's session_id. Exit codes: 0 an answer, 2 a usage error or a failure
of the hook itself (the host blocks the call).
`;

const COMMAND = 'hook';
const HOSTS: readonly HookHost[] = ['claude-code', 'codex'];
/** Largest hook event read from stdin, in bytes (a tool result can be large; more is refused). */
export const MAX_EVENT_BYTES = 4 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 5000;

interface HookConfig {
  host: HookHost;
  pep: Pep;
  timeoutMs: number;
  answer: AnswerOptions;
}

/** The command line read into a config, or `undefined` after printing `--help`. */
function configure(argv: string[], io: CliIo): HookConfig | undefined {
  const { values, positionals } = parseCommandLine(COMMAND, {
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      pdp: { type: 'string' },
      agent: { type: 'string' },
      'api-key-env': { type: 'string' },
      timeout: { type: 'string' },
      protocol: { type: 'string' },
      escalate: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    io.stdout.write(USAGE);
    return undefined;
  }
  try {
    const [host, ...extra] = positionals;
    if (host === undefined) throw new UsageError('a host is required: claude-code or codex');
    if (!(HOSTS as readonly string[]).includes(host)) {
      throw new UsageError(`unknown host ${JSON.stringify(host.slice(0, 40))}: expected claude-code or codex`);
    }
    if (extra.length > 0) throw new UsageError('unexpected argument after the host');
    if (values.pdp === undefined) throw new UsageError('--pdp URL is required');
    if (values.agent === undefined) throw new UsageError('--agent ID is required');
    const timeoutMs = integerFlag(values.timeout, 'timeout', 100, 60_000) ?? DEFAULT_TIMEOUT_MS;
    const protocol = protocolFlag(values.protocol);
    const escalate = values.escalate ?? (host === 'codex' ? 'deny' : 'ask');
    if (escalate !== 'ask' && escalate !== 'deny') throw new UsageError('--escalate must be ask or deny');
    if (host === 'codex' && escalate === 'ask') {
      throw new UsageError('--escalate ask is not possible with codex: its PreToolUse hook cannot ask');
    }
    const apiKey = values['api-key-env'] === undefined ? undefined : apiKeyFromEnv(values['api-key-env'], io.env);
    // The decision gets the deadline less a reserve for reading stdin and writing the answer.
    const options: PepOptions = {
      pdpUrl: values.pdp,
      agentId: values.agent,
      session: 'agent-pep-hook',
      apiKey,
      timeoutMs: Math.max(50, timeoutMs - Math.min(500, Math.floor(timeoutMs / 4))),
      permits: false,
      protocol,
      // node:http rather than undici's pool: one request per process, and undici costs a hook
      // process about a fifth of its start (issue 30). The same transport checks run on it.
      dispatcher: new NodeHttpDispatcher() as unknown as NonNullable<PepOptions['dispatcher']>,
    };
    let pep: Pep;
    try {
      pep = createPep(options);
    } catch (error) {
      const option = (error as { option?: unknown }).option;
      const flag = option === 'pdpUrl' ? '--pdp' : option === 'agentId' ? '--agent' : 'an option';
      throw new UsageError(`${flag}: ${error instanceof Error ? error.message.split('\n')[0] : 'invalid'}`);
    }
    return { host: host as HookHost, pep, timeoutMs, answer: { escalate } };
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

/** Reads the hook event with the one JSON body decoder (`wire/json.ts`: UTF-8 without a BOM, JSON, I-JSON). */
function parseEvent(bytes: Buffer): unknown {
  const d = decodeJsonBody(bytes);
  if (d.ok) return d.value;
  switch (d.problem) {
    case 'utf8':
      throw new HookEventError('the hook event is not valid UTF-8');
    case 'json': {
      const text = d.text ?? '';
      if (text.trim() === '') throw new HookEventError('the hook event is not JSON: stdin is empty');
      throw new HookEventError(`the hook event is not JSON${jsonPosition(text)}`);
    }
    case 'duplicate':
      // I-JSON: a name given twice reads one way here (the last wins) and may read another way to the host
      throw new HookEventError('the hook event names a member twice');
    default:
      // Values are read by the step that uses them: an output too deep to read is answered in the
      // host's PostToolUse form, its output withheld (docs/adapters.md).
      return d.value;
  }
}

/**
 * The step through the enforcement layer every adapter uses (docs/adapters.md), and the host's answer:
 * PreToolUse decided as an action, UserPromptSubmit as input, PostToolUse through the `after` chain and
 * the context_egress check of the output as the model reads it.
 */
async function decideAndAnswer(config: HookConfig, step: HookStep): Promise<HookAnswer> {
  const enforcement = kernelOf(config.pep);
  if (enforcement === undefined) throw new Error('the client has no enforcement layer');
  const opts = { session: step.session };
  switch (step.event) {
    case 'PreToolUse': {
      const r = await enforcement.decideAction(step.tool, step.args, opts);
      return withFailureDetail(answerAction(config.host, step, r, config.answer), r.decision);
    }
    case 'PostToolUse': {
      const ran = { args: step.args ?? {}, session: step.session, signal: undefined };
      const r = await enforcement.finishAction(step.tool, ran, step.response, true);
      return withFailureDetail(answerPostToolUse(config.host, step, r), r.kind === 'refused' ? r.decision : undefined);
    }
    default: {
      const r = await enforcement.decideText('input', step.content, opts);
      return withFailureDetail(answerPrompt(config.host, step, r), r.decision);
    }
  }
}

/**
 * Runs the command: one event in, one answer out. Resolves with the exit code (0, or 2 when it failed
 * closed) once the answer is written; the bin then exits at once (src/cli/main.ts).
 */
export async function run(argv: string[], io: CliIo): Promise<number> {
  const config = configure(argv, io);
  if (config === undefined) return 0;
  const { host } = config;
  let event: HookEventName | undefined;
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
    // error, exit 2, which both hosts read as a block (an allow is no allow unless it was read).
    io.stdout.write(`${JSON.stringify(answer.stdout)}\n`, (error) => answered(error ? EXIT.usage : answer.exitCode));
  };
  const fail = (error: unknown): void => {
    const reason = error instanceof HookEventError ? error.message : 'internal error';
    finish(failureAnswer(host, error instanceof HookEventError ? (error.event ?? event) : event, reason, response));
  };

  // Nothing of this process outlives the deadline: at it, a deny answer and exit 2.
  const timer = setTimeout(() => fail(new HookEventError('the hook deadline passed')), config.timeoutMs);
  io.onCrash?.(fail);
  void (async () => {
    try {
      const value = parseEvent(await readStdin(io.stdin, MAX_EVENT_BYTES));
      if (typeof value === 'object' && value !== null) response = (value as { tool_response?: unknown }).tool_response;
      const step = readHookEvent(value);
      event = step.event;
      // Answered already (the deadline passed): the PDP is not asked.
      if (done) return;
      finish(await decideAndAnswer(config, step));
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

/**
 * A failed-closed answer's stderr line (exit 2) with what the PEP knows of the failure: the
 * synthesized BLOCK's message, which names the PDP's error code (`unknown_agent`, `not_found`) and
 * the URL tried, so a misconfiguration says what it is (docs/cli.md). Never args, content or a key.
 */
function withFailureDetail(answer: HookAnswer, decision: PolicyDecision | undefined): HookAnswer {
  const detail = decision?.synthesized?.message;
  if (answer.stderr === undefined || detail === undefined || detail === '') return answer;
  return { ...answer, stderr: `${answer.stderr}: ${detail.split('\n')[0]}` };
}
