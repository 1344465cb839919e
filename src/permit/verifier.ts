/**
 * Permit verification (docs/permits.md): the option checks and the one code path.
 *
 * {@link createPermitChecker} runs every check but the replay claim (the client's `guardTool` uses
 * it); {@link createPermitVerifier} runs the same checks, then claims the `jti` once.
 *
 * The checks, in this order (the first that fails decides the code):
 *
 * | # | check | module | code |
 * |---|---|---|---|
 * | 1 | `permit` is a non-empty string | decode | `permit_missing` |
 * | 2 | compact JWS: three base64url segments, at most 16 KiB; header a JSON object with a string `alg`; no `crit`/`b64`/`zip` | decode | `permit_malformed` |
 * | 3 | header `alg` in the allow-list (never `none`, never HMAC), before any key is looked up | decode | `permit_alg_not_allowed` |
 * | 4 | header `kid` a non-empty string; payload a JSON object | decode | `permit_malformed` |
 * | 5 | key lookup: JWKS URL reachable within `jwksTimeoutMs` and a valid JWKS (not refetched within 1 s of a failed fetch) | keys | `permit_keys_unavailable` |
 * | 6 | a key with that `kid` exists and the signature verifies with it | keys, signature | `permit_signature_invalid` |
 * | 7 | header `typ` is exactly `permit+jwt` (RFC 8725 section 3.11, explicit typing) | claims | `permit_claim_invalid` |
 * | 8 | claims present with their types: `iss aud sub sid jti iat exp tool act_hash` (strings / NumericDates), `nbf`, `decision_id` and `labels` (strings) when present | claims | `permit_claim_invalid` |
 * | 9 | `iss` equals the issuer; `aud` contains the audience; `sub`/`sid` equal the expected agent and session (checker only, when given) | claims | `permit_claim_invalid` |
 * | 10 | `exp` not passed (`now < exp + tolerance`) | claims | `permit_expired` |
 * | 11 | `nbf` not in the future (`nbf <= now + tolerance`) | claims | `permit_not_yet_valid` |
 * | 12 | `iat` not in the future (`iat <= now + tolerance`) and `0 < exp - iat <= 300` s | claims | `permit_claim_invalid` |
 * | 13 | `tool` equals `normalizeToolName(expected tool)` | binding | `permit_tool_mismatch` |
 * | 14 | `act_hash` equals `actionHash(tool, args)` (args not a plain object of JSON values: also this code) | binding | `permit_args_mismatch` |
 * | 15 | verifier only, with `refuseLabels`: the `labels` claim holds none of them | verifier | `permit_label_refused` |
 * | 16 | verifier only: the `jti`, scoped by issuer, is claimed in the replay store (with the permit's `iat`) | verifier | `permit_replayed` / `permit_store_unavailable` / `permit_replay_unknown` |
 *
 * @packageDocumentation
 */

import { msOption, optionError, refuseUnknownKeys } from '../internal/option-kit.js';
import { hasProcessMemory } from '../internal/runtime.js';
import { isThenable } from '../internal/thenable.js';
import { createMemoryReplayStore } from '../replay/memory.js';
import { REPLAY_UNKNOWN_CODE, type ReplayStore, ReplayUnknownError } from '../replay/types.js';
import { createTelemetry, type TelemetryOption, validateTelemetry } from '../telemetry.js';
import { type ActionBinding, type BoundPermit, bindAction, bindHashedAction, checkActionBinding } from './binding.js';
import { type ClaimExpectation, checkClaims, MAX_PERMIT_LIFETIME_SEC, type PermitClaims } from './claims.js';
import { decodePermit } from './decode.js';
import { sha256b64url } from './hash.js';
import { createKeyResolver, KEY_SOURCE_DEFAULTS, type KeyResolver, type PermitKeySource } from './keys.js';
import { nonEmptyString, refuse, withDeadline } from './refuse.js';
import { verifySignature } from './signature.js';

export type { PermitClaims } from './claims.js';

