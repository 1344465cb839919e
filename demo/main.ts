/**
 * agent-pep demo: guards real agent traffic offline. Starts the dev PDP (demo/policy.json) and a
 * side-effecting tool service on 127.0.0.1, replays demo/agent-traffic.jsonl through the five
 * stages, then shows fail-closed behaviour on the same traffic.
 *
 *   npm run demo                          summary, then the fail-closed checks
 *   npm run demo -- --verbose             also one line per case
 *   npm run demo -- --policy FILE         replay with another policy
 *   npm run demo --silent -- --json       the result as JSON on stdout
 *   npm run demo -- --review              then hold the escalated calls in the reviewer console
 *   npm run demo -- --without-wording     the same without the injection-wording latches
 *
 * Exit code: 0 when every fail-closed check held, 1 when one failed, 2 for bad usage, corpus or policy.
 * Policy misses (an attack let through, a benign case stopped) do not change the exit code.
 * @module
 */
import { pathToFileURL } from 'node:url';
import { CorpusError } from './corpus.js';
import { type CaseRow, type DemoResult, PolicyFileError, runDemo } from './replay.js';
import { failClosedText, progressText, summaryText, tableHeader, tableRow } from './report.js';
import { type HeldForReview, holdForReview, MAX_HELD } from './review.js';
import { DEFAULT_SESSION_FILES, runSessions, type SessionSplit } from './session-replay.js';
import { headlineText, sessionSummaryText, sessionTableHeader, sessionTableRow } from './session-report.js';

export const USAGE = `usage: npm run demo -- [--verbose | --quiet | --json] [--policy FILE] [--corpus FILE] [--sessions FILE]...
       [--split fit|held-out] [--concurrency N] [--sample N] [--without-wording] [--review]
       [--progress | --no-progress] [--help]

  With neither --corpus nor --sessions, replays demo/agent-traffic.jsonl (405 single steps),
  demo/agent-sessions.jsonl (147 whole agent sessions) and demo/agentdyn-sessions.jsonl (30 sessions
  from AgentDyn) and prints a short summary.

  --verbose         also print the tables, one line per case and one per session
  --quiet           print the summaries and the fail-closed checks only (no progress line)
  --json            write the result as JSON to stdout, nothing else: { cases, summary, failClosed }
                    for the cases, { sessions, summary } for one session file, { sessionReplays:
                    [{ file, sessions, summary }] } for several, and the cases with the sessions as
                    { cases, summary, failClosed, sessionReplays: [...] }
  --policy FILE     replay with this dev PDP policy (it must list the agent "support-ai");
                    default demo/policy.json
  --corpus FILE     replay the cases of FILE (JSON Lines, the format of demo/agent-traffic.jsonl,
                    see demo/CORPUS.md); only the cases unless --sessions is given too
  --sessions FILE   replay the sessions of FILE (JSON Lines, the format of demo/agent-sessions.jsonl,
                    see demo/CORPUS.md), each under its own session id; may be given more than once;
                    only the sessions unless --corpus is given too
  --split PART      replay only one part of the sessions, split by the SHA-256 of their ids:
                    fit (about two thirds) or held-out (the rest); default all
  --concurrency N   sessions replayed side by side, 1 to 64 (each one's steps always in order); default 4
  --sample N        replay a deterministic sample of N cases that spans every stage and label
  --without-wording replay without the policy's injection-wording latches (those that add the session
                    label "injected"): what the session rules stop on their own
  --review          replay the cases, then keep the dev PDP up with its reviewer console, hold the
                    escalated calls there, and run each call a person approves once (Ctrl-C stops)
  --progress        show the progress line on stderr even when it is not a terminal
  --no-progress     never show it (default: shown when stderr is a terminal, without --json or --quiet)
  --help            show this help`;

/** The parsed command line. */
export interface DemoArgs {
  json: boolean;
  quiet: boolean;
  verbose: boolean;
  /** true/false when forced by a flag, undefined to decide by the terminal. */
  progress: boolean | undefined;
  help: boolean;
  review?: boolean;
  withoutWording?: boolean;
  corpus?: string;
  sessions?: string[];
  policy?: string;
  sample?: number;
  split?: SessionSplit;
  concurrency?: number;
}

