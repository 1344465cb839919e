/**
 * `agent-pep/dev-pdp`: the local reference PDP (docs/dev-pdp.md). It speaks the wire protocol of
 * docs/fail-closed.md, signs permits as in docs/permits.md, keeps a hash-chained signed evidence log, holds
 * escalations for review and injects faults on demand, so agents and services can be developed and
 * their fail-closed paths tested without a production PDP.
 * @packageDocumentation
 * @module dev-pdp
 */
import type { AddressInfo } from 'node:net';
import type { EvidenceRecord } from 'agent-pep/internal';
import type { JSONWebKeySet } from 'jose';
import { compileToolAudiences } from './audiences.js';
import { KeyThrottle } from './auth.js';
import { type ConsoleDeps, type ConsoleHandler, createConsole } from './console/routes.js';
import { DEV_PDP_DEFAULTS } from './defaults.js';
import type { EscalationResolution } from './escalations.js';
import { EvidenceLog } from './evidence.js';
import { type Fault, validateFault } from './faults.js';
import { refusalLogger } from './log.js';
import { type DevPdpOptions, type ResolvedDevPdpOptions, resolveDevPdpOptions } from './options.js';
import { compilePolicy } from './policy.js';
import { type OpenedEscalationStore, openEscalationStore, reviewing } from './review.js';
import { createPdpServer, type PdpServer } from './server.js';
import { SessionKeeper } from './sessions/keeper.js';
import { createMemorySessionStore } from './sessions/memory.js';
import { createRedisSessionStore } from './sessions/redis.js';
import type { SessionStore } from './sessions/store.js';
import { createSigningKey } from './signing.js';
import { checkToolCoverage, refuseUnmatchedLatches } from './tool-coverage.js';

export type { EvidenceRecord } from 'agent-pep/internal';
export { DEV_PDP_DEFAULTS } from './defaults.js';
export type { EscalationErrorCode, EscalationResolution, EscalationStatus } from './escalations.js';
export { EscalationError } from './escalations.js';
export type { Evaluation, EvaluationInput } from './evaluate.js';
export { evaluatePolicy } from './evaluate.js';
export type { Fault } from './faults.js';
export type { DevPdpErrorCode } from './http.js';
export type { RefusalLogOption, RefusedRequest } from './log.js';
export type { DevPdpOptions, OptionTypeError, SessionStoreOption } from './options.js';
export type {
  ConditionSpec,
  DefaultVerdict,
  LatchSpec,
  ModelSettingsSpec,
  PolicyIssue,
  PolicyScalar,
  PolicySpec,
  RouteSpec,
  SessionConditionSpec,
  StepFilterSpec,
} from './policy.js';
export { compilePolicy, InvalidPolicyError, policyJsonSchema } from './policy.js';
export type { SessionRedisClient } from './sessions/options.js';
export type { HistoryStep, SessionView } from './sessions/state.js';
export type { DevPdpKeySource } from './signing.js';
export { checkToolCoverage, type ToolCoverage, type UnmatchedLatch } from './tool-coverage.js';

/** A running dev PDP. */
export interface DevPdp {
  /** Base URL, like `http://127.0.0.1:54321`; pass it to `createPep({ pdpUrl })`. */
  readonly url: string;
  /** Where the public keys are served: `${url}/.well-known/jwks.json`. */
  readonly jwksUrl: string;
  /** The permits' `iss` claim (the same as `url`). */
  readonly issuer: string;
  /** The permits' `aud` claim. */
  readonly audience: string;
  /** The signing key's id (RFC 7638 thumbprint), the `kid` of permits and evidence signatures. */
  readonly kid: string;
  /** The public keys, as served at `jwksUrl`. */
  readonly jwks: JSONWebKeySet;
  /** A copy of the evidence log so far, in order. */
  evidence(): EvidenceRecord[];
  /**
   * Injects a fault on the decision endpoints (`POST /api/policy/authorize` and the AuthZEN
   * evaluation endpoints) from the next request on; `null` behaves again.
   * @throws TypeError (with `option`) for an unknown fault shape or key
   */
  setFault(fault: Fault | null): void;
  /**
   * Resolves an open escalation: the next identical request (same agent, session, tool and
   * `act_hash`) within `approvalTtlSec` gets a one-time ALLOW with a permit (`approve`) or a BLOCK
   * (`deny`). The resolution is appended to the evidence log (`stage: "review"`, `by: "process"`).
   * @throws EscalationError `escalation_not_found` for an unknown id, `escalation_already_resolved` for a second resolution
   */
  resolveEscalation(id: string, resolution: EscalationResolution): Promise<void>;
  /**
   * What the bounded memory stores dropped to stay within `maxSessions` and `maxEscalations` (oldest
   * first), since start: `{ dropped: { sessions, escalations } }` (always 0 with the Redis store, whose
   * keys expire instead).
   */
  stats(): DevPdpStats;
  /**
   * Drains, then closes: no new decision is taken (503 `draining`; `/readyz` answers 503) and no new
   * connection accepted, every request in flight is answered (waiting at most `timeoutMs`, default
   * 10000), then {@link close}. `agent-pep dev-pdp` drains on SIGTERM. Idempotent.
   */
  drain(timeoutMs?: number): Promise<void>;
  /** Stops listening, destroys every open socket (hung ones too) and flushes the evidence file. Idempotent. */
  close(): Promise<void>;
}