/** Options of {@link createPermitVerifier}. */
export interface PermitVerifierOptions {
  /**
   * The PDP's public keys: a JWKS URL (`http:`/`https:`, string or URL; fetched lazily, cached, one
   * remote key set per verifier), a JWKS object (`{ keys: [...] }`, public keys only), or one public
   * `KeyObject` / `CryptoKey`.
   */
  keys: PermitKeySource;
  /** Expected `iss` claim, compared exactly. */
  issuer: string;
  /** This service's name(s): the permit's `aud` must contain one of them. */
  audience: string | string[];
  /**
   * Allowed JWS `alg` values (RFC 7518 / RFC 8037 names). `none` and HMAC (`HS*`) are refused at
   * construction (RFC 8725 section 3.1). @defaultValue `['EdDSA', 'ES256']`
   */
  algorithms?: string[] | undefined;
  /** Clock tolerance for `exp`, `nbf` and `iat`, in seconds, 0 to 300. @defaultValue 5 */
  clockToleranceSec?: number | undefined;
  /**
   * Where used `jti`s are remembered. Share one store (e.g. `createRedisReplayStore`) between every
   * replica of a service. Required where isolates share no memory (Cloudflare Workers, Vercel Edge:
   * `agent-pep/replay/durable-object`), since a per-isolate store would let a permit be used once in
   * every isolate. @defaultValue a new `createMemoryReplayStore()` per verifier (Node, Deno, Bun)
   */
  replayStore?: ReplayStore | undefined;
  /** Deadline of one JWKS fetch (JWKS URL only), in milliseconds. @defaultValue 1500 */
  jwksTimeoutMs?: number | undefined;
  /**
   * After a successful JWKS fetch, how long an unknown `kid` is answered from the cache instead of
   * fetching again (JWKS URL only), in milliseconds. @defaultValue 30000
   */
  jwksCooldownMs?: number | undefined;
  /** Deadline of one `replayStore.claim`, in milliseconds; a claim that takes longer refuses. @defaultValue 2000 */
  storeTimeoutMs?: number | undefined;
  /**
   * Session labels this service will not act under (docs/permits.md): a permit whose `labels` claim
   * holds one of them is refused with `permit_label_refused` (before the replay claim, so it is not
   * used up), whatever the PDP decided; e.g. `['untrusted']` to refuse to act for a session that read
   * untrusted content. @defaultValue [] (no label refused)
   */
  refuseLabels?: string[] | undefined;
  /**
   * OpenTelemetry (docs/telemetry.md): counts every `verify` in `pep.permit.verifications` by result
   * (`ok` or the error code); `true` for the global meter, or `{ meter }`. Needs `@opentelemetry/api`.
   * @defaultValue undefined (nothing recorded, nothing loaded)
   */
  telemetry?: TelemetryOption | false | undefined;
}

/** What a side-effecting service calls before it acts. */
export interface PermitVerifier {
  /**
   * Verifies `permit` for exactly this action and consumes it.
   * @param permit - the compact JWS the agent presented (e.g. from an `authorization: Permit <jws>` header)
   * @param action - `tool`: the tool about to run (any spelling; normalized); `args`: the JSON
   *   arguments it will run with (snapshotted when `verify` is called)
   * @returns the verified claims; the permit is now used up
   * @throws PermitVerificationError (as a rejection) with the `code` of the first failed check
   */
  verify(permit: string, action: { tool: string; args: Record<string, unknown> }): Promise<PermitClaims>;
}

/** What the permit must be bound to, for {@link PermitChecker.check}. @internal */
export interface PermitExpectation {
  /** The tool about to run, any spelling. */
  tool: string;
  /** The args it will run with. */
  args: Record<string, unknown>;
  /** Expected `sub` (the agent id), when given. */
  subject?: string | undefined;
  /** Expected `sid` (the session), when given. */
  session?: string | undefined;
  /** The `aud` must contain one of these, when given. */
  audience?: string | string[] | undefined;
  /**
   * What the client's rule 5 decoded and hashed for this permit: used only when `bound.permit` is the
   * permit checked and `bound.args` is `args` itself (the payload is not decoded again, the args not
   * snapshotted and hashed again); the signature and every claim are checked as always.
   */
  bound?: BoundPermit | undefined;
}

