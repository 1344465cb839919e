/**
 * Options of `startDevPdp`: the interface, and validation that names the offending path in
 * `err.option` (unknown keys included), with the defaults of `defaults.ts` filled in.
 * @packageDocumentation
 */
import type { EvidenceRecord } from 'agent-pep/internal';
import {
  msOption,
  type OptionTypeError,
  optionTypeError,
  refuseUnknownKeys as refuseUnknownKeysOf,
} from 'agent-pep/internal';
import { DEV_PDP_DEFAULTS } from './defaults.js';
import type { RefusalLogOption } from './log.js';
import { resolveSessionStoreOption, type SessionStoreOption } from './sessions/options.js';
import type { DevPdpKeySource } from './signing.js';
import { normalizeKnownTools } from './tool-coverage.js';

export type { SessionStoreOption } from './sessions/options.js';

/** Who validates, in every option error's message. */
const SCOPE = 'startDevPdp';

/** Options of `startDevPdp`. */
export interface DevPdpOptions {
  /** The policy (docs/dev-pdp.md): an object, or its JSON text. Validated and compiled at start. */
  policy: unknown;
  /**
   * The tools the agent has (names as registered). Checked at start against the policy: a latch whose
   * `tool` matches none of them is refused (`InvalidPolicyError` listing each at `latches[i].tool`), so
   * a policy naming `delete_files` for an agent with `delete_file` does not start. See
   * `checkToolCoverage` and `agent-pep check-policy --tools` (docs/dev-pdp.md, "Known tools").
   * @defaultValue undefined (not checked)
   */
  knownTools?: readonly string[];
  /** Interface to listen on. @defaultValue '127.0.0.1' */
  host?: string;
  /** TCP port; 0 picks a free one (see `url`). @defaultValue 0 */
  port?: number;
  /** When set, every request but the JWKS and the AuthZEN discovery document must carry `authorization: Bearer <apiKey>` (else 401). */
  apiKey?: string;
  /**
   * The key of `POST /api/escalations/{id}` (`authorization: Bearer <reviewerApiKey>`). It must differ
   * from `apiKey`, so an agent holding its decision key cannot approve its own escalation. Without it
   * the endpoint answers 404: escalations are then resolved only in-process, with `resolveEscalation`.
   */
  reviewerApiKey?: string;
  /**
   * Serve the reviewer console at `/console` (docs/dev-pdp.md, "The reviewer console"), signed in with
   * `reviewerApiKey`; without a reviewer key there is no console (404).
   * @defaultValue true when `reviewerApiKey` is set
   */
  console?: boolean;
  /** How long an approval (or a denial) waits for its identical request, in seconds, 1 to 604800. @defaultValue 900 */
  approvalTtlSec?: number;
  /** How long an escalation stays open before it is denied (outcome `expired`), in seconds, 1 to 604800. @defaultValue 3600 */
  escalationTtlSec?: number;
  /**
   * An http(s) URL POSTed `{ escalationId, agentId, session, tool, reason, consoleUrl }` when an
   * escalation opens: best effort, within 3 s, never delaying the decision; failures are logged
   * (status and code only) through `log`.
   */
  notifyUrl?: string;
  /** The permits' `aud` claim: the service that executes the tool calls. @defaultValue 'agent-pep' */
  audience?: string;
  /**
   * One audience per service: tool patterns (normalized form, `*` wildcards, as a latch's `tool`) to
   * the `aud` of their permits; the first pattern that matches wins, in the order given; a tool none
   * matches gets `audience`. With `{ 'refund_*': 'payments-service', send_email: 'mail-service' }` a
   * refund permit is accepted by the payments service alone, whatever replay store the mail service
   * keeps (docs/dev-pdp.md). @defaultValue none (every permit gets `audience`)
   */
  toolAudiences?: Readonly<Record<string, string>>;
  /** Permit lifetime `exp - iat`, in seconds, 1 to 300. @defaultValue 60 */
  permitTtlSec?: number;
  /** Also write the evidence log to this file as JSON Lines; it must be new or empty. */
  evidencePath?: string;
  /** The Ed25519 signing key (a file path, a private JWK, or a KeyObject/CryptoKey). @defaultValue a fresh key */
  key?: DevPdpKeySource;
  /** Largest accepted request body, in bytes (at least 1024); larger gets 413. @defaultValue 1048576 (1 MiB) */
  maxBodyBytes?: number;
  /** Time a client has to send its request headers, in milliseconds; then the socket is closed. @defaultValue 5000 */
  headersTimeoutMs?: number;
  /** Time a client has to send its whole request, in milliseconds (at least `headersTimeoutMs`). @defaultValue 10000 */
  requestTimeoutMs?: number;
  /** How long an idle kept-alive connection stays open, in milliseconds. @defaultValue 5000 */
  keepAliveTimeoutMs?: number;
  /** Called after every decision with its evidence record (a copy). Errors are ignored. */
  onDecision?: (record: EvidenceRecord) => void;
  /**
   * Where refused requests are logged (status and code, never content, args or keys): `false` for
   * nowhere, or a function given each refusal. @defaultValue one line on stderr
   */
  log?: RefusalLogOption;
  /**
   * Where session state lives (docs/dev-pdp.md): `{ redis: 'redis://host:port' }` or
   * `{ redis: ioredisClient }` (a client the caller owns and closes) to share it between PDP replicas,
   * with `prefix?` (default `'agent-pep:session:'`). Needs the `ioredis` package. @defaultValue this process's memory
   */
  sessionStore?: SessionStoreOption;
  /** Decided steps kept per session, 1 to 100000, the oldest dropped. @defaultValue 256 */
  maxHistory?: number;
  /** A session expires this many seconds after its last non-simulated step (1 to 2592000). @defaultValue 3600 */
  sessionTtlSec?: number;
  /**
   * How long one decision may wait for the session store, in milliseconds, at each wait: for the
   * decisions of its session queued before it and its lease or read, then for its commit (the time it
   * spends deciding is not counted); then it is answered 503 `session_store_unavailable`. @defaultValue 1000
   */
  sessionStoreTimeoutMs?: number;
  /**
   * Escalations one session (agent and session id) may have open at once, 1 to 10000; an ESCALATE past
   * it is refused 400 `too_many_escalations` (nothing stored). @defaultValue 20
   */
  maxEscalationsPerSession?: number;
  /**
   * Memory store: sessions kept, 1 to 1000000; past it the least recently used is dropped and counted
   * (`stats().dropped.sessions`). @defaultValue 100000
   */
  maxSessions?: number;
  /**
   * Memory store: escalations (open and resolved) and waiting resolutions kept, each 1 to 1000000; past
   * it the oldest is dropped and counted (`stats().dropped.escalations`). @defaultValue 10000
   */
  maxEscalations?: number;
}

