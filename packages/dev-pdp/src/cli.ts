/**
 * `agent-pep dev-pdp --policy FILE`: runs the local reference PDP (docs/dev-pdp.md) until
 * SIGINT or SIGTERM. Exit codes: 0 on a clean stop, 2 for a usage error or a bad policy, 1 when the
 * server cannot run.
 * @internal
 */
import { stat } from 'node:fs/promises';
import type { CliIo } from 'agent-pep/internal';
import {
  deadlineIn,
  decodeJsonOrUsage,
  EXIT,
  exitWith,
  integerFlag,
  LATE,
  parseCommandLine,
  race,
  readFileOrUsage,
  UsageError,
  usageExit,
} from 'agent-pep/internal';
import { type DevPdp, type DevPdpOptions, type EvidenceRecord, InvalidPolicyError, startDevPdp } from './index.js';

/** `agent-pep check-policy` (check-policy-cli.ts), loaded by the SDK's bin through this module. */
export { run as runCheckPolicy } from './check-policy-cli.js';

export const USAGE = `Usage: agent-pep dev-pdp --policy FILE [options]

Runs the local reference PDP (agent-pep/dev-pdp) until SIGINT or SIGTERM.

Options:
  --policy FILE     policy JSON file (required); its JSON Schema, for "$schema", is
                    node_modules/@agent-pep/dev-pdp/schema/policy.schema.json
  --known-tools LIST
                    the agent's tool names, comma-separated (may be repeated): refuse to
                    start (exit 2) when a latch's tool can never match one of them
  --host HOST       interface to listen on (default 127.0.0.1)
  --port N          TCP port, 0 for any free port (default 8787)
  --api-key KEY     require "authorization: Bearer KEY" (default: env PDP_API_KEY, else none)
  --reviewer-key-env VAR
                    read the reviewer key from env VAR (default: env PDP_REVIEWER_KEY); it
                    signs in to the reviewer console at /console and authorizes
                    POST /api/escalations/{id}; it must differ from the API key
  --approval-ttl SEC
                    how long an approval waits for its identical call (default 900)
  --escalation-ttl SEC
                    an escalation not resolved in time is denied (default 3600)
  --notify URL      POST { escalationId, agentId, session, tool, reason, consoleUrl } to URL
                    when an escalation opens (best effort, within 3 s)
  --evidence FILE   also write the evidence log as JSON Lines to FILE (new or empty)
  --audience AUD    the permits' aud claim (default agent-pep)
  --tool-audience PATTERN=AUD
                    permits for tools matching PATTERN (e.g. refund_*) get aud AUD: one
                    audience per service (may be repeated; the first match wins)
  --ttl SEC         permit lifetime in seconds, 1-300 (default 60)
  --key FILE        Ed25519 private key (JWK JSON or PKCS#8 PEM) instead of a fresh one
  --session-store URL
                    keep session state in Redis (redis://host:port), shared by every PDP
                    started with the same URL (default: this process's memory); needs ioredis
  --max-history N   decided steps kept per session, 1-100000 (default 256)
  --session-ttl SEC a session expires SEC seconds after its last step (default 3600)
  --quiet           do not log one line per decision
  -h, --help        show this help

Environment:
  PDP_API_KEY       the API key, when --api-key is not given
  PDP_REVIEWER_KEY  the reviewer key (console and POST /api/escalations/{id}); without one both
                    answer 404 (an agent can never approve its own escalation)
`;

const COMMAND = 'dev-pdp';

/** The session options the flags give (docs/dev-pdp.md, Sessions). */
type SessionFlags = Pick<DevPdpOptions, 'sessionStore' | 'maxHistory' | 'sessionTtlSec'>;