/** Every check but the replay claim. @internal */
export interface PermitChecker {
  /**
   * @returns the verified claims
   * @throws PermitVerificationError (as a rejection) for the first failed check
   */
  check(permit: string, expected: PermitExpectation): Promise<PermitClaims>;
}

/** How the client checks permits it receives (docs/permits.md, and `guardTool`). */
export interface PermitsOptions {
  /** The PDP's public keys: a JWKS URL (`https:` or `http:`), a JWKS object, or a KeyObject/CryptoKey. */
  keys: PermitKeySource;
  /** Expected `iss` claim, exactly. */
  issuer: string;
  /** Allowed JWS `alg` values. `none` and HMAC algorithms are always refused. @defaultValue `['EdDSA', 'ES256']` */
  algorithms?: string[];
  /** Clock tolerance for `exp`/`nbf`/`iat`, in seconds. @defaultValue 5 */
  clockToleranceSec?: number;
}

/** Options of {@link createPermitChecker}: the client's `permits` plus the JWKS bounds. @internal */
export interface PermitCheckerOptions extends PermitsOptions {
  /** Deadline of one JWKS fetch, in milliseconds. @defaultValue 1500 */
  jwksTimeoutMs?: number | undefined;
  /** Refetch cooldown for an unknown `kid`, in milliseconds. @defaultValue 30000 */
  jwksCooldownMs?: number | undefined;
}

/**
 * Defaults of the verifier and the client's permit checks, each defined once here; the public
 * `DEFAULTS` shows `algorithms`, `clockToleranceSec` and `maxPermitLifetimeSec` from this object.
 * @internal
 */
export const PERMIT_DEFAULTS = Object.freeze({
  /** Allowed JWS algorithms when `algorithms` is not given. */
  algorithms: Object.freeze(['EdDSA', 'ES256']) as readonly string[],
  /** Clock tolerance for `exp`, `nbf` and `iat`, in seconds. */
  clockToleranceSec: 5,
  /** Longest lifetime `exp - iat`, in seconds. */
  maxPermitLifetimeSec: MAX_PERMIT_LIFETIME_SEC,
  jwksTimeoutMs: KEY_SOURCE_DEFAULTS.jwksTimeoutMs,
  jwksCooldownMs: KEY_SOURCE_DEFAULTS.jwksCooldownMs,
  storeTimeoutMs: 2000,
  /** Largest `clockToleranceSec` accepted, in seconds. */
  maxClockToleranceSec: 300,
});

/**
 * How long after `exp` a claimed jti is remembered, in seconds: the largest clock tolerance (300 s)
 * plus 60 s of skew between verifiers sharing a store. A store holds each claimed key for the
 * permit's remaining lifetime plus this.
 */
export const REPLAY_MARGIN_SEC = PERMIT_DEFAULTS.maxClockToleranceSec + 60;

/** Asymmetric JWS algorithms a verifier may allow (RFC 7518, RFC 8037, RFC 9864). */
const ASYMMETRIC_ALGS: ReadonlySet<string> = new Set([
  'EdDSA',
  'Ed25519',
  'ES256',
  'ES384',
  'ES512',
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
]);

const KNOWN_CHECKER_OPTIONS: ReadonlySet<string> = new Set([
  'keys',
  'issuer',
  'algorithms',
  'clockToleranceSec',
  'jwksTimeoutMs',
  'jwksCooldownMs',
]);
const KNOWN_VERIFIER_OPTIONS: ReadonlySet<string> = new Set([
  ...KNOWN_CHECKER_OPTIONS,
  'audience',
  'replayStore',
  'storeTimeoutMs',
  'telemetry',
  'refuseLabels',
]);