/** Options after validation, with defaults. @internal */
export interface ResolvedDevPdpOptions {
  policy: unknown;
  /** Normalized, each once. */
  knownTools: string[] | undefined;
  host: string;
  port: number;
  apiKey: string | undefined;
  reviewerApiKey: string | undefined;
  console: boolean;
  approvalTtlSec: number;
  escalationTtlSec: number;
  notifyUrl: string | undefined;
  audience: string;
  /** As given: `compileToolAudiences` (audiences.ts) checks it. */
  toolAudiences: unknown;
  permitTtlSec: number;
  evidencePath: string | undefined;
  key: DevPdpKeySource | undefined;
  maxBodyBytes: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  onDecision: ((record: EvidenceRecord) => void) | undefined;
  log: RefusalLogOption | undefined;
  sessionStore: SessionStoreOption | undefined;
  maxHistory: number;
  sessionTtlSec: number;
  sessionStoreTimeoutMs: number;
  maxEscalationsPerSession: number;
  maxSessions: number;
  maxEscalations: number;
}

const KNOWN: ReadonlySet<string> = new Set([
  'policy',
  'knownTools',
  'host',
  'port',
  'apiKey',
  'reviewerApiKey',
  'console',
  'approvalTtlSec',
  'escalationTtlSec',
  'notifyUrl',
  'audience',
  'toolAudiences',
  'permitTtlSec',
  'evidencePath',
  'key',
  'maxBodyBytes',
  'headersTimeoutMs',
  'requestTimeoutMs',
  'keepAliveTimeoutMs',
  'onDecision',
  'log',
  'sessionStore',
  'maxHistory',
  'sessionTtlSec',
  'sessionStoreTimeoutMs',
  'maxEscalationsPerSession',
  'maxSessions',
  'maxEscalations',
]);

