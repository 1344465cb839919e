/**
 * `agent-pep dev-pdp --policy FILE`: runs the local reference PDP (docs/dev-pdp.md) until
 * SIGINT or SIGTERM. Exit codes: 0 on a clean stop, 2 for a usage error or a bad policy, 1 when the
 * server cannot run.
 * @internal
 */
import { readFile, stat } from 'node:fs/promises';
import { InvalidPolicyError, startDevPdp } from '../dev-pdp/index.js';
import { EXIT, exitWith, integerFlag, jsonPosition, parseCommandLine, systemReason, UsageError, usageExit, } from './usage.js';
export const USAGE = `Usage: agent-pep dev-pdp --policy FILE [options]

Runs the local reference PDP (agent-pep/dev-pdp) until SIGINT or SIGTERM.

Options:
  --policy FILE     policy JSON file (required); its JSON Schema, for "$schema", is
                    node_modules/agent-pep/schema/policy.schema.json
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
/** Reads `--session-store`, `--max-history` and `--session-ttl`. @throws UsageError */
function sessionFlags(values) {
    const out = {};
    const store = values['session-store'];
    if (typeof store === 'string')
        out.sessionStore = { redis: store };
    const maxHistory = integerFlag(values['max-history'], 'max-history', 1, 100_000);
    if (maxHistory !== undefined)
        out.maxHistory = maxHistory;
    const ttl = integerFlag(values['session-ttl'], 'session-ttl', 1, 30 * 24 * 3600);
    if (ttl !== undefined)
        out.sessionTtlSec = ttl;
    return out;
}
/** One line per evidence record (decisions and reviews), never content or args. */
function recordLine(record) {
    if (record.stage === 'review')
        return `${record.seq} review ${record.outcome} ${record.escalationId} by ${record.by}\n`;
    const what = record.tool !== undefined ? ` ${record.tool}` : '';
    const latches = record.latches.length > 0 ? ` [${record.latches.join(', ')}]` : '';
    const simulated = record.simulated ? ' (simulated)' : '';
    return `${record.seq} ${record.verdict} ${record.stage}${what}${latches}${simulated} ${record.decisionId}\n`;
}
/**
 * Runs the command; resolves with 0 once the server is up (the process then lives until SIGINT or
 * SIGTERM, which stop the server and exit the process).
 */
export async function run(argv, io) {
    const { values } = parseCommandLine(COMMAND, {
        args: argv,
        strict: true,
        allowPositionals: false,
        options: {
            policy: { type: 'string' },
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
        },
    });
    if (values.help) {
        io.stdout.write(USAGE);
        return EXIT.ok;
    }
    let port;
    let ttl;
    let sessions;
    let approvalTtl;
    let escalationTtl;
    let policyPath;
    let toolAudiences;
    try {
        toolAudiences = toolAudienceFlags(values['tool-audience']);
        if (values.policy === undefined)
            throw new UsageError('--policy FILE is required');
        policyPath = values.policy;
        port = integerFlag(values.port, 'port', 0, 65535);
        ttl = integerFlag(values.ttl, 'ttl', 1, 300);
        sessions = sessionFlags(values);
        approvalTtl = integerFlag(values['approval-ttl'], 'approval-ttl', 1, 604_800);
        escalationTtl = integerFlag(values['escalation-ttl'], 'escalation-ttl', 1, 604_800);
    }
    catch (error) {
        usageExit(COMMAND, error.message);
    }
    // The library refuses a log that already holds records too; here it is a usage error that names the flag.
    const evidencePath = values.evidence;
    const existing = evidencePath === undefined ? undefined : await stat(evidencePath).catch(() => undefined);
    if (existing?.isFile() && existing.size > 0) {
        usageExit(COMMAND, `--evidence ${evidencePath} already holds records (a log is one chain, from one start): start afresh with a new file, --evidence ${await freshLogName(evidencePath)}, or move the old log away (keep it and its JWKS for evidence verify)`);
    }
    let policyText;
    try {
        policyText = await readFile(policyPath, 'utf8');
    }
    catch (error) {
        usageExit(COMMAND, `cannot read the policy file ${policyPath} (${systemReason(error)})`);
    }
    let policy;
    try {
        policy = JSON.parse(policyText);
    }
    catch {
        usageExit(COMMAND, `the policy file ${policyPath} is not valid JSON${jsonPosition(policyText)}`);
    }
    const apiKey = values['api-key'] ?? (io.env.PDP_API_KEY || undefined);
    const reviewerEnv = values['reviewer-key-env'];
    if (reviewerEnv !== undefined && !io.env[reviewerEnv]) {
        usageExit(COMMAND, `--reviewer-key-env: the environment variable ${reviewerEnv} is not set`);
    }
    const reviewerApiKey = io.env[reviewerEnv ?? 'PDP_REVIEWER_KEY'] || undefined;
    const quiet = values.quiet === true;
    let pdp;
    try {
        pdp = await startDevPdp({
            policy,
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
            ...sessions,
            ...(quiet ? {} : { onDecision: (record) => void io.stdout.write(recordLine(record)) }),
        });
    }
    catch (error) {
        if (error instanceof InvalidPolicyError) {
            // A policy can have several problems: the first line names the file, one line per problem follows.
            exitWith(`invalid policy ${policyPath}:\n${error.issues.map((i) => `  ${i.path}${i.latch !== undefined ? ` (latch ${i.latch})` : ''}: ${i.message}`).join('\n')}`, EXIT.usage);
        }
        if (error instanceof TypeError)
            usageExit(COMMAND, error.message);
        const code = error?.code;
        // A port in use is the common case (a dev PDP already running): say what to do about it.
        const what = code === 'EADDRINUSE'
            ? `${values.host ?? '127.0.0.1'}:${port ?? 8787} is in use: stop what listens there, or pass another --port (0 for any free port)`
            : error.message;
        exitWith(`cannot start the dev PDP${typeof code === 'string' ? ` (${code})` : ''}: ${what}`, EXIT.failure);
    }
    io.stdout.write(`agent-pep dev-pdp listening on ${pdp.url}\n`);
    io.stdout.write(`JWKS: ${pdp.jwksUrl}\n`);
    io.stdout.write(`issuer: ${pdp.issuer}  audience: ${pdp.audience}  kid: ${pdp.kid}\n`);
    if (reviewerApiKey !== undefined)
        io.stdout.write(`reviewer console: ${pdp.url}/console\n`);
    let stopping = false;
    const stop = (signal) => {
        if (stopping)
            return;
        stopping = true;
        io.stdout.write(`${signal}: stopping\n`);
        const force = setTimeout(() => process.exit(EXIT.failure), 5000);
        force.unref();
        pdp.close().then(() => process.exit(EXIT.ok), () => process.exit(EXIT.failure));
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    return EXIT.ok;
}
/**
 * The `--tool-audience PATTERN=AUD` flags, in order, as `toolAudiences` (checked by `startDevPdp`).
 * @throws UsageError for a flag without `=`, or a pattern given twice
 */
function toolAudienceFlags(flags) {
    if (flags === undefined)
        return undefined;
    const map = {};
    for (const flag of flags) {
        const eq = flag.indexOf('=');
        if (eq <= 0)
            throw new UsageError('--tool-audience must be PATTERN=AUDIENCE, e.g. refund_*=payments-service');
        const pattern = flag.slice(0, eq);
        if (Object.hasOwn(map, pattern))
            throw new UsageError(`--tool-audience names ${pattern.slice(0, 80)} twice`);
        map[pattern] = flag.slice(eq + 1);
    }
    return map;
}
/**
 * The first name beside `path` that is free: `evidence.jsonl` gives `evidence-2.jsonl` (or `-3`, ...),
 * for the usage error of an `--evidence` file that already holds records.
 */
async function freshLogName(path) {
    const dot = path.lastIndexOf('.');
    const slash = path.lastIndexOf('/');
    const [stem, ext] = dot > slash + 1 ? [path.slice(0, dot), path.slice(dot)] : [path, ''];
    for (let n = 2; n < 1000; n++) {
        const candidate = `${stem}-${n}${ext}`;
        if ((await stat(candidate).catch(() => undefined)) === undefined)
            return candidate;
    }
    return `${stem}-${Date.now()}${ext}`;
}