/** Where the options sit: `scope` for the message, `prefix` for `err.option` (`''` or `'permits'`). */
interface At {
  scope: string;
  prefix: string;
}

function fail(at: At, key: string, problem: string): never {
  optionError(at.scope, at.prefix === '' ? key : `${at.prefix}.${key}`, problem);
}

/**
 * `none` and HMAC are refused for the option as a whole (`algorithms`): no list may hold them. Any
 * other entry that is not an asymmetric JWS algorithm names itself (`algorithms.<index>`).
 */
function validateAlgorithms(v: unknown, at: At): string[] {
  if (v === undefined) return [...PERMIT_DEFAULTS.algorithms];
  if (!Array.isArray(v) || v.length === 0) fail(at, 'algorithms', 'expected a non-empty array');
  if (v.some((a) => typeof a === 'string' && /^(none|HS\d+)$/i.test(a))) {
    fail(at, 'algorithms', "'none' and HMAC are never allowed (RFC 8725 section 3.1)");
  }
  v.forEach((a: unknown, i) => {
    if (typeof a !== 'string') fail(at, `algorithms.${i}`, 'expected a string');
    if (!ASYMMETRIC_ALGS.has(a)) fail(at, `algorithms.${i}`, 'not an asymmetric JWS algorithm this verifier supports');
  });
  return [...new Set(v as string[])];
}

function validateMs(v: unknown, at: At, key: string, dflt: number): number {
  return msOption(at.scope, at.prefix === '' ? key : `${at.prefix}.${key}`, v, dflt);
}

function validateTolerance(v: unknown, at: At): number {
  if (v === undefined) return PERMIT_DEFAULTS.clockToleranceSec;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > PERMIT_DEFAULTS.maxClockToleranceSec) {
    fail(at, 'clockToleranceSec', `expected seconds between 0 and ${PERMIT_DEFAULTS.maxClockToleranceSec}`);
  }
  return v;
}

function validateRefuseLabels(v: unknown, at: At): ReadonlySet<string> {
  if (v === undefined) return new Set();
  if (!Array.isArray(v)) fail(at, 'refuseLabels', 'expected an array of label strings');
  v.forEach((label: unknown, i) => {
    if (!nonEmptyString(label)) fail(at, `refuseLabels.${i}`, 'expected a non-empty string');
  });
  return new Set(v as string[]);
}

function validateAudience(v: unknown, at: At): string[] {
  if (typeof v === 'string' && v.length > 0) return [v];
  if (Array.isArray(v) && v.length > 0 && v.every(nonEmptyString)) return [...v];
  fail(at, 'audience', 'expected a non-empty string or a non-empty array of them');
}

interface Core {
  issuer: string;
  algorithms: string[];
  allowed: ReadonlySet<string>;
  toleranceSec: number;
  resolve: KeyResolver;
}

function buildCore(options: unknown, at: At, known: ReadonlySet<string>): Core {
  if (typeof options !== 'object' || options === null) {
    optionError(at.scope, at.prefix === '' ? '(options)' : at.prefix, 'expected an object');
  }
  refuseUnknownKeys(at.scope, options, known, at.prefix);
  const o = options as Record<string, unknown>;
  if (!nonEmptyString(o.issuer)) fail(at, 'issuer', 'expected a non-empty string');
  const algorithms = validateAlgorithms(o.algorithms, at);
  const toleranceSec = validateTolerance(o.clockToleranceSec, at);
  const timeoutMs = validateMs(o.jwksTimeoutMs, at, 'jwksTimeoutMs', PERMIT_DEFAULTS.jwksTimeoutMs);
  const cooldownMs = validateMs(o.jwksCooldownMs, at, 'jwksCooldownMs', PERMIT_DEFAULTS.jwksCooldownMs);
  const resolve = createKeyResolver(o.keys, {
    scope: at.scope,
    path: at.prefix === '' ? 'keys' : `${at.prefix}.keys`,
    timeoutMs,
    cooldownMs,
  });
  return { issuer: o.issuer, algorithms, allowed: new Set(algorithms), toleranceSec, resolve };
}

