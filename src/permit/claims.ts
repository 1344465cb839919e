/**
 * The claims of a verified permit and their checks (checks 7 to 12 of the verifier): explicit typing,
 * the required claims and their types, issuer, audience, agent and session, then time and lifetime.
 *
 * Written here rather than through jose's `jwtVerify` claim options: those run only inside a second
 * signature verification, check `nbf` before `exp`, accept `application/permit+jwt` for the `typ`, and
 * bound no lifetime, so the codes and their order (docs/permits.md) would change.
 * @internal
 */
import type { DecodedPermit } from './decode.js';
import { nonEmptyString, refuse } from './refuse.js';

/** The claims of a verified permit (docs/permits.md; RFC 7519 section 4 for the registered ones). */
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
  /** The session's labels after the decided step (docs/permits.md), when the session had any. */
  labels?: string[];
  /** Other claims the PDP added, unchecked. */
  [claim: string]: unknown;
}

/** Longest permit lifetime `exp - iat` accepted, in seconds (docs/permits.md): the one 300. */
export const MAX_PERMIT_LIFETIME_SEC = 300;

/** The `typ` header a permit must carry, compared exactly (RFC 8725 section 3.11). */
export const PERMIT_TYP = 'permit+jwt';

/** What the claims must say, for {@link checkClaims}. */
export interface ClaimExpectation {
  /** The `iss`, exactly. */
  issuer: string;
  /** The `aud` must contain one of these, when given. */
  audiences?: readonly string[] | undefined;
  /** The `sub` (agent id), when given. */
  subject?: string | undefined;
  /** The `sid` (session), when given. */
  session?: string | undefined;
  /** Clock tolerance for `exp`, `nbf` and `iat`, in seconds. */
  toleranceSec: number;
}

function isNumericDate(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0;
}

/**
 * What a claim was expected to be, for the refusal's message (the verifier's own configuration: an
 * issuer, an audience, an agent id or a session, never a permit's value), quoted and cut to 120 characters.
 */
function shown(expected: string): string {
  return `(expected ${JSON.stringify(expected.length > 120 ? `${expected.slice(0, 120)}...` : expected)})`;
}

const REQUIRED_STRINGS = ['iss', 'sub', 'sid', 'jti', 'tool', 'act_hash'] as const;

/**
 * Checks 7 to 12 on the verified header and payload, in this order: `typ`; required claims and types;
 * `iss`; `aud`; `sub`; `sid`; `exp` (`permit_expired`); `nbf` (`permit_not_yet_valid`); `iat` not in
 * the future and `0 < exp - iat <= 300` s.
 * @returns the claims (the payload object itself)
 * @throws PermitVerificationError `permit_claim_invalid`, `permit_expired` or `permit_not_yet_valid`
 */
export function checkClaims(d: Pick<DecodedPermit, 'header' | 'payload'>, expected: ClaimExpectation): PermitClaims {
  const { header, payload: c } = d;
  if (header.typ !== PERMIT_TYP) throw refuse('permit_claim_invalid', "the typ header is not 'permit+jwt'");
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
  if (c.labels !== undefined && !(Array.isArray(c.labels) && c.labels.every((l) => typeof l === 'string'))) {
    throw refuse('permit_claim_invalid', "claim 'labels' is not an array of strings");
  }
  const claims = c as PermitClaims;
  if (claims.iss !== expected.issuer)
    throw refuse('permit_claim_invalid', `claim 'iss' is not the expected issuer ${shown(expected.issuer)}`);
  const audiences = expected.audiences;
  if (audiences !== undefined) {
    const got = typeof claims.aud === 'string' ? [claims.aud] : claims.aud;
    if (!got.some((a) => audiences.includes(a)))
      throw refuse('permit_claim_invalid', `claim 'aud' is not this service ${audiences.map(shown).join(', ')}`);
  }
  if (expected.subject !== undefined && claims.sub !== expected.subject) {
    throw refuse('permit_claim_invalid', `claim 'sub' is not the expected agent ${shown(expected.subject)}`);
  }
  if (expected.session !== undefined && claims.sid !== expected.session) {
    throw refuse('permit_claim_invalid', `claim 'sid' is not the expected session ${shown(expected.session)}`);
  }
  const tolerance = expected.toleranceSec;
  const now = Date.now() / 1000;
  if (now >= claims.exp + tolerance) throw refuse('permit_expired', 'the permit has expired');
  if (claims.nbf !== undefined && claims.nbf > now + tolerance) {
    throw refuse('permit_not_yet_valid', 'the permit is not valid yet (nbf)');
  }
  if (claims.iat > now + tolerance) throw refuse('permit_claim_invalid', "claim 'iat' is in the future");
  const lifetime = claims.exp - claims.iat;
  if (!(lifetime > 0 && lifetime <= MAX_PERMIT_LIFETIME_SEC)) {
    throw refuse('permit_claim_invalid', `the lifetime exp - iat is not within (0, ${MAX_PERMIT_LIFETIME_SEC}] s`);
  }
  return claims;
}
