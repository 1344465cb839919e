/**
 * The dev PDP's defaults, in one frozen object (docs/dev-pdp.md).
 * @packageDocumentation
 */
import { MAX_PERMIT_LIFETIME_SEC, MAX_TOOL_NAME_LENGTH } from 'agent-pep/internal';

/** Every default of the dev PDP. Durations in milliseconds, sizes in bytes. */
export const DEV_PDP_DEFAULTS = Object.freeze({
  /** Interface to listen on. */
  host: '127.0.0.1',
  /** TCP port; 0 picks a free one. */
  port: 0,
  /** The permits' `aud` claim. */
  audience: 'agent-pep',
  /** Permit lifetime `exp - iat`, in seconds. */
  permitTtlSec: 60,
  /** Longest permit lifetime allowed (docs/permits.md), in seconds. */
  maxPermitTtlSec: MAX_PERMIT_LIFETIME_SEC,
  /** Largest accepted request body (1 MiB). */
  maxBodyBytes: 1024 * 1024,
  /** Smallest `maxBodyBytes` allowed. */
  minBodyBytes: 1024,
  /** Largest body of `POST /api/escalations/{id}`. */
  escalationBodyBytes: 16 * 1024,
  /** Time a client has to send its request headers (node:http `server.headersTimeout`). */
  headersTimeoutMs: 5000,
  /** Time a client has to send its whole request (node:http `server.requestTimeout`). */
  requestTimeoutMs: 10_000,
  /** How long an idle kept-alive connection stays open (node:http `server.keepAliveTimeout`). */
  keepAliveTimeoutMs: 5000,
  /** Longest tool name accepted, in characters (docs/dev-pdp.md); longer is a 400. */
  maxToolNameLength: MAX_TOOL_NAME_LENGTH,
  /** Largest number of items in one AuthZEN `evaluations` request. */
  maxEvaluations: 64,
  /** Longest regex source in a policy, in characters. */
  maxRegexLength: 4096,
  /**
   * Largest count of a counted repetition (`{n}`, `{n,m}`, `{n,}`) in a policy regex: a count repeats
   * its part that many times in the compiled program, and multiplies the time every text takes.
   */
  maxRegexRepeat: 200,
  /** Steps of a session's history kept, the oldest dropped. */
  maxHistory: 256,
  /** Largest `maxHistory` allowed. */
  maxMaxHistory: 100_000,
  /** A session expires this long after its last non-simulated step, in seconds. */
  sessionTtlSec: 3600,
  /** Longest `sessionTtlSec` allowed (30 days), in seconds. */
  maxSessionTtlSec: 30 * 24 * 3600,
  /** How long a decision may wait for the session store, in milliseconds; then 503 `session_store_unavailable`. */
  sessionStoreTimeoutMs: 1000,
  /** Escalations one session may have open at once; one more is a 400 `too_many_escalations`. */
  maxEscalationsPerSession: 20,
  /** Memory store: sessions kept, the least recently used dropped (and counted). */
  maxSessions: 100_000,
  /** Memory store: escalations and waiting resolutions kept, the oldest dropped (and counted). */
  maxEscalations: 10_000,
  /** Longest session id accepted, in characters; longer is a 400 `session_too_long`. */
  maxSessionLength: 256,
  /** Failed reviewer-key attempts allowed per client address within `consoleSignInWindowMs`, wherever the key is accepted. */
  reviewerKeyAttempts: 10,
  /** How long a drain (`drain()`, SIGTERM) waits for in-flight requests before it closes anyway. */
  drainTimeoutMs: 10_000,
  /** Key prefix of the Redis session store. */
  sessionStorePrefix: 'agent-pep:session:',
  /** How long an approval (or a denial) waits for its identical request, in seconds. */
  approvalTtlSec: 900,
  /** How long an escalation stays open before it is denied, in seconds. */
  escalationTtlSec: 3600,
  /** Longest `approvalTtlSec` / `escalationTtlSec`, in seconds (7 days). */
  maxReviewTtlSec: 7 * 24 * 3600,
  /** How often open escalations are checked against `escalationTtlSec`. */
  escalationSweepMs: 1000,
  /** Failed console sign-ins allowed per client address within `consoleSignInWindowMs`. */
  consoleSignInAttempts: 10,
  /** The window of `consoleSignInAttempts` (15 minutes). */
  consoleSignInWindowMs: 15 * 60 * 1000,
  /** How long a signed-in console session lasts without use (1 hour). */
  consoleSessionIdleMs: 60 * 60 * 1000,
  /** Largest body of a console form post. */
  consoleFormBytes: 16 * 1024,
  /** Longest reviewer note kept, in characters. */
  consoleNoteLength: 500,
  /** How many recent decisions the console shows. */
  consoleRecentDecisions: 200,
  /** Time a `notifyUrl` webhook POST may take. */
  notifyTimeoutMs: 3000,
  /** Webhook POSTs in flight at once; more are dropped (and logged). */
  notifyConcurrency: 16,
  /** Default trickle rate of the `slow` fault, bytes per second. */
  slowBytesPerSecond: 16,
});