/** Parses the command line, or says what is wrong with it (one line). */
export function parseArgs(argv: readonly string[]): DemoArgs | { error: string } {
  const opts: DemoArgs = { json: false, quiet: false, verbose: false, progress: undefined, help: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? arg.split(/=(.*)/s, 2) : [arg, undefined];
    const value = (): string | undefined => inline ?? argv[++i];
    switch (flag) {
      case '--json':
        opts.json = true;
        break;
      case '--quiet':
        opts.quiet = true;
        break;
      case '--verbose':
      case '-v':
        opts.verbose = true;
        break;
      case '--review':
        opts.review = true;
        break;
      case '--without-wording':
        opts.withoutWording = true;
        break;
      case '--progress':
        opts.progress = true;
        break;
      case '--no-progress':
        opts.progress = false;
        break;
      case '--help':
      case '-h':
        opts.help = true;
        break;
      case '--corpus':
      case '--sessions':
      case '--policy': {
        const file = value();
        if (!file) return { error: `${flag} needs a file` };
        if (flag === '--sessions') opts.sessions = [...(opts.sessions ?? []), file];
        else opts[flag.slice(2) as 'corpus' | 'policy'] = file;
        break;
      }
      case '--split': {
        const part = value();
        if (part !== 'fit' && part !== 'held-out' && part !== 'all')
          return { error: '--split needs fit, held-out or all' };
        opts.split = part;
        break;
      }
      case '--concurrency': {
        const n = Number(value());
        if (!Number.isInteger(n) || n < 1 || n > 64)
          return { error: '--concurrency needs a whole number from 1 to 64' };
        opts.concurrency = n;
        break;
      }
      case '--sample': {
        const n = Number(value());
        if (!Number.isInteger(n) || n < 1) return { error: '--sample needs a whole number of cases, at least 1' };
        opts.sample = n;
        break;
      }
      default:
        return { error: `unknown argument: ${arg}` };
    }
  }
  return opts;
}

/** Where the demo writes: stdout for results, stderr for progress and problems. */
export interface DemoIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown; isTTY?: boolean };
}

/** A progress reporter on stderr: rewritten in place on a terminal, a line every tenth otherwise. */
function progressReporter(stderr: DemoIo['stderr']) {
  const tty = stderr.isTTY === true;
  let lastTenth = -1;
  return {
    onCase(done: number, total: number, row: { stage: string; id: string }): void {
      if (tty) {
        stderr.write(`\r\x1b[K${progressText(done, total, row)}`);
        return;
      }
      const tenth = Math.floor((done * 10) / total);
      if (tenth !== lastTenth) {
        lastTenth = tenth;
        stderr.write(`${progressText(done, total, row)}\n`);
      }
    },
    onReplayed(): void {
      stderr.write(tty ? '\r\x1b[Kfail-closed checks...' : 'fail-closed checks...\n');
    },
    clear(): void {
      if (tty) stderr.write('\r\x1b[K');
    },
  };
}

/** What one run replays: the cases, the sessions, or both (neither flag given). */
function modeOf(opts: DemoArgs): { cases: boolean; sessions: boolean } {
  const neither = opts.corpus === undefined && opts.sessions === undefined;
  return { cases: neither || opts.corpus !== undefined, sessions: neither || opts.sessions !== undefined };
}

/** The case replay, with the rows `--verbose` prints. */
async function replayCases(
  opts: DemoArgs,
  io: DemoIo,
  progress: ReturnType<typeof progressReporter> | undefined,
): Promise<{ result: DemoResult; rows: CaseRow[] }> {
  const rows: CaseRow[] = [];
  const result = await runDemo({
    ...(opts.corpus !== undefined ? { corpusPath: opts.corpus } : {}),
    ...(opts.policy !== undefined ? { policyPath: opts.policy } : {}),
    ...(opts.sample !== undefined ? { sample: opts.sample } : {}),
    ...(opts.withoutWording === true ? { withoutLabel: WORDING_LABEL } : {}),
    onMalformed: (line, reason) => io.stderr.write(`corpus line ${line} skipped: ${reason}\n`),
    onCase: (done, total, row) => {
      if (opts.verbose && !opts.quiet && !opts.json) rows.push(row);
      progress?.onCase(done, total, row);
    },
    onReplayed: () => progress?.onReplayed(),
    ...(opts.review === true ? { review: (done, held) => review(opts, io, { result: done, rows }, held) } : {}),
  });
  return { result, rows };
}

/** The session label the policy's injection-wording latches add; `--without-wording` leaves them out. */
export const WORDING_LABEL = 'injected';

/** The name a session file goes by in the output: its path as given, or the demo's file name. */
function fileName(file: string | URL): string {
  return typeof file === 'string' ? file : `demo/${file.pathname.split('/').at(-1) ?? ''}`;
}

/** The session replay of every file given (the default files when none), one after the other. */
async function replaySessions(
  opts: DemoArgs,
  io: DemoIo,
  progress: ReturnType<typeof progressReporter> | undefined,
): Promise<SessionRun[]> {
  const files: readonly (string | URL)[] = opts.sessions ?? DEFAULT_SESSION_FILES;
  const runs: SessionRun[] = [];
  for (const file of files) {
    const run = await runSessions({
      sessionsPath: file,
      ...(opts.policy !== undefined ? { policyPath: opts.policy } : {}),
      ...(opts.split !== undefined ? { split: opts.split } : {}),
      ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}),
      ...(opts.withoutWording === true ? { withoutLabel: WORDING_LABEL } : {}),
      onMalformed: (line, reason) => io.stderr.write(`session line ${line} skipped: ${reason}\n`),
      onSession: (done, total, row) => progress?.onCase(done, total, { stage: 'session', id: row.id }),
    });
    runs.push({ ...run, file: fileName(file) });
  }
  return runs;
}

/** One session file's replay, with the name the output gives it. */
type SessionRun = Awaited<ReturnType<typeof runSessions>> & { file: string };

