/**
 * Where permit (and evidence) verification keys come from (docs/permits.md): a JWKS URL,
 * fetched with a deadline, a cooldown and a failure backoff; a JWKS object; or one public
 * `KeyObject` / `CryptoKey`. Private and secret keys are refused when the source is built.
 * @internal
 */
import type { KeyObject } from 'node:crypto';
// jose is loaded when a key set is first looked up (`jose.ts`); the types come from its index, erased at build.
import type { CryptoKey, FlattenedJWSInput, JSONWebKeySet, JWSHeaderParameters } from 'jose';
import { isPlainObject } from '../internal/guards.js';
import { optionError } from '../internal/option-kit.js';
import { readCapped } from '../internal/read-capped.js';
import { nodeCrypto } from '../internal/runtime.js';
import { type Jose, loadJose } from './jose.js';
import { joseCode, refuse, withDeadline } from './refuse.js';

/** Where permit (and evidence) verification keys come from: a JWKS URL, a JWKS object, or one public key. */
export type PermitKeySource = string | URL | JSONWebKeySet | KeyObject | CryptoKey;

/** A key a JWS can be verified with. */
export type VerifyKey = CryptoKey | KeyObject;

/**
 * Finds the candidate keys for one JWS. Rejects with `PermitVerificationError`
 * `permit_signature_invalid` (no key for that `kid`/`alg`) or `permit_keys_unavailable` (the key set
 * could not be had).
 */
export type KeyResolver = (header: JWSHeaderParameters, token: FlattenedJWSInput) => VerifyKey[] | Promise<VerifyKey[]>;

/** Bounds of a remote key set. @internal */
export const KEY_SOURCE_DEFAULTS = Object.freeze({
  /** Deadline of one JWKS fetch, in milliseconds. */
  jwksTimeoutMs: 1500,
  /** After a successful fetch, an unknown `kid` refetches at most this often, in milliseconds. */
  jwksCooldownMs: 30_000,
  /** After a failed fetch, the next fetch waits at least this long, in milliseconds (refused meanwhile). */
  jwksFailureBackoffMs: 1000,
  /** Slack on top of `jwksTimeoutMs` for reading the body and importing the keys, in milliseconds. */
  jwksBodySlackMs: 500,
  /**
   * Largest JWKS body read, in bytes (256 KiB: thousands of keys; a provider's set is a few KiB). A
   * larger one is not read further: the lookup is `permit_keys_unavailable`.
   */
  maxJwksBytes: 256 * 1024,
});

/**
 * jose's fetch of a key set, with the body read up to {@link KEY_SOURCE_DEFAULTS}.maxJwksBytes: a
 * larger body (by its `content-length`, or as it arrives) is abandoned, and the fetch rejects. jose
 * itself reads `response.json()` whole, so a huge key set would be parsed and imported on the main
 * thread, past the lookup's deadline.
 */
async function cappedFetch(
  url: string,
  init: { headers: Headers; method: 'GET'; redirect: 'manual'; signal: AbortSignal },
): Promise<Response> {
  const max = KEY_SOURCE_DEFAULTS.maxJwksBytes;
  const res = await fetch(url, init);
  // Not 200: jose refuses it by its status; the body is not needed.
  if (res.status !== 200) {
    await res.body?.cancel().catch(() => {});
    return res;
  }
  const declared = Number(res.headers.get('content-length') ?? Number.NaN);
  if (declared > max) {
    await res.body?.cancel().catch(() => {});
    throw new Error(`the JWKS is larger than ${max} bytes`);
  }
  const body = await readCapped(res.body, max);
  if (body === undefined) throw new Error(`the JWKS is larger than ${max} bytes`);
  return new Response(body, { status: 200, headers: { 'content-type': 'application/json' } });
}

/** Where the key source sits in the caller's options, for the option `TypeError`. */
export interface KeySourceSetting {
  /** Who validates, for the message (e.g. `'createPermitVerifier'`). */
  scope: string;
  /** The option path, for `err.option` (e.g. `'keys'`, `'permits.keys'`). */
  path: string;
  /** Deadline of one JWKS fetch, in milliseconds. @defaultValue 1500 */
  timeoutMs?: number | undefined;
  /** Unknown-`kid` refetch cooldown, in milliseconds. @defaultValue 30000 */
  cooldownMs?: number | undefined;
}

const CryptoKeyClass = (globalThis as { CryptoKey?: abstract new (...args: never[]) => unknown }).CryptoKey;

function isCryptoKey(v: unknown): v is CryptoKey {
  if (typeof v !== 'object' || v === null) return false;
  return CryptoKeyClass !== undefined
    ? v instanceof CryptoKeyClass
    : Object.prototype.toString.call(v) === '[object CryptoKey]';
}

/** Node's `KeyObject` (`node:crypto`); never one where the runtime has no `node:crypto`. */
function isKeyObject(v: unknown): v is KeyObject {
  const KeyObjectClass = nodeCrypto?.KeyObject;
  return KeyObjectClass !== undefined && v instanceof KeyObjectClass;
}

function isJwks(v: object): v is JSONWebKeySet {
  return 'keys' in v && Array.isArray((v as { keys: unknown }).keys);
}

/**
 * Validates `keys` synchronously and builds its resolver.
 * @throws TypeError (with `err.option` = `setting.path`) for anything but a JWKS URL (http/https, no
 *   credentials), a JWKS of public keys, or one public KeyObject/CryptoKey with `verify` usage
 */