/** Checks 1 to 14 (everything but the replay claim). */
async function runChecks(
  core: Core,
  permit: unknown,
  who: Pick<ClaimExpectation, 'audiences' | 'subject' | 'session'>,
  binding: ActionBinding,
  payload?: Record<string, unknown>,
): Promise<PermitClaims> {
  const decoded = decodePermit(permit, core.allowed, payload);
  // A key given as an object is there at once; a key set may have to be fetched.
  const found = core.resolve(decoded.header, decoded.segments);
  const keys = Array.isArray(found) ? found : await found;
  await verifySignature(permit as string, keys, core.algorithms, decoded.header.alg);
  const claims = checkClaims(decoded, { ...who, issuer: core.issuer, toleranceSec: core.toleranceSec });
  checkActionBinding(claims, binding);
  return { ...claims };
}

/**
 * Creates the checker the client uses in `guardTool`: every check of {@link createPermitVerifier}
 * but the replay claim (an agent must not consume the permit that the service will consume).
 *
 * @param options - the client's `permits` (`{ keys, issuer, algorithms?, clockToleranceSec? }`) plus
 *   `jwksTimeoutMs?` (ms, default 1500) and `jwksCooldownMs?` (ms, default 30000)
 * @returns `{ check(permit, { tool, args, subject?, session?, audience? }) }`, resolving the claims;
 *   `aud` is compared only when `audience` is given, `sub`/`sid` only when `subject`/`session` are
 * @throws TypeError synchronously, for a bad option (`err.option` is `'permits.<key>'`)
 * @internal
 */
export function createPermitChecker(options: PermitCheckerOptions): PermitChecker {
  const core = buildCore(options, { scope: 'createPep', prefix: 'permits' }, KNOWN_CHECKER_OPTIONS);
  return {
    check(permit: string, expected: PermitExpectation): Promise<PermitClaims> {
      const { bound } = expected;
      const reuse = bound !== undefined && bound.permit === permit && bound.args === expected.args;
      const binding = reuse ? bindHashedAction(expected.tool, bound.actHash) : bindAction(expected.tool, expected.args);
      const audiences =
        expected.audience === undefined
          ? undefined
          : typeof expected.audience === 'string'
            ? [expected.audience]
            : expected.audience;
      const who = { audiences, subject: expected.subject, session: expected.session };
      return runChecks(core, permit, who, binding, reuse ? bound.payload : undefined);
    },
  };
}

/**
 * The replay store of a verifier given none: a memory store, where one process's memory serves every
 * request (Node, Deno, Bun). Elsewhere (workerd, Vercel Edge, a runtime not known) none: a map per
 * isolate is not single use (docs/runtimes.md).
 * @throws TypeError (`err.option` = `'replayStore'`) where the runtime has no process memory
 */
function defaultReplayStore(at: At): ReplayStore {
  if (!hasProcessMemory()) {
    fail(
      at,
      'replayStore',
      'required on this runtime: its isolates share no memory (use agent-pep/replay/durable-object or another shared store)',
    );
  }
  return createMemoryReplayStore();
}

