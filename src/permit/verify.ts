/**
 * Permit verification (CONTRACT.md section 4): the only jose import for permits.
 *
 * One code path: {@link createPermitChecker} runs every check but the replay claim (the client's
 * `guardTool` uses it); {@link createPermitVerifier} runs the checker, then claims the `jti` once.
 *
 * The checks, in this order (the first that fails decides the code):
 *
 * | # | check | code |
 * |---|---|---|
 * | 1 | `permit` is a non-empty string | `permit_missing` |
 * | 2 | compact JWS: three base64url segments, at most 16 KiB; header a JSON object with a string `alg`; no `crit`/`b64`/`zip` | `permit_malformed` |
 * | 3 | header `alg` in the allow-list (never `none`, never HMAC), before any key is looked up | `permit_alg_not_allowed` |
 * | 4 | header `kid` a non-empty string; payload a JSON object | `permit_malformed` |
 * | 5 | key lookup: JWKS URL reachable within `jwksTimeoutMs` and a valid JWKS | `permit_keys_unavailable` |
 * | 6 | a key with that `kid` exists and the signature verifies with it | `permit_signature_invalid` |
 * | 7 | header `typ` is exactly `permit+jwt` (RFC 8725 section 3.11, explicit typing) | `permit_claim_invalid` |
 * | 8 | claims present with their types: `iss aud sub sid jti iat exp tool act_hash` (strings / NumericDates), `nbf` and `decision_id` when present | `permit_claim_invalid` |
 * | 9 | `iss` equals the issuer; `aud` contains the audience; `sub`/`sid` equal the expected agent and session (checker only, when given) | `permit_claim_invalid` |
 * | 10 | `exp` not passed (`now < exp + tolerance`) | `permit_expired` |
 * | 11 | `nbf` not in the future (`nbf <= now + tolerance`) | `permit_not_yet_valid` |
 * | 12 | `iat` not in the future (`iat <= now + tolerance`) and `0 < exp - iat <= 300` s | `permit_claim_invalid` |
 * | 13 | `tool` equals `normalizeToolName(expected tool)` | `permit_tool_mismatch` |
 * | 14 | `act_hash` equals `actionHash(tool, args)` (args not a plain object of JSON values: also this code) | `permit_args_mismatch` |
 * | 15 | verifier only: the `jti`, scoped by issuer, is claimed in the replay store | `permit_replayed` / `permit_store_unavailable` |
 *
 * @packageDocumentation
 */
import { KeyObject } from 'node:crypto';
import {
  type CryptoKey,
  compactVerify,
  createLocalJWKSet,
  createRemoteJWKSet,
  type FlattenedJWSInput,
  type JSONWebKeySet,
  type JWSHeaderParameters,
} from 'jose';
import { type PermitErrorCode, PermitVerificationError } from '../errors.js';
import { snapshotJsonObject } from '../internal/json.js';
import { optionError } from '../internal/option-error.js';
import { DEFAULTS, type PermitKeySource, type PermitsOptions } from '../options.js';
import { createMemoryReplayStore, SYNC_CLAIM } from '../replay/memory.js';
import type { ReplayStore } from '../replay/types.js';
import { createTelemetry, type TelemetryOption, validateTelemetry } from '../telemetry.js';
import { actionHashOfSnapshot, sha256b64url } from './hash.js';
import { normalizeToolName } from './normalize.js';

/** The claims of a verified permit (CONTRACT.md section 4; RFC 7519 section 4 for the registered ones). */
export interface PermitClaims {
  /** Issuer: the PDP, equal to the configured `issuer`. */
  iss: string;
  /** Audience: the executing service(s). */
  aud: string | string[];
  /** Subject: the agent id the decision was made for. */
  sub: string;
  /** The session the decision was made in. */
  sid: string;
  /** Unique permit id; usable once. */
  jti: string;
  /** Issued at, NumericDate (seconds since the Unix epoch). */
  iat: number;
  /** Expiry, NumericDate (seconds since the Unix epoch); `exp - iat` is at most 300. */
  exp: number;
  /** Not before, NumericDate (seconds since the Unix epoch), when present. */
  nbf?: number;
  /** The normalized tool name the permit is bound to. */
  tool: string;
  /** The action hash (`actionHash(tool, args)`) the permit is bound to. */
  act_hash: string;
  /** The PDP's decision id, for its evidence feed, when present. */
  decision_id?: string;
  /** Other claims the PDP added, unchecked. */
  [claim: string]: unknown;
}

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
   * replica of a service. @defaultValue a new `createMemoryReplayStore()` per verifier
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
   * OpenTelemetry (CONTRACT.md section 10): counts every `verify` in `pep.permit.verifications` by result
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
}