/** Writes the result: JSON, or text (the headline when both ran, unless --verbose). */
function writeResult(
  opts: DemoArgs,
  io: DemoIo,
  cases: { result: DemoResult; rows: CaseRow[] } | undefined,
  sessions: readonly SessionRun[] | undefined,
): void {
  if (opts.json) {
    io.stdout.write(`${JSON.stringify(resultJson(cases?.result, sessions), null, 2)}\n`);
    return;
  }
  const details = opts.verbose && !opts.quiet;
  if (cases && sessions && !details && !opts.quiet) {
    io.stdout.write(`${headlineText(cases.result, sessions, opts.policy ?? 'demo/policy.json')}\n`);
    heldLine(opts, io, cases.result);
    return;
  }
  if (cases) {
    io.stdout.write(`${summaryText(cases.result)}\n\n`);
    if (cases.rows.length > 0) io.stdout.write(`${tableHeader()}\n${cases.rows.map(tableRow).join('\n')}\n\n`);
  }
  for (const run of sessions ?? []) {
    if (sessions && sessions.length > 1) io.stdout.write(`${run.file}\n`);
    io.stdout.write(`${sessionSummaryText(run)}\n\n`);
    if (details) io.stdout.write(`${sessionTableHeader()}\n${run.rows.map(sessionTableRow).join('\n')}\n\n`);
  }
  if (cases) io.stdout.write(`${failClosedText(cases.result)}\n`);
  if (cases) heldLine(opts, io, cases.result);
}

/**
 * The JSON `--json` prints: the case result, one session file's `{ sessions, summary }`, several files'
 * `{ sessionReplays: [{ file, sessions, summary }] }`, or the case result with `sessionReplays` beside it.
 */
export function resultJson(cases: DemoResult | undefined, sessions: readonly SessionRun[] | undefined): object {
  const replays = (sessions ?? []).map(({ file, sessions: s, summary }) => ({ file, sessions: s, summary }));
  if (cases) return replays.length > 0 ? { ...cases, sessionReplays: replays } : cases;
  const [only] = replays;
  return replays.length === 1 && only
    ? { sessions: only.sessions, summary: only.summary }
    : { sessionReplays: replays };
}

/** Says how many cases were held, and how a person approves the held tool calls (`--review`). */
export function heldText(result: DemoResult): string | undefined {
  const held = result.cases.filter((c) => c.verdict === 'ESCALATE');
  if (held.length === 0) return undefined;
  const calls = held.filter((c) => c.stage === 'action').length;
  const shown = Math.min(calls, MAX_HELD);
  return (
    `${held.length} cases were held for review (ESCALATE), ${calls} of them tool calls: ` +
    `npm run demo -- --review holds ${shown === calls ? `all ${calls}` : `the first ${shown}`} in the reviewer console for a person to approve or deny.`
  );
}

function heldLine(opts: DemoArgs, io: DemoIo, result: DemoResult): void {
  const text = heldText(result);
  if (text !== undefined && opts.review !== true) io.stdout.write(`\n${text}\n`);
}

/** --review: the report first, then the held calls wait in the console until resolved or Ctrl-C. */
async function review(
  opts: DemoArgs,
  io: DemoIo,
  cases: { result: DemoResult; rows: CaseRow[] },
  held: HeldForReview,
): Promise<void> {
  writeResult({ ...opts, review: false }, io, cases, undefined);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  try {
    await holdForReview(held, io.stdout, stop.signal);
  } finally {
    process.off('SIGINT', onSignal);
  }
}

/**
 * Runs the demo command line.
 * @returns the exit code: 0 every fail-closed check held, 1 one failed, 2 bad usage, corpus or policy
 */
export async function runCli(argv: readonly string[], io: DemoIo): Promise<number> {
  const opts = parseArgs(argv);
  if ('error' in opts) {
    io.stderr.write(`demo: ${opts.error} (see --help)\n`);
    return 2;
  }
  if (opts.help) {
    io.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const mode = modeOf(opts);
  const showProgress = opts.progress ?? (io.stderr.isTTY === true && !opts.json && !opts.quiet);
  const progress = showProgress ? progressReporter(io.stderr) : undefined;
  let cases: { result: DemoResult; rows: CaseRow[] } | undefined;
  let sessions: SessionRun[] | undefined;
  try {
    if (mode.cases) cases = await replayCases(opts, io, progress);
    progress?.clear();
    if (mode.sessions && opts.review !== true) sessions = await replaySessions(opts, io, progress);
  } catch (error) {
    progress?.clear();
    if (error instanceof CorpusError || error instanceof PolicyFileError) {
      io.stderr.write(`demo: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  progress?.clear();
  if (opts.review !== true) writeResult(opts, io, cases, sessions);
  return !cases || cases.result.failClosed.every((c) => c.passed) ? 0 : 1;
}

// `node build/demo/main.js` (what `npm run demo` runs).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // A reader that went away (`| head`: EPIPE) loses the rest of the output, never the exit code.
  process.stdout.on('error', () => {});
  runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr }).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`demo failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