/** A `TypeError` naming the option at fault in `option`. */
export type { OptionTypeError };

/** Makes a `TypeError` whose `option` names the path at fault (the one option kit). @internal */
export function optionError(option: string, message: string): OptionTypeError {
  return optionTypeError(SCOPE, option, message);
}
/** Refuses keys other than `known` in `value`, naming the first unknown one under `path`. @internal */
export function refuseUnknownKeys(value: object, known: ReadonlySet<string>, path: string): void {
  refuseUnknownKeysOf(SCOPE, value, known, path);
}
const nonEmpty = (value: unknown): value is string => typeof value === 'string' && value.length > 0;
/** An integer option from `min` to `max`, or the default. @internal */
export function integerOption(value: unknown, name: string, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw optionError(name, `must be an integer from ${min} to ${max}`);
  }
  return value;
}

/** A millisecond option: the kit's one rule (an integer from 1 to 600000). */
function duration(value: unknown, name: string, fallback: number): number {
  return msOption(SCOPE, name, value, fallback);
}

function seconds(value: unknown, name: string, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw optionError(name, `must be an integer number of seconds from 1 to ${max}`);
  }
  return value;
}

function httpUrl(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = typeof value === 'string' ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw optionError(name, 'must be an http or https URL');
  }
  return url.href;
}

/** The review options: console, the two TTLs and the webhook. */
function reviewOptions(o: DevPdpOptions) {
  if (o.console !== undefined && typeof o.console !== 'boolean') throw optionError('console', 'must be a boolean');
  const max = DEV_PDP_DEFAULTS.maxReviewTtlSec;
  return {
    console: o.console ?? o.reviewerApiKey !== undefined,
    approvalTtlSec: seconds(o.approvalTtlSec, 'approvalTtlSec', DEV_PDP_DEFAULTS.approvalTtlSec, max),
    escalationTtlSec: seconds(o.escalationTtlSec, 'escalationTtlSec', DEV_PDP_DEFAULTS.escalationTtlSec, max),
    notifyUrl: httpUrl(o.notifyUrl, 'notifyUrl'),
  };
}

/**
 * Validates the options of `startDevPdp` (not the policy, which `compilePolicy` checks) and fills in
 * the defaults.
 * @throws TypeError with `option` naming the path at fault, for an unknown key or a bad value
 * @internal
 */