/** Every check but the replay claim. @internal */
export interface PermitChecker {
  /**
   * @returns the verified claims
   * @throws PermitVerificationError (as a rejection) for the first failed check
   */
  check(permit: string, expected: PermitExpectation): Promise<PermitClaims>;
}

/** Options of {@link createPermitChecker}: the client's `permits` plus the JWKS bounds. @internal */
export interface PermitCheckerOptions extends PermitsOptions {
  /** Deadline of one JWKS fetch, in milliseconds. @defaultValue 1500 */
  jwksTimeoutMs?: number | undefined;
  /** Refetch cooldown for an unknown `kid`, in milliseconds. @defaultValue 30000 */
  jwksCooldownMs?: number | undefined;
}

/** Defaults of this module (the shared ones live in `DEFAULTS`). @internal */
export const PERMIT_DEFAULTS = Object.freeze({
  jwksTimeoutMs: 1500,
  jwksCooldownMs: 30_000,
  storeTimeoutMs: 2000,
  /** Longest compact JWS accepted, in characters; longer input is `permit_malformed` unread. */
  maxPermitLength: 16_384,
  /** The `typ` header a permit must carry (RFC 8725 section 3.11). */
  typ: 'permit+jwt',
});

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

const B64URL = /^[A-Za-z0-9_-]*$/;

/** How long after `exp` a claimed jti is remembered: the largest clock tolerance (300 s) plus 60 s of skew. */
const REPLAY_MARGIN_SEC = 360;
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

type VerifyKey = CryptoKey | KeyObject;
type KeyResolver = (header: JWSHeaderParameters, token: FlattenedJWSInput) => Promise<VerifyKey[]>;

/**
 * Throws the option `TypeError` for `what` (`'<path>: <problem>'`), with `err.option` = the path
 * relative to the options object (`'permits.keys'` from createPep, `'keys'` from createPermitVerifier).
 */
function fail(what: string): never {
  const at = what.indexOf(': ');
  const full = at < 0 ? what : what.slice(0, at);
  const path = full.startsWith('createPermitVerifier.') ? full.slice('createPermitVerifier.'.length) : full;
  optionError('agent-pep', path, at < 0 ? 'invalid' : what.slice(at + 2));
}

function refuse(code: PermitErrorCode, message: string, cause?: unknown): PermitVerificationError {
  return new PermitVerificationError(
    code,
    `permit refused (${code}): ${message}`,
    cause === undefined ? {} : { cause },
  );
}

function nonEmptyString(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0;
}

function joseCode(e: unknown): string | undefined {
  if (typeof e === 'object' && e !== null && 'code' in e && typeof e.code === 'string') return e.code;
  return undefined;
}

/** Rejects with `make()` when `promise` has not settled within `ms`. */
function withDeadline<T>(promise: Promise<T>, ms: number, make: () => Error): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(make()), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

function validateAlgorithms(v: unknown, name: string): string[] {
  if (v === undefined) return [...DEFAULTS.permitAlgorithms];
  if (!Array.isArray(v) || v.length === 0) fail(`${name}.algorithms: expected a non-empty array`);
  for (const a of v) {
    if (typeof a !== 'string') fail(`${name}.algorithms: expected strings`);
    if (/^(none|HS\d+)$/i.test(a)) fail(`${name}.algorithms: 'none' and HMAC are never allowed`);
    if (!ASYMMETRIC_ALGS.has(a)) fail(`${name}.algorithms: unsupported algorithm`);
  }
  return [...new Set(v as string[])];
}