export function createKeyResolver(keys: unknown, setting: KeySourceSetting): KeyResolver {
  const fail: (problem: string) => never = (problem) => optionError(setting.scope, setting.path, problem);
  if (typeof keys === 'string' || keys instanceof URL) {
    let url: URL;
    try {
      url = new URL(String(keys));
    } catch {
      fail('not a valid URL');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') fail('URL must be http(s)');
    if (url.username !== '' || url.password !== '') fail('URL must not carry credentials');
    return remoteResolver(
      url,
      setting.timeoutMs ?? KEY_SOURCE_DEFAULTS.jwksTimeoutMs,
      setting.cooldownMs ?? KEY_SOURCE_DEFAULTS.jwksCooldownMs,
    );
  }
  if (isKeyObject(keys)) {
    if (keys.type !== 'public') fail('expected a public key (never a secret or private key)');
    const list = [keys];
    return () => list;
  }
  if (isCryptoKey(keys)) {
    if (keys.type !== 'public') fail('expected a public key (never a secret or private key)');
    if (!keys.usages.includes('verify')) fail("the key's usages must include 'verify'");
    const list = [keys];
    return () => list;
  }
  if (typeof keys === 'object' && keys !== null && isJwks(keys)) {
    for (const jwk of keys.keys) {
      if (typeof jwk !== 'object' || jwk === null) fail('every JWKS member must be an object');
      if (jwk.kty === 'oct') fail('symmetric (oct) keys are never allowed');
      if ('d' in jwk || 'p' in jwk || 'k' in jwk || 'priv' in jwk) fail('the JWKS must hold public keys only');
    }
    // jose's checks of a key set, made now (jose builds the set on the first lookup): a copy of it
    // (later changes to the caller's object change nothing), a plain object whose `keys` are plain objects.
    let snapshot: JSONWebKeySet;
    try {
      snapshot = structuredClone(keys);
    } catch {
      fail('not a valid JWKS');
    }
    if (!isPlainObject(snapshot) || !Array.isArray(snapshot.keys) || !snapshot.keys.every(isPlainObject)) {
      fail('not a valid JWKS');
    }
    let local: Promise<ReturnType<Jose['createLocalJWKSet']>> | undefined;
    return async (header, token) => {
      local ??= loadJose().then((jose) => jose.createLocalJWKSet(snapshot));
      return fromJwks(
        local.then((set) => set(header, token)),
        undefined,
      );
    };
  }
  fail('expected a JWKS URL, a JWKS object ({ keys: [...] }), or a public KeyObject/CryptoKey');
}

/**
 * A JWKS URL: jose's remote key set (fetch deadline, unknown-`kid` cooldown, cache), plus a backoff
 * after a failed fetch: for `jwksFailureBackoffMs` every lookup is refused unfetched, so a failing
 * endpoint sees at most one fetch a second however many permits arrive.
 */
function remoteResolver(url: URL, timeoutMs: number, cooldownMs: number): KeyResolver {
  // One remote set (its cache and cooldown), made on the first lookup.
  let made: Promise<ReturnType<Jose['createRemoteJWKSet']>> | undefined;
  const remote = async (header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<CryptoKey> => {
    made ??= loadJose().then((jose) =>
      jose.createRemoteJWKSet(url, {
        timeoutDuration: timeoutMs,
        cooldownDuration: cooldownMs,
        [jose.customFetch]: cappedFetch,
      }),
    );
    return (await made)(header, token);
  };
  // jose aborts the fetch after timeoutMs; the outer deadline also bounds body reads and key imports
  const bound = timeoutMs + KEY_SOURCE_DEFAULTS.jwksBodySlackMs;
  let failedAt = Number.NEGATIVE_INFINITY;
  let lastFailure: unknown;
  // Named in a refusal's message (origin and path: never a query or credentials).
  const where = `${url.origin}${url.pathname}`;
  return async (header, token) => {
    if (Date.now() - failedAt < KEY_SOURCE_DEFAULTS.jwksFailureBackoffMs) {
      throw refuse('permit_keys_unavailable', 'the JWKS fetch failed a moment ago; not fetched again yet', lastFailure);
    }
    try {
      return await fromJwks(
        withDeadline(remote(header, token), bound, () => new Error('JWKS lookup deadline')),
        where,
      );
    } catch (e) {
      if ((e as { code?: unknown }).code === 'permit_keys_unavailable') {
        failedAt = Date.now();
        lastFailure = (e as { cause?: unknown }).cause;
      }
      throw e;
    }
  };
}

/** The first line of what a failed key lookup said, bounded: jose's reason (`Expected 200 OK ...`), a timeout. */
function whyOf(e: unknown): string {
  const message = e instanceof Error ? e.message.split('\n', 1)[0]?.slice(0, 200) : undefined;
  return message ? ` (${message})` : '';
}

/**
 * Maps what a JWKS resolver did to keys, or to `permit_signature_invalid` / `permit_keys_unavailable`.
 * @param remote the JWKS URL's origin and path for a remote key set (named in the refusal), else undefined
 */
async function fromJwks(lookup: Promise<CryptoKey>, remote: string | undefined): Promise<VerifyKey[]> {
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
      remote !== undefined
        ? `the JWKS at ${remote} could not be fetched, in time, as a valid key set${whyOf(e)}`
        : 'the key set holds no usable key for the permit',
      e,
    );
  }
}