/**
 * Creates the verifier a side-effecting service runs before it acts on a permit
 * (docs/permits.md).
 *
 * @param options - `keys`: a JWKS URL (string or URL), a JWKS object or a public KeyObject/CryptoKey;
 *   `issuer`: the expected `iss`; `audience`: this service's name (string or list);
 *   `algorithms?` (default `['EdDSA', 'ES256']`); `clockToleranceSec?` (seconds, 0 to 300, default 5);
 *   `replayStore?` (default: a memory store per verifier); `jwksTimeoutMs?` (ms, default 1500);
 *   `jwksCooldownMs?` (ms, default 30000); `storeTimeoutMs?` (ms, default 2000); `telemetry?`
 *   (`true` or `{ meter }`: count every verification in `pep.permit.verifications`); `refuseLabels?`
 *   (session labels this service will not act under: `permit_label_refused`)
 * @returns a {@link PermitVerifier}; `verify(permit, { tool, args })` resolves the claims after the
 *   `jti` has been claimed, and rejects with a `PermitVerificationError` otherwise
 * @throws TypeError synchronously, for a bad option, with `err.option` naming it (`'keys'`, `'issuer'`,
 *   `'audience'`, `'algorithms'`, `'clockToleranceSec'`, `'replayStore'`, `'jwksTimeoutMs'`, ...): missing
 *   issuer/audience, a key source that is not a JWKS URL/object or a public key, `none`/HMAC/unknown
 *   algorithms, out-of-range numbers, a bad `telemetry`, an unknown key (a misspelt `replayStore` never falls back to memory)
 * @throws TypeError `replayStore` omitted where isolates share no memory (workerd, Vercel Edge; docs/runtimes.md)
 * @throws Error naming `@opentelemetry/api` when `telemetry` is set and that package is not installed
 * @throws PermitVerificationError (from `verify`) `permit_missing` / `permit_malformed`: nothing, or not a compact JWS with `alg`, `kid` and a JSON payload
 * @throws PermitVerificationError (from `verify`) `permit_alg_not_allowed`: `alg` outside the allow-list (`none` and `HS*` always), checked before any key lookup
 * @throws PermitVerificationError (from `verify`) `permit_signature_invalid`: bad signature, or no key with the permit's `kid`
 * @throws PermitVerificationError (from `verify`) `permit_keys_unavailable`: the JWKS URL is down, hung or serves no valid key set
 * @throws PermitVerificationError (from `verify`) `permit_expired` / `permit_not_yet_valid` / `permit_claim_invalid`: time and claim checks (wrong `typ`, `iss`, `aud`, missing claims, `iat` in the future, lifetime over 300 s)
 * @throws PermitVerificationError (from `verify`) `permit_tool_mismatch` / `permit_args_mismatch`: the permit is bound to another action
 * @throws PermitVerificationError (from `verify`) `permit_label_refused`: the permit's `labels` claim holds one of `refuseLabels`
 * @throws PermitVerificationError (from `verify`) `permit_replayed` / `permit_store_unavailable`: used before, or the replay store could not answer
 * @throws PermitVerificationError (from `verify`) `permit_replay_unknown`: the replay store lost its claims (Redis lost its data) after the permit was issued, so it may have been used (docs/permits.md)
 * @remarks
 * - Every check runs in the order listed in this module's documentation; the `jti` is claimed only
 *   after every other check passed, so a refused permit is never burnt.
 * - Follows RFC 8725 (JWT BCP): an explicit algorithm allow-list, never `none` or HMAC (a public key
 *   can never act as an HMAC secret), explicit typing (`typ: permit+jwt`), issuer and audience checked.
 *   Header keys (`jku`, `jwk`, `x5u`) are ignored; keys only ever come from `options.keys`.
 * - With a single KeyObject/CryptoKey, `kid` must be present but selects nothing.
 * - Fails closed: a JWKS URL that cannot answer within `jwksTimeoutMs` is `permit_keys_unavailable`,
 *   and for a second after a failed fetch every lookup is refused without fetching (at most one fetch a
 *   second against a failing endpoint); an unknown `kid` refetches at most once per `jwksCooldownMs`.
 *   A replay store that throws, rejects, hangs past `storeTimeoutMs` or answers anything but a boolean
 *   is `permit_store_unavailable`. Neither ever lets a permit through.
 * - `args` are snapshotted and hashed when `verify` is called; args that are not a plain object of
 *   JSON values (or a tool name that normalizes to nothing) reject with `permit_args_mismatch`
 *   (`permit_tool_mismatch`) rather than throwing a TypeError, so one `catch` handles every refusal.
 * - The replay key is a hash of `[iss, jti]`, kept until `exp` + 360 s (past any verifier's clock
 *   tolerance). Use one shared store (`createRedisReplayStore`) for all replicas of a service, or a
 *   permit can run once per replica.
 * - Messages name the failed check, never the permit, args or keys; jose's error is kept as `cause`.
 * @example
 * ```ts
 * import { createPermitVerifier, createMemoryReplayStore, PermitVerificationError } from 'agent-pep';
 *
 * const verifier = createPermitVerifier({
 *   keys: 'https://pdp.example/.well-known/jwks.json',
 *   issuer: 'https://pdp.example',
 *   audience: 'payments-service',
 *   replayStore: createMemoryReplayStore(),
 * });
 * try {
 *   const claims = await verifier.verify(permitId, { tool: 'refund_payment', args });
 *   // run the effect, exactly with `args`
 * } catch (e) {
 *   if (e instanceof PermitVerificationError) console.warn('refused', e.code);
 *   else throw e;
 * }
 * ```
 */