function validateMs(v: unknown, name: string, dflt: number): number {
  if (v === undefined) return dflt;
  if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0 || v > 600_000) {
    fail(`${name}: expected a positive integer number of milliseconds`);
  }
  return v;
}

function validateTolerance(v: unknown, name: string): number {
  if (v === undefined) return DEFAULTS.clockToleranceSec;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 300) {
    fail(`${name}.clockToleranceSec: expected seconds between 0 and 300`);
  }
  return v;
}

function validateAudience(v: unknown, name: string): string[] {
  if (typeof v === 'string' && v.length > 0) return [v];
  if (Array.isArray(v) && v.length > 0 && v.every(nonEmptyString)) return [...v];
  fail(`${name}: expected a non-empty string or a non-empty array of them`);
}

const CryptoKeyClass = (globalThis as { CryptoKey?: abstract new (...args: never[]) => unknown }).CryptoKey;

function isCryptoKey(v: unknown): v is CryptoKey {
  if (typeof v !== 'object' || v === null) return false;
  return CryptoKeyClass !== undefined
    ? v instanceof CryptoKeyClass
    : Object.prototype.toString.call(v) === '[object CryptoKey]';
}

function isJwks(v: object): v is JSONWebKeySet {
  return 'keys' in v && Array.isArray((v as { keys: unknown }).keys);
}