/** Reads `--session-store`, `--max-history` and `--session-ttl`. @throws UsageError */
function sessionFlags(values: Record<string, string | string[] | boolean | undefined>): SessionFlags {
  const out: SessionFlags = {};
  const store = values['session-store'];
  if (typeof store === 'string') out.sessionStore = { redis: store };
  const maxHistory = integerFlag(values['max-history'] as string | undefined, 'max-history', 1, 100_000);
  if (maxHistory !== undefined) out.maxHistory = maxHistory;
  const ttl = integerFlag(values['session-ttl'] as string | undefined, 'session-ttl', 1, 30 * 24 * 3600);
  if (ttl !== undefined) out.sessionTtlSec = ttl;
  return out;
}

/** One line per evidence record (decisions and reviews), never content or args. */
function recordLine(record: EvidenceRecord): string {
  if (record.stage === 'review')
    return `${record.seq} review ${record.outcome} ${record.escalationId} by ${record.by}\n`;
  const what = record.tool !== undefined ? ` ${record.tool}` : '';
  const latches = record.latches.length > 0 ? ` [${record.latches.join(', ')}]` : '';
  const simulated = record.simulated ? ' (simulated)' : '';
  // an ESCALATE names its escalation: the id POST /api/escalations/{id} takes
  const id = record.escalationId ?? record.decisionId;
  return `${record.seq} ${record.verdict} ${record.stage}${what}${latches}${simulated} ${id}\n`;
}