/** What a dev PDP's bounded stores dropped (see {@link DevPdp.stats}). */
export interface DevPdpStats {
  dropped: {
    /** Sessions dropped by the memory store past `maxSessions`, least recently used first. */
    sessions: number;
    /** Escalations, statuses and waiting resolutions dropped by the memory store past `maxEscalations`. */
    escalations: number;
  };
}

/** The session store the options name (memory by default), behind its per-session queue. */
async function openSessions(o: ResolvedDevPdpOptions, counters: { sessions: number }): Promise<SessionKeeper> {
  const limits = { maxHistory: o.maxHistory, sessionTtlSec: o.sessionTtlSec };
  const bound = {
    maxSessions: o.maxSessions,
    onDrop: () => {
      counters.sessions++;
    },
  };
  const store: SessionStore =
    o.sessionStore === undefined
      ? createMemorySessionStore(limits, Date.now, bound)
      : await createRedisSessionStore(
          o.sessionStore,
          limits,
          o.sessionStoreTimeoutMs,
          o.sessionStore.prefix ?? DEV_PDP_DEFAULTS.sessionStorePrefix,
        );
  return new SessionKeeper(store, o.sessionStoreTimeoutMs);
}

/** The reviewer console, when there is a reviewer key and it is not turned off. */
function consoleOf(
  o: ResolvedDevPdpOptions,
  deps: Omit<ConsoleDeps, 'reviewerApiKey' | 'apiKey'>,
): ConsoleHandler | undefined {
  if (!o.console || o.reviewerApiKey === undefined) return undefined;
  return createConsole({ ...deps, reviewerApiKey: o.reviewerApiKey, apiKey: o.apiKey });
}

/**
 * Starts the local reference PDP.
 *
 * @param options - `{ policy, host?, port?, apiKey?, reviewerApiKey?, console?, approvalTtlSec?, escalationTtlSec?,
 *   notifyUrl?, audience?, toolAudiences?, permitTtlSec?, evidencePath?, key?, sessionStore?, maxHistory?,
 *   sessionTtlSec?, sessionStoreTimeoutMs?, maxBodyBytes?, headersTimeoutMs?, requestTimeoutMs?,
 *   keepAliveTimeoutMs?, onDecision?, log? }`; with a `reviewerApiKey` the reviewer console is served at
 *   `/console` (docs/dev-pdp.md, "The reviewer console"); sessions in docs/dev-pdp.md, "Sessions"
 * @returns the running PDP: `url`, `jwksUrl`, `issuer`, `evidence()`, `setFault()`, `resolveEscalation()`, `close()`
 * @throws InvalidPolicyError (a TypeError, `option` = 'policy') listing every problem of an invalid
 *   policy by path, latch id and reason
 * @throws TypeError for an unknown option or a bad one, with `err.option` naming its path
 * @remarks A development and test tool, not a production PDP: one process, state in memory, a
 * signing key made at start unless one is given (permits from an earlier run do not verify against a
 * new key). It binds to 127.0.0.1 unless told otherwise. Policy regexes are RE2 syntax, matched in
 * linear time, so no request can stall it; a slow client is cut off after `headersTimeoutMs` /
 * `requestTimeoutMs`. It serves its native protocol (docs/fail-closed.md) and AuthZEN 1.0
 * (`/access/v1/evaluation`, `/access/v1/evaluations`, `/.well-known/authzen-configuration`).
 * @example
 * ```ts
 * import { startDevPdp } from 'agent-pep/dev-pdp';
 * const pdp = await startDevPdp({ policy: { agents: ['support-ai'], latches: [] } });
 * const pep = createPep({ pdpUrl: pdp.url, agentId: 'support-ai', session: 's1',
 *   permits: { keys: pdp.jwksUrl, issuer: pdp.issuer } });
 * // ...
 * await pdp.close();
 * ```
 */