export function resolveDevPdpOptions(options: unknown): ResolvedDevPdpOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw optionError('options', 'must be an object');
  }
  refuseUnknownKeys(options, KNOWN, '');
  const o = options as DevPdpOptions;
  if (!('policy' in o) || o.policy === undefined) throw optionError('policy', 'is required');
  if (o.host !== undefined && !nonEmpty(o.host)) throw optionError('host', 'must be a non-empty string');
  if (o.port !== undefined && (!Number.isInteger(o.port) || o.port < 0 || o.port > 65535)) {
    throw optionError('port', 'must be an integer from 0 to 65535');
  }
  if (o.apiKey !== undefined && !nonEmpty(o.apiKey)) throw optionError('apiKey', 'must be a non-empty string');
  if (o.reviewerApiKey !== undefined && !nonEmpty(o.reviewerApiKey))
    throw optionError('reviewerApiKey', 'must be a non-empty string');
  if (o.reviewerApiKey !== undefined && o.reviewerApiKey === o.apiKey) {
    throw optionError('reviewerApiKey', 'must differ from apiKey (an agent must not approve its own escalation)');
  }
  if (o.audience !== undefined && !nonEmpty(o.audience)) throw optionError('audience', 'must be a non-empty string');
  const maxTtl = DEV_PDP_DEFAULTS.maxPermitTtlSec;
  if (
    o.permitTtlSec !== undefined &&
    (typeof o.permitTtlSec !== 'number' ||
      !Number.isInteger(o.permitTtlSec) ||
      o.permitTtlSec < 1 ||
      o.permitTtlSec > maxTtl)
  ) {
    throw optionError('permitTtlSec', `must be an integer from 1 to ${maxTtl}`);
  }
  if (o.evidencePath !== undefined && !nonEmpty(o.evidencePath))
    throw optionError('evidencePath', 'must be a non-empty string');
  if (
    o.maxBodyBytes !== undefined &&
    (typeof o.maxBodyBytes !== 'number' ||
      !Number.isInteger(o.maxBodyBytes) ||
      o.maxBodyBytes < DEV_PDP_DEFAULTS.minBodyBytes ||
      o.maxBodyBytes > 2 ** 31)
  ) {
    throw optionError('maxBodyBytes', `must be an integer from ${DEV_PDP_DEFAULTS.minBodyBytes} to 2^31`);
  }
  const headersTimeoutMs = duration(o.headersTimeoutMs, 'headersTimeoutMs', DEV_PDP_DEFAULTS.headersTimeoutMs);
  const requestTimeoutMs = duration(
    o.requestTimeoutMs,
    'requestTimeoutMs',
    Math.max(DEV_PDP_DEFAULTS.requestTimeoutMs, headersTimeoutMs),
  );
  if (requestTimeoutMs < headersTimeoutMs) throw optionError('requestTimeoutMs', 'must be at least headersTimeoutMs');
  const keepAliveTimeoutMs = duration(o.keepAliveTimeoutMs, 'keepAliveTimeoutMs', DEV_PDP_DEFAULTS.keepAliveTimeoutMs);
  if (o.onDecision !== undefined && typeof o.onDecision !== 'function')
    throw optionError('onDecision', 'must be a function');
  if (o.log !== undefined && o.log !== false && typeof o.log !== 'function') {
    throw optionError('log', 'must be false or a function');
  }
  return {
    policy: o.policy,
    knownTools: o.knownTools === undefined ? undefined : normalizeKnownTools(o.knownTools),
    host: o.host ?? DEV_PDP_DEFAULTS.host,
    port: o.port ?? DEV_PDP_DEFAULTS.port,
    apiKey: o.apiKey,
    reviewerApiKey: o.reviewerApiKey,
    ...reviewOptions(o),
    audience: o.audience ?? DEV_PDP_DEFAULTS.audience,
    toolAudiences: o.toolAudiences,
    permitTtlSec: o.permitTtlSec ?? DEV_PDP_DEFAULTS.permitTtlSec,
    evidencePath: o.evidencePath,
    key: o.key,
    maxBodyBytes: o.maxBodyBytes ?? DEV_PDP_DEFAULTS.maxBodyBytes,
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs,
    onDecision: o.onDecision,
    log: o.log,
    ...resolveSessionOptions(o),
  };
}

/** The session options (docs/dev-pdp.md, Sessions), with their defaults. */
function resolveSessionOptions(
  o: DevPdpOptions,
): Pick<
  ResolvedDevPdpOptions,
  | 'sessionStore'
  | 'maxHistory'
  | 'sessionTtlSec'
  | 'sessionStoreTimeoutMs'
  | 'maxEscalationsPerSession'
  | 'maxSessions'
  | 'maxEscalations'
> {
  const d = DEV_PDP_DEFAULTS;
  return {
    maxEscalationsPerSession: integerOption(
      o.maxEscalationsPerSession,
      'maxEscalationsPerSession',
      1,
      10_000,
      d.maxEscalationsPerSession,
    ),
    maxSessions: integerOption(o.maxSessions, 'maxSessions', 1, 1_000_000, d.maxSessions),
    maxEscalations: integerOption(o.maxEscalations, 'maxEscalations', 1, 1_000_000, d.maxEscalations),
    sessionStore: resolveSessionStoreOption(o.sessionStore),
    maxHistory: integerOption(o.maxHistory, 'maxHistory', 1, d.maxMaxHistory, d.maxHistory),
    sessionTtlSec: integerOption(o.sessionTtlSec, 'sessionTtlSec', 1, d.maxSessionTtlSec, d.sessionTtlSec),
    sessionStoreTimeoutMs: duration(o.sessionStoreTimeoutMs, 'sessionStoreTimeoutMs', d.sessionStoreTimeoutMs),
  };
}
