// Types for the tests (relative to src so that typechecking needs no build); users import from 'agent-pep'.
import type { PermitKeySource, ReplayStore } from '../../src/index.js';

/** One effect the service performed. */
export interface LedgerEntry {
  tool: string;
  args: Record<string, unknown>;
  result: Record<string, unknown>;
  permitJti: string;
  decisionId: string | undefined;
  agent: string;
}

export interface PaymentsServiceOptions {
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /** Interface to listen on. @defaultValue '127.0.0.1' */
  host?: string;
  /** The PDP's JWKS URL, a JWKS object or a public key. */
  keys: PermitKeySource;
  /** The PDP's issuer (`iss`). */
  issuer: string;
  /** This service's name, the permits' `aud`. @defaultValue 'payments-service' */
  audience?: string;
  /** Where used permits are remembered; share one between replicas. @defaultValue a memory store */
  replayStore?: ReplayStore;
}

export interface PaymentsService {
  url: string;
  port: number;
  /** Every effect performed, in order. */
  ledger: LedgerEntry[];
  close(): Promise<void>;
}

/** Starts the example payments service: no valid permit, no effect. */
export function startPaymentsService(options: PaymentsServiceOptions): Promise<PaymentsService>;