/** Builds the key resolver for one verifier/checker; validates the key source synchronously. */
function keyResolverFor(keys: unknown, name: string, timeoutMs: number, cooldownMs: number): KeyResolver {
  if (typeof keys === 'string' || keys instanceof URL) {
    let url: URL;
    try {
      url = new URL(String(keys));
    } catch {
      fail(`${name}.keys: not a valid URL`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') fail(`${name}.keys: URL must be http(s)`);
    if (url.username !== '' || url.password !== '') fail(`${name}.keys: URL must not carry credentials`);
    const remote = createRemoteJWKSet(url, { timeoutDuration: timeoutMs, cooldownDuration: cooldownMs });
    // jose aborts the fetch after timeoutMs; the outer deadline also bounds body reads and key imports
    const bound = timeoutMs + 500;
    return (header, token) =>
      fromJwks(
        withDeadline(remote(header, token), bound, () => new Error('JWKS lookup deadline')),
        /* remote */ true,
      );
  }
  if (keys instanceof KeyObject) {
    if (keys.type !== 'public') fail(`${name}.keys: expected a public key (never a secret or private key)`);
    const list = [keys];
    return async () => list;
  }
  if (isCryptoKey(keys)) {
    if (keys.type !== 'public') fail(`${name}.keys: expected a public key (never a secret or private key)`);
    if (!keys.usages.includes('verify')) fail(`${name}.keys: the key's usages must include 'verify'`);
    const list = [keys];
    return async () => list;
  }
  if (typeof keys === 'object' && keys !== null && isJwks(keys)) {
    for (const jwk of keys.keys) {
      if (typeof jwk !== 'object' || jwk === null) fail(`${name}.keys: every JWKS member must be an object`);
      if (jwk.kty === 'oct') fail(`${name}.keys: symmetric (oct) keys are never allowed`);
      if ('d' in jwk || 'p' in jwk || 'k' in jwk || 'priv' in jwk)
        fail(`${name}.keys: the JWKS must hold public keys only`);
    }
    let local: ReturnType<typeof createLocalJWKSet>;
    try {
      local = createLocalJWKSet(keys);
    } catch {
      fail(`${name}.keys: not a valid JWKS`);
    }
    return (header, token) => fromJwks(local(header, token), false);
  }
  fail(`${name}.keys: expected a JWKS URL, a JWKS object ({ keys: [...] }), or a public KeyObject/CryptoKey`);
}

/** Maps what a JWKS resolver did to keys, or to `permit_signature_invalid` / `permit_keys_unavailable`. */
async function fromJwks(lookup: Promise<CryptoKey>, remote: boolean): Promise<VerifyKey[]> {
  try {
    return [await lookup];
  } catch (e) {
    const code = joseCode(e);
    if (code === 'ERR_JWKS_NO_MATCHING_KEY') {
      throw refuse('permit_signature_invalid', 'no key in the key set matches the permit kid and alg', e);
    }
    if (
      code === 'ERR_JWKS_MULTIPLE_MATCHING_KEYS' &&
      typeof e === 'object' &&
      e !== null &&
      Symbol.asyncIterator in e
    ) {
      const candidates: VerifyKey[] = [];
      for await (const k of e as AsyncIterable<CryptoKey>) candidates.push(k);
      if (candidates.length > 0) return candidates;
      throw refuse('permit_signature_invalid', 'no usable key in the key set matches the permit kid and alg', e);
    }
    throw refuse(
      'permit_keys_unavailable',
      remote
        ? 'the JWKS could not be fetched, in time, as a valid key set'
        : 'the key set holds no usable key for the permit',
      e,
    );
  }
}

interface Decoded {
  header: Record<string, unknown> & { alg: string; kid: string };
  payload: Record<string, unknown>;
}

function decodeJsonObject(segment: string): Record<string, unknown> | undefined {
  if (segment.length === 0 || !B64URL.test(segment) || segment.length % 4 === 1) return undefined;
  try {
    const v = JSON.parse(utf8.decode(Buffer.from(segment, 'base64url'))) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Checks 1 to 4: shape, `alg` allow-list, `kid`, payload; no key is touched. */
function decode(permit: unknown, allowed: ReadonlySet<string>): Decoded {
  if (typeof permit !== 'string' || permit.trim().length === 0)
    throw refuse('permit_missing', 'no permit was presented');
  if (permit.length > PERMIT_DEFAULTS.maxPermitLength) throw refuse('permit_malformed', 'the permit is too long');
  const parts = permit.split('.');
  if (parts.length !== 3) throw refuse('permit_malformed', 'not a compact JWS (three segments)');
  const [h, p, s] = parts as [string, string, string];
  if (!B64URL.test(s) || s.length % 4 === 1) throw refuse('permit_malformed', 'the signature segment is not base64url');
  const header = decodeJsonObject(h);
  if (header === undefined) throw refuse('permit_malformed', 'the protected header is not a base64url JSON object');
  if (!nonEmptyString(header.alg)) throw refuse('permit_malformed', 'the protected header has no alg');
  if (!allowed.has(header.alg)) throw refuse('permit_alg_not_allowed', 'the alg is not in the allow-list');
  if ('crit' in header || 'b64' in header || 'zip' in header) {
    throw refuse('permit_malformed', 'the protected header uses crit, b64 or zip, which permits never do');
  }
  if (!nonEmptyString(header.kid)) throw refuse('permit_malformed', 'the protected header has no kid');
  const payload = decodeJsonObject(p);
  if (payload === undefined) throw refuse('permit_malformed', 'the payload is not a base64url JSON object');
  return { header: header as Decoded['header'], payload };
}

/** Check 6: the signature, against each candidate key (jose `compactVerify`, RFC 7515). */
async function verifySignature(permit: string, keys: VerifyKey[], algorithms: string[]): Promise<void> {
  let first: unknown;
  for (const key of keys) {
    try {
      await compactVerify(permit, key, { algorithms });
      return;
    } catch (e) {
      first ??= e;
    }
  }
  const code = joseCode(first);
  if (code === 'ERR_JOSE_ALG_NOT_ALLOWED')
    throw refuse('permit_alg_not_allowed', 'the alg is not in the allow-list', first);
  if (code === 'ERR_JWS_INVALID') throw refuse('permit_malformed', 'not a valid JWS', first);
  // ERR_JWS_SIGNATURE_VERIFICATION_FAILED, or a key that cannot verify this alg (TypeError): not ours
  throw refuse('permit_signature_invalid', 'the signature does not verify with the issuer keys', first);
}

function isNumericDate(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0;
}

const REQUIRED_STRINGS = ['iss', 'sub', 'sid', 'jti', 'tool', 'act_hash'] as const;

/** Checks 7 to 12 on the verified header and payload. */
function checkClaims(
  d: Decoded,
  issuer: string,
  expected: PermitExpectation,
  audiences: string[] | undefined,
  toleranceSec: number,
): PermitClaims {
  const { header, payload: c } = d;
  if (header.typ !== PERMIT_DEFAULTS.typ) throw refuse('permit_claim_invalid', "the typ header is not 'permit+jwt'");
  for (const name of REQUIRED_STRINGS) {
    if (!nonEmptyString(c[name])) throw refuse('permit_claim_invalid', `claim '${name}' is missing or not a string`);
  }
  const aud = c.aud;
  if (!(nonEmptyString(aud) || (Array.isArray(aud) && aud.length > 0 && aud.every(nonEmptyString)))) {
    throw refuse('permit_claim_invalid', "claim 'aud' is missing or not a string (array)");
  }
  for (const name of ['iat', 'exp'] as const) {
    if (!isNumericDate(c[name]))
      throw refuse('permit_claim_invalid', `claim '${name}' is missing or not a NumericDate`);
  }
  if (c.nbf !== undefined && !isNumericDate(c.nbf))
    throw refuse('permit_claim_invalid', "claim 'nbf' is not a NumericDate");
  if (c.decision_id !== undefined && typeof c.decision_id !== 'string') {
    throw refuse('permit_claim_invalid', "claim 'decision_id' is not a string");
  }
  const claims = c as PermitClaims;
  if (claims.iss !== issuer) throw refuse('permit_claim_invalid', "claim 'iss' is not the expected issuer");
  if (audiences !== undefined) {
    const got = typeof claims.aud === 'string' ? [claims.aud] : claims.aud;
    if (!got.some((a) => audiences.includes(a)))
      throw refuse('permit_claim_invalid', "claim 'aud' is not this service");
  }
  if (expected.subject !== undefined && claims.sub !== expected.subject) {
    throw refuse('permit_claim_invalid', "claim 'sub' is not the expected agent");
  }
  if (expected.session !== undefined && claims.sid !== expected.session) {
    throw refuse('permit_claim_invalid', "claim 'sid' is not the expected session");
  }
  const now = Date.now() / 1000;
  if (now >= claims.exp + toleranceSec) throw refuse('permit_expired', 'the permit has expired');
  if (claims.nbf !== undefined && claims.nbf > now + toleranceSec) {
    throw refuse('permit_not_yet_valid', 'the permit is not valid yet (nbf)');
  }
  if (claims.iat > now + toleranceSec) throw refuse('permit_claim_invalid', "claim 'iat' is in the future");
  const lifetime = claims.exp - claims.iat;
  if (!(lifetime > 0 && lifetime <= DEFAULTS.maxPermitLifetimeSec)) {
    throw refuse(
      'permit_claim_invalid',
      `the lifetime exp - iat is not within (0, ${DEFAULTS.maxPermitLifetimeSec}] s`,
    );
  }
  return claims;
}

interface Binding {
  tool: string | undefined;
  toolError: unknown;
  hash: string | undefined;
  argsError: unknown;
}

/** Normalizes the expected tool and hashes the args at call time (before any await). */
function bind(expected: PermitExpectation): Binding {
  const b: Binding = { tool: undefined, toolError: undefined, hash: undefined, argsError: undefined };
  try {
    b.tool = normalizeToolName(expected.tool);
  } catch (e) {
    b.toolError = e;
  }
  try {
    const snapshot = snapshotJsonObject(expected.args);
    if (b.tool !== undefined) b.hash = actionHashOfSnapshot(b.tool, snapshot);
  } catch (e) {
    b.argsError = e;
  }
  return b;
}

interface Core {
  issuer: string;
  algorithms: string[];
  allowed: ReadonlySet<string>;
  toleranceSec: number;
  resolve: KeyResolver;
}

function buildCore(options: unknown, name: string): Core {
  if (typeof options !== 'object' || options === null) fail(`${name}: expected an object`);
  const o = options as Record<string, unknown>;
  if (!nonEmptyString(o.issuer)) fail(`${name}.issuer: expected a non-empty string`);
  const algorithms = validateAlgorithms(o.algorithms, name);
  const toleranceSec = validateTolerance(o.clockToleranceSec, name);
  const timeoutMs = validateMs(o.jwksTimeoutMs, `${name}.jwksTimeoutMs`, PERMIT_DEFAULTS.jwksTimeoutMs);
  const cooldownMs = validateMs(o.jwksCooldownMs, `${name}.jwksCooldownMs`, PERMIT_DEFAULTS.jwksCooldownMs);
  const resolve = keyResolverFor(o.keys, name, timeoutMs, cooldownMs);
  return { issuer: o.issuer, algorithms, allowed: new Set(algorithms), toleranceSec, resolve };
}

/** Checks 1 to 14 (everything but the replay claim). */
async function runChecks(
  core: Core,
  permit: unknown,
  expected: PermitExpectation,
  binding: Binding,
): Promise<PermitClaims> {
  const decoded = decode(permit, core.allowed);
  const [h, p, s] = (permit as string).split('.') as [string, string, string];
  const keys = await core.resolve(decoded.header as JWSHeaderParameters, { protected: h, payload: p, signature: s });
  await verifySignature(permit as string, keys, core.algorithms);
  const audiences =
    expected.audience === undefined
      ? undefined
      : typeof expected.audience === 'string'
        ? [expected.audience]
        : expected.audience;
  const claims = checkClaims(decoded, core.issuer, expected, audiences, core.toleranceSec);
  if (binding.tool === undefined || claims.tool !== binding.tool) {
    throw refuse('permit_tool_mismatch', 'the permit is for another tool', binding.toolError);
  }
  if (binding.hash === undefined || claims.act_hash !== binding.hash) {
    throw refuse('permit_args_mismatch', 'the permit is for other arguments', binding.argsError);
  }
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
 * @throws TypeError synchronously, for a bad option
 * @internal
 */
export function createPermitChecker(options: PermitCheckerOptions): PermitChecker {
  const core = buildCore(options, 'permits');
  return {
    check(permit: string, expected: PermitExpectation): Promise<PermitClaims> {
      const binding = bind(expected);
      return runChecks(core, permit, expected, binding);
    },
  };
}

/**
 * Creates the verifier a side-effecting service runs before it acts on a permit
 * (CONTRACT.md section 4).
 *
 * @param options - `keys`: a JWKS URL (string or URL), a JWKS object or a public KeyObject/CryptoKey;
 *   `issuer`: the expected `iss`; `audience`: this service's name (string or list);
 *   `algorithms?` (default `['EdDSA', 'ES256']`); `clockToleranceSec?` (seconds, default 5);
 *   `replayStore?` (default: a memory store per verifier); `jwksTimeoutMs?` (ms, default 1500);
 *   `jwksCooldownMs?` (ms, default 30000); `storeTimeoutMs?` (ms, default 2000); `telemetry?`
 *   (`true` or `{ meter }`: count every verification in `pep.permit.verifications`)
 * @returns a {@link PermitVerifier}; `verify(permit, { tool, args })` resolves the claims after the
 *   `jti` has been claimed, and rejects with a `PermitVerificationError` otherwise
 * @throws TypeError synchronously, for a bad option: missing issuer/audience, a key source that is not
 *   a JWKS URL/object or a public key, `none`/HMAC/unknown algorithms, out-of-range numbers, a bad `telemetry`
 * @throws Error naming `@opentelemetry/api` when `telemetry` is set and that package is not installed
 * @throws PermitVerificationError (from `verify`) `permit_missing` / `permit_malformed`: nothing, or not a compact JWS with `alg`, `kid` and a JSON payload
 * @throws PermitVerificationError (from `verify`) `permit_alg_not_allowed`: `alg` outside the allow-list (`none` and `HS*` always), checked before any key lookup
 * @throws PermitVerificationError (from `verify`) `permit_signature_invalid`: bad signature, or no key with the permit's `kid`
 * @throws PermitVerificationError (from `verify`) `permit_keys_unavailable`: the JWKS URL is down, hung or serves no valid key set
 * @throws PermitVerificationError (from `verify`) `permit_expired` / `permit_not_yet_valid` / `permit_claim_invalid`: time and claim checks (wrong `typ`, `iss`, `aud`, missing claims, `iat` in the future, lifetime over 300 s)
 * @throws PermitVerificationError (from `verify`) `permit_tool_mismatch` / `permit_args_mismatch`: the permit is bound to another action
 * @throws PermitVerificationError (from `verify`) `permit_replayed` / `permit_store_unavailable`: used before, or the replay store could not answer
 * @remarks
 * - Every check runs in the order listed in this module's documentation; the `jti` is claimed only
 *   after every other check passed, so a refused permit is never burnt.
 * - Follows RFC 8725 (JWT BCP): an explicit algorithm allow-list, never `none` or HMAC (a public key
 *   can never act as an HMAC secret), explicit typing (`typ: permit+jwt`), issuer and audience checked.
 *   Header keys (`jku`, `jwk`, `x5u`) are ignored; keys only ever come from `options.keys`.
 * - With a single KeyObject/CryptoKey, `kid` must be present but selects nothing.
 * - Fails closed: a JWKS URL that cannot answer within `jwksTimeoutMs` is `permit_keys_unavailable`;
 *   a replay store that rejects, hangs past `storeTimeoutMs` or answers anything but a boolean is
 *   `permit_store_unavailable`. Neither ever lets a permit through.
 * - `args` are snapshotted and hashed when `verify` is called; args that are not a plain object of
 *   JSON values (or a tool name that normalizes to nothing) reject with `permit_args_mismatch`
 *   (`permit_tool_mismatch`) rather than throwing a TypeError, so one `catch` handles every refusal.
 * - The replay key is a hash of `[iss, jti]`, kept until `exp` plus the clock tolerance. Use one shared
 *   store (`createRedisReplayStore`) for all replicas of a service, or a permit can run once per replica.
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
  const name = 'createPermitVerifier';
  const core = buildCore(options, name);
  const audiences = validateAudience(options.audience, `${name}.audience`);
  const storeTimeoutMs = validateMs(options.storeTimeoutMs, `${name}.storeTimeoutMs`, PERMIT_DEFAULTS.storeTimeoutMs);
  const store = options.replayStore ?? createMemoryReplayStore();
  if (typeof store !== 'object' || store === null || typeof store.claim !== 'function') {
    fail(`${name}.replayStore: expected { claim(key, expiresAtMs) }`);
  }
  const toleranceMs = core.toleranceSec * 1000;
  const telemetryOption = validateTelemetry(options.telemetry, (path, problem) => fail(`${name}.${path}: ${problem}`));
  const telemetry = telemetryOption === undefined ? undefined : createTelemetry(telemetryOption);

  async function checkThenClaim(permit: string, expected: PermitExpectation, binding: Binding): Promise<PermitClaims> {
    const claims = await runChecks(core, permit, expected, binding);
    const key = sha256b64url(JSON.stringify([claims.iss, claims.jti]));
    // Remember the jti past any verifier's acceptance window: the store may be shared by verifiers
    // with other tolerances (up to 300 s), and a clock between them may lag by a little.
    const expiresAtMs = Math.ceil((claims.exp + REPLAY_MARGIN_SEC) * 1000);
    let first: unknown;
    try {
      const sync = (store as { [SYNC_CLAIM]?: (k: string, e: number) => boolean })[SYNC_CLAIM];
      first =
        typeof sync === 'function'
          ? sync(key, expiresAtMs)
          : await withDeadline(
              Promise.resolve().then(() => store.claim(key, expiresAtMs)),
              storeTimeoutMs,
              () => new Error('replay store deadline'),
            );
    } catch (e) {
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
      const expected: PermitExpectation = {
        tool: action?.tool as string,
        args: action?.args as Record<string, unknown>,
        audience: audiences,
      };
      const verification = checkThenClaim(permit, expected, bind(expected));
      return telemetry ? telemetry.countPermit(verification) : verification;
    },
  };
}