export function createPermitVerifier(options: PermitVerifierOptions): PermitVerifier {
  const at: At = { scope: 'createPermitVerifier', prefix: '' };
  const core = buildCore(options, at, KNOWN_VERIFIER_OPTIONS);
  const audiences = validateAudience(options.audience, at);
  const storeTimeoutMs = validateMs(options.storeTimeoutMs, at, 'storeTimeoutMs', PERMIT_DEFAULTS.storeTimeoutMs);
  const refusedLabels = validateRefuseLabels(options.refuseLabels, at);
  const store = options.replayStore ?? defaultReplayStore(at);
  if (typeof store !== 'object' || store === null || typeof store.claim !== 'function') {
    fail(at, 'replayStore', 'expected { claim(key, expiresAtMs) }');
  }
  const telemetryOption = validateTelemetry(options.telemetry, (path, problem) => fail(at, path, problem));
  const telemetry = telemetryOption === undefined ? undefined : createTelemetry(telemetryOption);
  const toleranceMs = core.toleranceSec * 1000;

  async function checkThenClaim(permit: string, binding: ActionBinding): Promise<PermitClaims> {
    const claims = await runChecks(core, permit, { audiences }, binding);
    if (refusedLabels.size > 0 && claims.labels?.some((label) => refusedLabels.has(label))) {
      throw refuse('permit_label_refused', 'the session carries a label this service refuses');
    }
    const key = sha256b64url(JSON.stringify([claims.iss, claims.jti]));
    // Remember the jti past any verifier's acceptance window: the store may be shared by verifiers
    // with other tolerances (up to 300 s), and a clock between them may lag by a little.
    const expiresAtMs = Math.ceil((claims.exp + REPLAY_MARGIN_SEC) * 1000);
    // The store's answer: a boolean is taken as it is (no timer, no extra tick); only a promise is
    // awaited, under storeTimeoutMs. A throw or a rejection is the store being unavailable.
    let first: unknown;
    try {
      first = store.claim(key, expiresAtMs, claims.iat * 1000);
      if (isThenable(first)) {
        first = await withDeadline(Promise.resolve(first), storeTimeoutMs, () => new Error('replay store deadline'));
      }
    } catch (e) {
      if (e instanceof ReplayUnknownError || (e as { code?: unknown } | null)?.code === REPLAY_UNKNOWN_CODE) {
        throw refuse(REPLAY_UNKNOWN_CODE, 'the replay store lost its claims since the permit was issued', e);
      }
      throw refuse('permit_store_unavailable', 'the replay store could not claim the permit', e);
    }
    if (first === true) return claims;
    if (first === false) {
      // the permit may have expired between the checks and the claim: say so rather than "replayed"
      if (Date.now() >= claims.exp * 1000 + toleranceMs) throw refuse('permit_expired', 'the permit has expired');
      throw refuse('permit_replayed', 'the permit has already been used');
    }
    throw refuse('permit_store_unavailable', 'the replay store gave no boolean answer');
  }

  return {
    verify(permit, action) {
      const verification = checkThenClaim(permit, bindAction(action?.tool, action?.args));
      return telemetry ? telemetry.countPermit(verification) : verification;
    },
  };
}
