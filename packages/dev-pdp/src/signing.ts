/**
 * The dev PDP's Ed25519 signing key, its JWKS, permits (docs/permits.md) and evidence signatures.
 * @packageDocumentation
 */
import { createPrivateKey, hkdfSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { decodeJsonBody, optionTypeError, referenceActionHash } from 'agent-pep/internal';
import {
  type CryptoKey,
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  importPKCS8,
  type JSONWebKeySet,
  type JWK,
} from 'jose';

/**
 * Where the PDP's signing key comes from: a path to a file holding a private Ed25519 JWK (JSON) or a
 * PKCS#8 PEM, a private Ed25519 JWK object, or a private Ed25519 `CryptoKey`/`KeyObject`.
 */
export type DevPdpKeySource = string | JWK | CryptoKey | KeyObject;

/** The signing key and its public half. @internal */
export interface SigningKey {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly publicJwk: Readonly<JWK>;
  readonly jwks: Readonly<JSONWebKeySet>;
  /**
   * The secret of the session's keyed hashes (the user's words, the values seen; docs/dev-pdp.md):
   * HKDF-SHA-256 of the private key, so replicas that share the signing key share it, and it never leaves
   * the process.
   */
  readonly sessionSecret: Uint8Array;
}

function keyError(message: string, cause?: unknown): TypeError {
  const error = optionTypeError('startDevPdp', 'key', message);
  if (cause !== undefined) Object.defineProperty(error, 'cause', { value: cause, configurable: true, writable: true });
  return error;
}

async function privateJwkOf(source: DevPdpKeySource): Promise<JWK> {
  if (typeof source === 'string') {
    let bytes: Buffer;
    try {
      bytes = await readFile(source);
    } catch (cause) {
      throw keyError('cannot read the key file', cause);
    }
    const text = bytes.toString('utf8');
    if (text.trimStart().startsWith('-----BEGIN')) {
      try {
        const key = await importPKCS8(text, 'EdDSA', { extractable: true });
        return await exportJWK(key);
      } catch (cause) {
        throw keyError('the key file is not a PKCS#8 Ed25519 private key', cause);
      }
    }
    // the one JSON body decoder: UTF-8 without a byte-order mark, I-JSON (a member named twice is refused)
    const json = decodeJsonBody(bytes);
    if (!json.ok) throw keyError('the key file is neither a JWK (JSON) nor a PKCS#8 PEM');
    return json.value as JWK;
  }
  if (typeof source === 'object' && source !== null && 'type' in source && source.type === 'private') {
    // a KeyObject or an extractable CryptoKey
    try {
      return await exportJWK(source as CryptoKey | KeyObject);
    } catch (cause) {
      throw keyError('the key cannot be exported (make the CryptoKey extractable, or pass a JWK)', cause);
    }
  }
  if (typeof source === 'object' && source !== null && 'kty' in source) return { ...(source as JWK) };
  throw keyError('expected a file path, a private JWK, or a private Ed25519 KeyObject/CryptoKey');
}

/**
 * Makes the signing key: a fresh Ed25519 pair, or the one given. `kid` is the RFC 7638 thumbprint.
 * @throws TypeError for a key that is not a private Ed25519 key (the message never contains key material)
 * @internal
 */
export async function createSigningKey(source?: DevPdpKeySource): Promise<SigningKey> {
  let jwk: JWK;
  if (source === undefined) {
    const pair = await generateKeyPair('EdDSA', { extractable: true });
    jwk = await exportJWK(pair.privateKey);
  } else {
    jwk = await privateJwkOf(source);
  }
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.d !== 'string' || typeof jwk.x !== 'string') {
    throw keyError('expected a private Ed25519 key (kty OKP, crv Ed25519, with d and x)');
  }
  let privateKey: CryptoKey;
  try {
    const imported = await importJWK({ kty: 'OKP', crv: 'Ed25519', d: jwk.d, x: jwk.x }, 'EdDSA');
    if (imported instanceof Uint8Array) throw new TypeError('not an asymmetric key');
    privateKey = imported;
  } catch (cause) {
    throw keyError('the Ed25519 key cannot be imported', cause);
  }
  // node:crypto signs with a KeyObject made from the JWK here: KeyObject.from() of the non-extractable
  // CryptoKey is deprecated (DEP0204, Node 24) and would print a warning on the first signature
  keyObjects.set(
    privateKey,
    createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d: jwk.d, x: jwk.x }, format: 'jwk' }),
  );
  const publicJwk: JWK = { kty: 'OKP', crv: 'Ed25519', x: jwk.x };
  const kid = await calculateJwkThumbprint(publicJwk);
  const published: JWK = Object.freeze({ ...publicJwk, kid, alg: 'EdDSA', use: 'sig' });
  return Object.freeze({
    kid,
    privateKey,
    publicJwk: published,
    jwks: Object.freeze({ keys: Object.freeze([published]) as JWK[] }),
    sessionSecret: new Uint8Array(
      hkdfSync('sha256', Buffer.from(jwk.d, 'base64url'), 'agent-pep', 'dev-pdp session hashes', 32),
    ),
  });
}