/** The flags of `dev-pdp`, as `parseArgs` takes them. */
const FLAGS = {
  policy: { type: 'string' },
  'known-tools': { type: 'string', multiple: true },
  host: { type: 'string' },
  port: { type: 'string' },
  'api-key': { type: 'string' },
  'reviewer-key-env': { type: 'string' },
  'approval-ttl': { type: 'string' },
  'escalation-ttl': { type: 'string' },
  notify: { type: 'string' },
  evidence: { type: 'string' },
  audience: { type: 'string' },
  'tool-audience': { type: 'string', multiple: true },
  ttl: { type: 'string' },
  key: { type: 'string' },
  'session-store': { type: 'string' },
  'max-history': { type: 'string' },
  'session-ttl': { type: 'string' },
  quiet: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The flags as parsed. */
type DevPdpFlags = ReturnType<typeof parseCommandLine<{ options: typeof FLAGS }>>['values'];

/** The checked flags, before the policy file is read. */
interface Checked {
  policyPath: string;
  port: number | undefined;
  ttl: number | undefined;
  sessions: SessionFlags;
  approvalTtl: number | undefined;
  escalationTtl: number | undefined;
  toolAudiences: Record<string, string> | undefined;
}

/** Checks the flags that need no file: the policy's path, numbers in range, tool audiences. @throws UsageError */
function checkFlags(values: DevPdpFlags): Checked {
  const toolAudiences = toolAudienceFlags(values['tool-audience']);
  if (values.policy === undefined) throw new UsageError('--policy FILE is required');
  return {
    policyPath: values.policy,
    port: integerFlag(values.port, 'port', 0, 65535),
    ttl: integerFlag(values.ttl, 'ttl', 1, 300),
    sessions: sessionFlags(values),
    approvalTtl: integerFlag(values['approval-ttl'], 'approval-ttl', 1, 604_800),
    escalationTtl: integerFlag(values['escalation-ttl'], 'escalation-ttl', 1, 604_800),
    toolAudiences,
  };
}

/**
 * Exits with a usage error when `--evidence` names a file that already holds records. The library
 * refuses such a log too; here it is a usage error that names the flag and a fresh name.
 */
async function refuseUsedLog(evidencePath: string | undefined): Promise<void> {
  const existing = evidencePath === undefined ? undefined : await stat(evidencePath).catch(() => undefined);
  if (existing?.isFile() && existing.size > 0) {
    usageExit(
      COMMAND,
      `--evidence ${evidencePath} already holds records (a log is one chain, from one start): start afresh with a new file, --evidence ${await freshLogName(evidencePath as string)}, or move the old log away (keep it and its JWKS for evidence verify)`,
    );
  }
}

/** The policy file, decoded by the one JSON body decoder; a usage exit when it cannot be read or is not I-JSON. */
async function readPolicy(policyPath: string): Promise<unknown> {
  const what = `the policy file ${policyPath}`;
  try {
    return decodeJsonOrUsage(what, await readFileOrUsage(policyPath, what));
  } catch (error) {
    usageExit(COMMAND, (error as Error).message);
  }
}

/** The options of `startDevPdp` the flags, the environment and the policy give. */
function devPdpOptions(values: DevPdpFlags, checked: Checked, policy: unknown, io: CliIo): DevPdpOptions {
  const apiKey = values['api-key'] ?? (io.env.PDP_API_KEY || undefined);
  const reviewerApiKey = reviewerKeyOf(values, io);
  const { port, ttl, approvalTtl, escalationTtl, toolAudiences } = checked;
  return {
    policy,
    ...knownToolsOf(values['known-tools']),
    host: values.host ?? '127.0.0.1',
    port: port ?? 8787,
    ...(apiKey !== undefined ? { apiKey } : {}),
    ...(reviewerApiKey !== undefined ? { reviewerApiKey, console: true } : {}),
    ...(approvalTtl !== undefined ? { approvalTtlSec: approvalTtl } : {}),
    ...(escalationTtl !== undefined ? { escalationTtlSec: escalationTtl } : {}),
    ...(values.notify !== undefined ? { notifyUrl: values.notify } : {}),
    ...(values.evidence !== undefined ? { evidencePath: values.evidence } : {}),
    ...(values.audience !== undefined ? { audience: values.audience } : {}),
    ...(toolAudiences !== undefined ? { toolAudiences } : {}),
    ...(ttl !== undefined ? { permitTtlSec: ttl } : {}),
    ...(values.key !== undefined ? { key: values.key } : {}),
    ...checked.sessions,
    ...(values.quiet === true
      ? {}
      : { onDecision: (record: EvidenceRecord) => void io.stdout.write(recordLine(record)) }),
  };
}

/** `knownTools` from the `--known-tools` flags: comma-separated names, blanks dropped. */
function knownToolsOf(flags: string[] | undefined): Pick<DevPdpOptions, 'knownTools'> {
  if (flags === undefined) return {};
  const knownTools = flags
    .flatMap((flag) => flag.split(','))
    .map((t) => t.trim())
    .filter((t) => t.length > 0);
  if (knownTools.length === 0) usageExit(COMMAND, '--known-tools names no tool');
  return { knownTools };
}

/** The reviewer key: from `--reviewer-key-env VAR` (a usage exit when VAR is unset), else `PDP_REVIEWER_KEY`. */
function reviewerKeyOf(values: DevPdpFlags, io: CliIo): string | undefined {
  const reviewerEnv = values['reviewer-key-env'];
  if (reviewerEnv !== undefined && !io.env[reviewerEnv]) {
    usageExit(COMMAND, `--reviewer-key-env: the environment variable ${reviewerEnv} is not set`);
  }
  return io.env[reviewerEnv ?? 'PDP_REVIEWER_KEY'] || undefined;
}

/**
 * Starts the dev PDP, or exits: 2 for an invalid policy (one line per problem) or a bad option, 1 when
 * the server cannot run (a port in use says what to do about it).
 */
async function start(options: DevPdpOptions, policyPath: string): Promise<DevPdp> {
  try {
    return await startDevPdp(options);
  } catch (error) {
    if (error instanceof InvalidPolicyError) {
      // A policy can have several problems: the first line names the file, one line per problem follows.
      exitWith(
        `invalid policy ${policyPath}:\n${error.issues.map((i) => `  ${i.path}${i.latch !== undefined ? ` (latch ${i.latch})` : ''}: ${i.message}`).join('\n')}`,
        EXIT.usage,
      );
    }
    if (error instanceof TypeError) usageExit(COMMAND, error.message);
    const code = (error as { code?: unknown } | null)?.code;
    // A port in use is the common case (a dev PDP already running): say what to do about it.
    const what =
      code === 'EADDRINUSE'
        ? `${options.host}:${options.port} is in use: stop what listens there, or pass another --port (0 for any free port)`
        : (error as Error).message;
    exitWith(`cannot start the dev PDP${typeof code === 'string' ? ` (${code})` : ''}: ${what}`, EXIT.failure);
  }
}

/** How long a stop on SIGINT or SIGTERM waits for the server to drain and close before the process exits 1. */
const STOP_DEADLINE_MS = 15_000;

/** How long a drain waits for the requests in flight before it closes anyway. */
const DRAIN_MS = 10_000;

/**
 * On the first SIGINT or SIGTERM: drains (no new decision, every one in flight answered), closes the
 * server and exits the process, 0 once closed, 1 when closing fails or takes past {@link STOP_DEADLINE_MS}.
 */
function stopOnSignals(pdp: DevPdp, io: CliIo): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    io.stdout.write(`${signal}: draining\n`);
    race(pdp.drain(DRAIN_MS), deadlineIn(STOP_DEADLINE_MS)).then(
      (closed) => process.exit(closed === LATE ? EXIT.failure : EXIT.ok),
      () => process.exit(EXIT.failure),
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

/**
 * Runs the command; resolves with 0 once the server is up (the process then lives until SIGINT or
 * SIGTERM, which stop the server and exit the process).
 */
export async function run(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseCommandLine(COMMAND, { args: argv, strict: true, allowPositionals: false, options: FLAGS });
  if (values.help) {
    io.stdout.write(USAGE);
    return EXIT.ok;
  }
  let checked: Checked;
  try {
    checked = checkFlags(values);
  } catch (error) {
    usageExit(COMMAND, (error as Error).message);
  }
  await refuseUsedLog(values.evidence);
  const policy = await readPolicy(checked.policyPath);
  const options = devPdpOptions(values, checked, policy, io);
  const pdp = await start(options, checked.policyPath);
  io.stdout.write(`agent-pep dev-pdp listening on ${pdp.url}\n`);
  io.stdout.write(`JWKS: ${pdp.jwksUrl}\n`);
  io.stdout.write(`issuer: ${pdp.issuer}  audience: ${pdp.audience}  kid: ${pdp.kid}\n`);
  if (options.reviewerApiKey !== undefined) io.stdout.write(`reviewer console: ${pdp.url}/console\n`);
  stopOnSignals(pdp, io);
  return EXIT.ok;
}

/**
 * The `--tool-audience PATTERN=AUD` flags, in order, as `toolAudiences` (checked by `startDevPdp`).
 * @throws UsageError for a flag without `=`, or a pattern given twice
 */
function toolAudienceFlags(flags: string[] | undefined): Record<string, string> | undefined {
  if (flags === undefined) return undefined;
  const map: Record<string, string> = {};
  for (const flag of flags) {
    const eq = flag.indexOf('=');
    if (eq <= 0) throw new UsageError('--tool-audience must be PATTERN=AUDIENCE, e.g. refund_*=payments-service');
    const pattern = flag.slice(0, eq);
    if (Object.hasOwn(map, pattern)) throw new UsageError(`--tool-audience names ${pattern.slice(0, 80)} twice`);
    map[pattern] = flag.slice(eq + 1);
  }
  return map;
}

/**
 * The first name beside `path` that is free: `evidence.jsonl` gives `evidence-2.jsonl` (or `-3`, ...),
 * for the usage error of an `--evidence` file that already holds records.
 */
async function freshLogName(path: string): Promise<string> {
  const dot = path.lastIndexOf('.');
  const slash = path.lastIndexOf('/');
  const [stem, ext] = dot > slash + 1 ? [path.slice(0, dot), path.slice(dot)] : [path, ''];
  for (let n = 2; n < 1000; n++) {
    const candidate = `${stem}-${n}${ext}`;
    if ((await stat(candidate).catch(() => undefined)) === undefined) return candidate;
  }
  return `${stem}-${Date.now()}${ext}`;
}
