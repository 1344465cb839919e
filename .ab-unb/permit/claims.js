import { nonEmptyString, refuse } from './refuse.js';
/** Longest permit lifetime `exp - iat` accepted, in seconds (docs/permits.md): the one 300. */
export const MAX_PERMIT_LIFETIME_SEC = 300;
/** The `typ` header a permit must carry, compared exactly (RFC 8725 section 3.11). */
export const PERMIT_TYP = 'permit+jwt';
function isNumericDate(v) {
    return typeof v === 'number' && Number.isFinite(v) && v >= 0;
}
const REQUIRED_STRINGS = ['iss', 'sub', 'sid', 'jti', 'tool', 'act_hash'];
/**
 * Checks 7 to 12 on the verified header and payload, in this order: `typ`; required claims and types;
 * `iss`; `aud`; `sub`; `sid`; `exp` (`permit_expired`); `nbf` (`permit_not_yet_valid`); `iat` not in
 * the future and `0 < exp - iat <= 300` s.
 * @returns the claims (the payload object itself)
 * @throws PermitVerificationError `permit_claim_invalid`, `permit_expired` or `permit_not_yet_valid`
 */
export function checkClaims(d, expected) {
    const { header, payload: c } = d;
    if (header.typ !== PERMIT_TYP)
        throw refuse('permit_claim_invalid', "the typ header is not 'permit+jwt'");
    for (const name of REQUIRED_STRINGS) {
        if (!nonEmptyString(c[name]))
            throw refuse('permit_claim_invalid', `claim '${name}' is missing or not a string`);
    }
    const aud = c.aud;
    if (!(nonEmptyString(aud) || (Array.isArray(aud) && aud.length > 0 && aud.every(nonEmptyString)))) {
        throw refuse('permit_claim_invalid', "claim 'aud' is missing or not a string (array)");
    }
    for (const name of ['iat', 'exp']) {
        if (!isNumericDate(c[name]))
            throw refuse('permit_claim_invalid', `claim '${name}' is missing or not a NumericDate`);
    }
    if (c.nbf !== undefined && !isNumericDate(c.nbf))
        throw refuse('permit_claim_invalid', "claim 'nbf' is not a NumericDate");
    if (c.decision_id !== undefined && typeof c.decision_id !== 'string') {
        throw refuse('permit_claim_invalid', "claim 'decision_id' is not a string");
    }
    if (c.labels !== undefined && !(Array.isArray(c.labels) && c.labels.every((l) => typeof l === 'string'))) {
        throw refuse('permit_claim_invalid', "claim 'labels' is not an array of strings");
    }
    const claims = c;
    if (claims.iss !== expected.issuer)
        throw refuse('permit_claim_invalid', "claim 'iss' is not the expected issuer");
    const audiences = expected.audiences;
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
    const tolerance = expected.toleranceSec;
    const now = Date.now() / 1000;
    if (now >= claims.exp + tolerance)
        throw refuse('permit_expired', 'the permit has expired');
    if (claims.nbf !== undefined && claims.nbf > now + tolerance) {
        throw refuse('permit_not_yet_valid', 'the permit is not valid yet (nbf)');
    }
    if (claims.iat > now + tolerance)
        throw refuse('permit_claim_invalid', "claim 'iat' is in the future");
    const lifetime = claims.exp - claims.iat;
    if (!(lifetime > 0 && lifetime <= MAX_PERMIT_LIFETIME_SEC)) {
        throw refuse('permit_claim_invalid', `the lifetime exp - iat is not within (0, ${MAX_PERMIT_LIFETIME_SEC}] s`);
    }
    return claims;
}
