// STUB: replaced by the permits work (issue 3).
import type { KeyObject } from 'node:crypto';
import type { CryptoKey, JSONWebKeySet } from 'jose';
import type { PermitsOptions } from '../options.js';
import type { ReplayStore } from '../replay/types.js';

/** The claims of a verified permit (CONTRACT.md section 4). */
export interface PermitClaims {
  iss: string;
  aud: string | string[];
  sub: string;
  sid: string;
  jti: string;
  iat: number;
  exp: number;
  nbf?: number;
  tool: string;
  act_hash: string;
  decision_id?: string;
  [claim: string]: unknown;
}

/** Options of createPermitVerifier. */
export interface PermitVerifierOptions {
  keys: string | URL | JSONWebKeySet | KeyObject | CryptoKey;
  issuer: string;
  audience: string | string[];
  algorithms?: string[];
  clockToleranceSec?: number;
  replayStore?: ReplayStore;
}

/** What a service calls before it acts. */
export interface PermitVerifier {
  verify(permit: string, action: { tool: string; args: Record<string, unknown> }): Promise<PermitClaims>;
}

/** Expected binding for the internal checker. @internal */
export interface PermitExpectation {
  tool: string;
  args: Record<string, unknown>;
  subject?: string;
  session?: string;
  audience?: string | string[];
}

/** All checks but the replay claim. @internal */
export interface PermitChecker {
  check(permit: string, expected: PermitExpectation): Promise<PermitClaims>;
}

export function createPermitVerifier(_options: PermitVerifierOptions): PermitVerifier {
  throw new Error('not implemented');
}

/** @internal */
export function createPermitChecker(_options: PermitsOptions): PermitChecker {
  throw new Error('not implemented');
}