export async function startDevPdp(options: DevPdpOptions): Promise<DevPdp> {
  const o = resolveDevPdpOptions(options);
  const toolAudiences = compileToolAudiences(o.toolAudiences);
  const policy = compilePolicy(o.policy);
  if (o.knownTools !== undefined) refuseUnmatchedLatches(checkToolCoverage(policy, o.knownTools));
  const key = await createSigningKey(o.key);
  const evidence = await EvidenceLog.open(key, o.evidencePath);
  const dropped = { sessions: 0 };
  let sessions: SessionKeeper;
  let escalationStore: OpenedEscalationStore | undefined;
  try {
    sessions = await openSessions(o, dropped);
    escalationStore = await openEscalationStore(o).catch(async (error) => {
      await sessions.close();
      throw error;
    });
  } catch (error) {
    await evidence.close();
    throw error;
  }
  const log = refusalLogger(o.log);
  const state: { issuer: string; fault: Readonly<Fault> | null } = { issuer: '', fault: null };
  const review = reviewing(o, evidence, log, () => state.issuer, escalationStore?.store);
  const { escalations } = review;
  const throttle = new KeyThrottle(DEV_PDP_DEFAULTS.reviewerKeyAttempts, DEV_PDP_DEFAULTS.consoleSignInWindowMs);
  const pdpServer = createPdpServer({
    policy,
    key,
    evidence,
    escalations,
    sessions,
    audience: o.audience,
    toolAudiences,
    permitTtlSec: o.permitTtlSec,
    maxBodyBytes: o.maxBodyBytes,
    timeouts: {
      headersTimeoutMs: o.headersTimeoutMs,
      requestTimeoutMs: o.requestTimeoutMs,
      keepAliveTimeoutMs: o.keepAliveTimeoutMs,
    },
    issuer: () => state.issuer,
    fault: () => state.fault,
    apiKey: o.apiKey,
    reviewerApiKey: o.reviewerApiKey,
    console: consoleOf(o, { escalations, evidence, keys: key.jwks as JSONWebKeySet, log, throttle }),
    onDecision: o.onDecision,
    log,
    throttle,
    escalationTtlMs: o.escalationTtlSec * 1000,
    ready: () => escalations.store.ping(),
  });
  const closeStore = async () => {
    await escalationStore?.close();
  };
  const parts: Parts = { o, key, evidence, sessions, review, server: pdpServer, closeStore, dropped };
  state.issuer = await listen(parts);
  return running(parts, state);
}

/** What a started dev PDP is made of. */
interface Parts {
  o: ResolvedDevPdpOptions;
  key: Awaited<ReturnType<typeof createSigningKey>>;
  evidence: EvidenceLog;
  sessions: SessionKeeper;
  review: ReturnType<typeof reviewing>;
  server: PdpServer;
  /** Closes the escalation store's own connection, if it has one. */
  closeStore(): Promise<void>;
  dropped: { sessions: number };
}

/**
 * Listens on the options' host and port; resolves with the base URL (an IPv6 address in brackets).
 * When it cannot listen, closes the review, sessions and evidence log, then rejects with the error.
 */
async function listen({ o, review, sessions, evidence, closeStore, server: { server } }: Parts): Promise<string> {
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(o.port, o.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    review.close();
    await sessions.close();
    await closeStore();
    await evidence.close();
    throw error;
  }
  const address = server.address() as AddressInfo;
  const hostPart =
    address.family === 'IPv6' || address.address.includes(':') ? `[${address.address}]` : address.address;
  return `http://${hostPart}:${address.port}`;
}

/** The running PDP's handle: its URLs and keys, and its controls over `state` and the parts. */
function running(parts: Parts, state: { readonly issuer: string; fault: Readonly<Fault> | null }): DevPdp {
  const { o, key, evidence, sessions, review, server } = parts;
  const { issuer } = state;
  let closed: Promise<void> | undefined;
  let drained: Promise<void> | undefined;
  const close = (): Promise<void> => {
    review.close();
    closed ??= server
      .close()
      .then(() => sessions.close())
      .then(() => parts.closeStore())
      .then(() => evidence.close());
    return closed;
  };
  return Object.freeze({
    url: issuer,
    jwksUrl: `${issuer}/.well-known/jwks.json`,
    issuer,
    audience: o.audience,
    kid: key.kid,
    jwks: structuredClone(key.jwks) as JSONWebKeySet,
    evidence: () => evidence.records(),
    setFault(next: Fault | null) {
      state.fault = validateFault(next);
    },
    resolveEscalation(id: string, resolution: EscalationResolution) {
      return review.escalations.resolve(id, resolution, 'process');
    },
    stats: () => ({
      dropped: { sessions: parts.dropped.sessions, escalations: review.escalations.store.dropped() },
    }),
    drain(timeoutMs: number = DEV_PDP_DEFAULTS.drainTimeoutMs) {
      drained ??= server.drain(timeoutMs).then(close);
      return drained;
    },
    close,
  });
}
