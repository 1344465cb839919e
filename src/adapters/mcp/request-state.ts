/**
 * The `requestState` of the `InputRequiredResult` a guarded 2.x handler answers ESCALATE with (MCP
 * revision 2026-07-28, multi-round-trip requests): HMAC-SHA256 signed, bound to the tool, the hash of the
 * args decided, the session and the escalation id, with an expiry. The client echoes it on retry and the
 * spec makes it attacker-controlled, so a state that fails any check is refused. Internal to `agent-pep/mcp`.
 * @internal
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { canonicalJson, sha256b64url } from '../../permit/hash.js';

/** What a request state binds. */
export interface StateClaims {
  tool: string;
  /** base64url SHA-256 of the RFC 8785 canonical JSON of the args decided. */
  argsHash: string;
  session: string;
  escalationId: string;
}

/** Signs and checks request states with one key. */
export interface RequestStates {
  sign(claims: StateClaims): string;
  /** Whether `state` was signed with this key, has not expired, and binds exactly `expected`. */
  verify(state: unknown, expected: Omit<StateClaims, 'escalationId'>): boolean;
}

/** base64url SHA-256 of the RFC 8785 canonical JSON of `args`. */
export function argsHashOf(args: unknown): string {
  return sha256b64url(canonicalJson(args));
}

/**
 * Whether `state` has the shape of a state this guard signs (`<payload>.<mac>`, the payload JSON of version 1
 * naming an escalation), whoever signed it: such a state is the guard's to verify, and refused when it does not.
 * Any other `requestState` is a tool's own (its multi-round-trip request), for the server to read.
 */
export function isGuardState(state: unknown): boolean {
  if (typeof state !== 'string' || state.length > 4096) return false;
  const [payload, sig, extra] = state.split('.');
  if (payload === undefined || sig === undefined || extra !== undefined) return false;
  try {
    const claims: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    return typeof claims === 'object' && claims !== null && (claims as { v?: unknown }).v === 1;
  } catch {
    return false;
  }
}

/**
 * Request states signed with `key` (a fresh random 32 bytes when none is given: then only this process can
 * verify them) that expire `ttlMs` after signing.
 */
export function requestStates(
  key: Uint8Array | undefined,
  ttlMs: number,
  now: () => number = () => Date.now(),
): RequestStates {
  const secret = key ?? randomBytes(32);
  const mac = (payload: string): Buffer => createHmac('sha256', secret).update(payload).digest();
  return {
    sign(claims) {
      const payload = Buffer.from(JSON.stringify({ v: 1, ...claims, exp: now() + ttlMs })).toString('base64url');
      return `${payload}.${mac(payload).toString('base64url')}`;
    },
    verify(state, expected) {
      if (typeof state !== 'string' || state.length > 4096) return false;
      const [payload, sig, extra] = state.split('.');
      if (payload === undefined || sig === undefined || extra !== undefined) return false;
      const given = Buffer.from(sig, 'base64url');
      const want = mac(payload);
      if (given.length !== want.length || !timingSafeEqual(given, want)) return false;
      let claims: Record<string, unknown>;
      try {
        claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
      } catch {
        return false;
      }
      return (
        claims.v === 1 &&
        typeof claims.exp === 'number' &&
        claims.exp > now() &&
        typeof claims.escalationId === 'string' &&
        claims.tool === expected.tool &&
        claims.argsHash === expected.argsHash &&
        claims.session === expected.session
      );
    },
  };
}
