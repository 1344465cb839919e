/**
 * The demo's side-effecting service: it stands for every backend the agent's tools reach (mail,
 * bank, calendar, smart lock, ...). It performs nothing real; it records what would have run, and it
 * runs nothing without a one-time permit the PDP minted for exactly this tool and these args.
 *
 *   POST /tools/:name   body = the call's JSON args, header `authorization: Permit <jws>`
 *
 * Refusals answer `{ "error": "<PermitVerificationError code>" }` with 401 (not authentic or not
 * current), 403 (another action, or used before) or 503 (cannot check now: refuse rather than act),
 * exactly as the payments-service example does.
 * @module
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createMemoryReplayStore,
  createPermitVerifier,
  normalizeToolName,
  type PermitClaims,
  type PermitKeySource,
  PermitVerificationError,
  type ReplayStore,
} from 'agent-pep';
import { permitOf, readJsonObject, refusalStatus, send } from '../examples/payments-service/permit-http.js';

const MAX_BODY_BYTES = 64 * 1024;

/** One effect the service performed. */
export interface LedgerEntry {
  /** Normalized tool name. */
  tool: string;
  /** Exactly the args the permit was bound to. */
  args: Record<string, unknown>;
  /** The permit's id, now used up. */
  jti: string;
  /** The PDP decision that minted the permit. */
  decisionId: string | undefined;
}

/** A running tool service. */
export interface ToolService {
  /** Base URL, like `http://127.0.0.1:54321`. */
  url: string;
  /** Every effect performed, in order. */
  ledger: LedgerEntry[];
  /** Refused calls, by PermitVerificationError code. */
  refusals: Record<string, number>;
  /** Stops listening and drops open connections. */
  close(): Promise<void>;
}

/** Options of {@link startToolService}. */
export interface ToolServiceOptions {
  /** The PDP's JWKS URL (or JWKS, or key). */
  keys: PermitKeySource;
  /** The PDP's issuer (`iss`). */
  issuer: string;
  /** This service's name, the permits' `aud`. */
  audience: string;
  /** Where used permits are remembered. @defaultValue a new memory store */
  replayStore?: ReplayStore;
}

/** Starts the tool service on 127.0.0.1 (a free port). */
export async function startToolService(options: ToolServiceOptions): Promise<ToolService> {
  const { keys, issuer, audience, replayStore = createMemoryReplayStore() } = options;
  const verifier = createPermitVerifier({ keys, issuer, audience, replayStore });
  const ledger: LedgerEntry[] = [];
  const refusals: Record<string, number> = {};

  const server = createServer(async (req, res) => {
    try {
      const { pathname } = new URL(req.url ?? '/', 'http://localhost');
      if (!pathname.startsWith('/tools/')) return send(res, 404, { error: 'not_found' });
      if (req.method !== 'POST') return send(res, 405, { error: 'method_not_allowed' });
      let tool: string;
      try {
        tool = normalizeToolName(decodeURIComponent(pathname.slice('/tools/'.length)));
      } catch {
        return send(res, 404, { error: 'unknown_tool' });
      }
      const body = await readJsonObject(req, MAX_BODY_BYTES);
      if (!('args' in body)) return send(res, body.status, { error: body.error });
      let claims: PermitClaims;
      try {
        // Signature, alg, typ, iss, aud, time, lifetime, tool, act_hash; then the jti is claimed once.
        claims = await verifier.verify(permitOf(req) ?? '', { tool, args: body.args });
      } catch (error) {
        if (!(error instanceof PermitVerificationError)) throw error;
        refusals[error.code] = (refusals[error.code] ?? 0) + 1;
        return send(res, refusalStatus(error.code), { error: error.code });
      }
      ledger.push({ tool, args: body.args, jti: claims.jti, decisionId: claims.decision_id });
      return send(res, 200, { ok: true, tool, status: 'done' });
    } catch {
      if (!res.headersSent) send(res, 500, { error: 'internal_error' });
      else res.destroy();
    }
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    ledger,
    refusals,
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What the service answered to one call. */
export interface ServiceAnswer {
  ok: boolean;
  status: number;
  /** The refusal code, when `ok` is false. */
  error?: string;
}

/**
 * Calls the service the way a tool implementation does: the args as the JSON body, the permit in
 * `authorization: Permit <jws>`.
 */
export async function callToolService(
  serviceUrl: string,
  tool: string,
  args: Record<string, unknown>,
  permitId: string | undefined,
  signal?: AbortSignal,
): Promise<ServiceAnswer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (permitId !== undefined) headers.authorization = `Permit ${permitId}`;
  const res = await fetch(`${serviceUrl}/tools/${encodeURIComponent(tool)}`, {
    method: 'POST',
    headers,
    body: JSON.stringify(args),
    signal: signal ?? AbortSignal.timeout(5000),
  });
  const body = (await res.json().catch(() => ({}))) as { ok?: boolean; error?: string };
  return res.ok && body.ok === true
    ? { ok: true, status: res.status }
    : { ok: false, status: res.status, error: body.error ?? 'service_error' };
}