/** What a permit is for. @internal */
export interface PermitRequest {
  issuer: string;
  audience: string;
  agentId: string;
  session: string;
  /** Normalized tool name. */
  tool: string;
  /** The args the permit is for (the request's, or `transformedArgs` on a WARN that transforms them), snapshotted. */
  args: Record<string, unknown>;
  decisionId: string;
  ttlSec: number;
  /** The session's labels after the step: a `labels` claim when there is at least one, none otherwise. */
  labels?: readonly string[];
  /** The pin of the tool definition the call was decided against: a `tool_pin` claim when given. */
  toolPin?: string | undefined;
  /** Seconds since the epoch; defaults to now. */
  nowSec?: number;
}

/** CSPRNG bytes drawn 4 KiB at a time (as node:crypto's randomUUID does), 16 per token. */
let pool = Buffer.alloc(0);
let drawn = 0;

/** A fresh random token: 128 bits, base64url. @internal */
export function randomId(prefix = ''): string {
  if (drawn + 16 > pool.length) {
    pool = randomBytes(4096);
    drawn = 0;
  }
  const id = pool.toString('base64url', drawn, drawn + 16);
  drawn += 16;
  return prefix + id;
}

/**
 * The private key as a `KeyObject`, made once per key: node:crypto signs with it synchronously, where
 * WebCrypto (jose's `sign`) queues a job per signature and cost the PDP about twice the CPU (issue 41).
 */
const keyObjects = new WeakMap<CryptoKey, KeyObject>();

function keyObjectOf(key: SigningKey): KeyObject {
  const object = keyObjects.get(key.privateKey);
  // every SigningKey is made by createSigningKey, which sets it
  if (object === undefined) throw new TypeError('not a signing key of createSigningKey');
  return object;
}

const base64url = (text: string): string => Buffer.from(text, 'utf8').toString('base64url');

/**
 * A compact JWS (RFC 7515) signed with the PDP's Ed25519 key: the same bytes jose's `CompactSign` and
 * `SignJWT` make (Ed25519 signatures are deterministic), at a fraction of the cost.
 */
function compactJws(key: SigningKey, header: Record<string, unknown>, payload: string): string {
  const input = `${base64url(JSON.stringify(header))}.${base64url(payload)}`;
  return `${input}.${sign(null, Buffer.from(input, 'latin1'), keyObjectOf(key)).toString('base64url')}`;
}

/**
 * Signs a one-time permit (docs/permits.md): header `{ alg: 'EdDSA', kid, typ: 'permit+jwt' }`,
 * claims `iss aud sub sid jti iat nbf exp tool act_hash decision_id`, `labels` (sorted) when the
 * session has any, and `tool_pin` when the request named the pin of the tool's definition.
 * @internal
 */
export async function signPermit(key: SigningKey, request: PermitRequest): Promise<string> {
  const iat = request.nowSec ?? Math.floor(Date.now() / 1000);
  const claims: Record<string, unknown> = {
    sid: request.session,
    tool: request.tool,
    act_hash: referenceActionHash(request.tool, request.args),
    decision_id: request.decisionId,
  };
  if (request.labels !== undefined && request.labels.length > 0) claims.labels = [...request.labels];
  if (request.toolPin !== undefined) claims.tool_pin = request.toolPin;
  claims.iss = request.issuer;
  claims.aud = request.audience;
  claims.sub = request.agentId;
  claims.jti = randomId();
  claims.iat = iat;
  claims.nbf = iat;
  claims.exp = iat + request.ttlSec;
  return compactJws(key, { alg: 'EdDSA', kid: key.kid, typ: 'permit+jwt' }, JSON.stringify(claims));
}

/**
 * Compact JWS (EdDSA, with `kid`) whose payload is the UTF-8 of `payload`; used for evidence records.
 * @internal
 */
export async function signText(key: SigningKey, payload: string): Promise<string> {
  return compactJws(key, { alg: 'EdDSA', kid: key.kid }, payload);
}
