/**
 * The dev PDP's Ed25519 signing key, its JWKS, permits (docs/permits.md) and evidence signatures.
 * @packageDocumentation
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { CompactSign, calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, importPKCS8, SignJWT, } from 'jose';
import { optionTypeError } from '../internal/option-kit.js';
import { referenceActionHash } from '../permit/hash.js';
function keyError(message, cause) {
    const error = optionTypeError('startDevPdp', 'key', message);
    if (cause !== undefined)
        Object.defineProperty(error, 'cause', { value: cause, configurable: true, writable: true });
    return error;
}
async function privateJwkOf(source) {
    if (typeof source === 'string') {
        let text;
        try {
            text = await readFile(source, 'utf8');
        }
        catch (cause) {
            throw keyError('cannot read the key file', cause);
        }
        if (text.trimStart().startsWith('-----BEGIN')) {
            try {
                const key = await importPKCS8(text, 'EdDSA', { extractable: true });
                return await exportJWK(key);
            }
            catch (cause) {
                throw keyError('the key file is not a PKCS#8 Ed25519 private key', cause);
            }
        }
        try {
            return JSON.parse(text);
        }
        catch (cause) {
            throw keyError('the key file is neither a JWK (JSON) nor a PKCS#8 PEM', cause);
        }
    }
    if (typeof source === 'object' && source !== null && 'type' in source && source.type === 'private') {
        // a KeyObject or an extractable CryptoKey
        try {
            return await exportJWK(source);
        }
        catch (cause) {
            throw keyError('the key cannot be exported (make the CryptoKey extractable, or pass a JWK)', cause);
        }
    }
    if (typeof source === 'object' && source !== null && 'kty' in source)
        return { ...source };
    throw keyError('expected a file path, a private JWK, or a private Ed25519 KeyObject/CryptoKey');
}
/**
 * Makes the signing key: a fresh Ed25519 pair, or the one given. `kid` is the RFC 7638 thumbprint.
 * @throws TypeError for a key that is not a private Ed25519 key (the message never contains key material)
 * @internal
 */
export async function createSigningKey(source) {
    let jwk;
    if (source === undefined) {
        const pair = await generateKeyPair('EdDSA', { extractable: true });
        jwk = await exportJWK(pair.privateKey);
    }
    else {
        jwk = await privateJwkOf(source);
    }
    if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.d !== 'string' || typeof jwk.x !== 'string') {
        throw keyError('expected a private Ed25519 key (kty OKP, crv Ed25519, with d and x)');
    }
    let privateKey;
    try {
        const imported = await importJWK({ kty: 'OKP', crv: 'Ed25519', d: jwk.d, x: jwk.x }, 'EdDSA');
        if (imported instanceof Uint8Array)
            throw new TypeError('not an asymmetric key');
        privateKey = imported;
    }
    catch (cause) {
        throw keyError('the Ed25519 key cannot be imported', cause);
    }
    const publicJwk = { kty: 'OKP', crv: 'Ed25519', x: jwk.x };
    const kid = await calculateJwkThumbprint(publicJwk);
    const published = Object.freeze({ ...publicJwk, kid, alg: 'EdDSA', use: 'sig' });
    return Object.freeze({
        kid,
        privateKey,
        publicJwk: published,
        jwks: Object.freeze({ keys: Object.freeze([published]) }),
    });
}
/** A fresh random token: 128 bits, base64url. @internal */
export function randomId(prefix = '') {
    return prefix + randomBytes(16).toString('base64url');
}
/**
 * Signs a one-time permit (docs/permits.md): header `{ alg: 'EdDSA', kid, typ: 'permit+jwt' }`,
 * claims `iss aud sub sid jti iat nbf exp tool act_hash decision_id`, and `labels` (sorted) when the
 * session has any.
 * @internal
 */
export async function signPermit(key, request) {
    const iat = request.nowSec ?? Math.floor(Date.now() / 1000);
    const claims = {
        sid: request.session,
        tool: request.tool,
        act_hash: referenceActionHash(request.tool, request.args),
        decision_id: request.decisionId,
    };
    if (request.labels !== undefined && request.labels.length > 0)
        claims.labels = [...request.labels];
    return new SignJWT(claims)
        .setProtectedHeader({ alg: 'EdDSA', kid: key.kid, typ: 'permit+jwt' })
        .setIssuer(request.issuer)
        .setAudience(request.audience)
        .setSubject(request.agentId)
        .setJti(randomId())
        .setIssuedAt(iat)
        .setNotBefore(iat)
        .setExpirationTime(iat + request.ttlSec)
        .sign(key.privateKey);
}
/**
 * Compact JWS (EdDSA, with `kid`) whose payload is the UTF-8 of `payload`; used for evidence records.
 * @internal
 */
export async function signText(key, payload) {
    return new CompactSign(new TextEncoder().encode(payload))
        .setProtectedHeader({ alg: 'EdDSA', kid: key.kid })
        .sign(key.privateKey);
}
