/**
 * A side-effecting service that refuses to act without a one-time permit.
 *
 *   POST /refund            runs tool `refund_payment` with the JSON body as args
 *   POST /tools/:name       runs tool `:name` (any spelling; normalized): refund_payment, cancel_order
 *   GET  /ledger            the effects performed so far (demo only)
 *
 * Every POST must carry `authorization: Permit <jws>`, a permit the PDP minted for exactly this tool
 * and these args, not used before. Refusals answer `{ "error": "<code>" }`:
 *   401  no permit, or one that is not authentic or not current (permit_missing, permit_malformed,
 *        permit_alg_not_allowed, permit_signature_invalid, permit_expired, permit_not_yet_valid,
 *        permit_claim_invalid)
 *   403  an authentic permit for another action, or used before (permit_tool_mismatch,
 *        permit_args_mismatch, permit_replayed)
 *   503  the service cannot check right now (permit_keys_unavailable, permit_store_unavailable):
 *        it refuses rather than act unchecked
 *   400 / 404 / 405 / 413 / 415 for requests that are not a tool call at all (no permit is consumed)
 *
 * Run standalone: npm run build:examples && PDP_URL=http://127.0.0.1:8787 node build/examples/payments-service/server.js
 * (keys from `${PDP_URL}/.well-known/jwks.json`, issuer PDP_URL, audience `payments-service`).
 * @module
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import {
  createPermitVerifier,
  normalizeToolName,
  type PermitClaims,
  type PermitKeySource,
  PermitVerificationError,
  type ReplayStore,
} from 'agent-pep';
import { permitOf, readJsonObject, refusalStatus, send } from './permit-http.js';

const MAX_BODY_BYTES = 16 * 1024;

/** What an effect answers: its result, or why the args do not fit. */
type EffectResult = Record<string, unknown> & { error?: string };

/** The effects this service can perform, by normalized tool name. Each validates its own args. */
const TOOLS: Record<string, (args: Record<string, unknown>) => EffectResult> = {
  refund_payment(args) {
    if (typeof args.orderId !== 'string' || args.orderId.length === 0)
      return { error: 'invalid_args', field: 'orderId' };
    if (typeof args.amount !== 'number' || !(args.amount > 0)) return { error: 'invalid_args', field: 'amount' };
    return {
      refundId: `rf_${randomUUID().slice(0, 8)}`,
      orderId: args.orderId,
      amount: args.amount,
      status: 'refunded',
    };
  },
  cancel_order(args) {
    if (typeof args.orderId !== 'string' || args.orderId.length === 0)
      return { error: 'invalid_args', field: 'orderId' };
    return { orderId: args.orderId, status: 'cancelled' };
  },
};

/** One effect the service performed. */
export interface LedgerEntry {
  tool: string;
  args: Record<string, unknown>;
  result: Record<string, unknown>;
  permitJti: string;
  decisionId: string | undefined;
  agent: string;
}

/** Options of {@link startPaymentsService}. */
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
  /** Where used permits are remembered; share one (e.g. Redis) between replicas. @defaultValue a memory store */
  replayStore?: ReplayStore;
}

/** A running payments service. */
export interface PaymentsService {
  url: string;
  port: number;
  /** Every effect performed, in order. */
  ledger: LedgerEntry[];
  close(): Promise<void>;
}

/** Starts the payments service: no valid permit, no effect. */
export async function startPaymentsService(options: PaymentsServiceOptions): Promise<PaymentsService> {
  const { port = 0, host = '127.0.0.1', keys, issuer, audience = 'payments-service', replayStore } = options;
  const verifier = createPermitVerifier({ keys, issuer, audience, ...(replayStore ? { replayStore } : {}) });
  const ledger: LedgerEntry[] = [];

  const server = createServer(async (req, res) => {
    try {
      const { pathname } = new URL(req.url ?? '/', 'http://localhost');
      if (req.method === 'GET' && pathname === '/ledger') return send(res, 200, { ledger });
      let toolName: string;
      if (pathname === '/refund') toolName = 'refund_payment';
      else if (pathname.startsWith('/tools/')) toolName = decodeURIComponent(pathname.slice('/tools/'.length));
      else return send(res, 404, { error: 'not_found' });
      if (req.method !== 'POST') return send(res, 405, { error: 'method_not_allowed' }, { allow: 'POST' });

      let tool: string;
      try {
        tool = normalizeToolName(toolName);
      } catch {
        return send(res, 404, { error: 'unknown_tool' });
      }
      const effect = Object.hasOwn(TOOLS, tool) ? TOOLS[tool] : undefined;
      if (!effect) return send(res, 404, { error: 'unknown_tool' });
      if (!/^application\/json\s*(;|$)/i.test(req.headers['content-type'] ?? '')) {
        return send(res, 415, { error: 'expected_json' });
      }
      const body = await readJsonObject(req, MAX_BODY_BYTES);
      if (!('args' in body)) return send(res, body.status, { error: body.error });

      // No permit, no effect. The verifier checks signature, alg, typ, iss, aud, time, lifetime, tool,
      // act_hash, and only then consumes the jti: a refused permit is never burnt.
      let claims: PermitClaims;
      try {
        claims = await verifier.verify(permitOf(req) ?? '', { tool, args: body.args });
      } catch (e) {
        if (e instanceof PermitVerificationError) {
          const status = refusalStatus(e.code);
          return send(res, status, { error: e.code }, status === 401 ? { 'www-authenticate': 'Permit' } : {});
        }
        throw e;
      }

      // Only now: perform the effect, with exactly the args the permit is bound to.
      const result = effect(body.args);
      if (result.error) return send(res, 422, result);
      ledger.push({
        tool,
        args: body.args,
        result,
        permitJti: claims.jti,
        decisionId: claims.decision_id,
        agent: claims.sub,
      });
      return send(res, 200, { ok: true, ...result });
    } catch {
      if (!res.headersSent) send(res, 500, { error: 'internal_error' });
      else res.destroy();
    }
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${bound}`,
    port: bound,
    ledger,
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// `node build/examples/payments-service/server.js`: serve until interrupted.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const pdpUrl = (process.env.PDP_URL ?? 'http://127.0.0.1:8787').replace(/\/+$/, '');
  const service = await startPaymentsService({
    port: Number(process.env.PORT ?? 8790),
    keys: `${pdpUrl}/.well-known/jwks.json`,
    issuer: pdpUrl,
    audience: process.env.AUDIENCE ?? 'payments-service',
  });
  console.log(`payments-service on ${service.url}, trusting permits from ${pdpUrl}`);
  process.once('SIGINT', () => service.close().then(() => process.exit(0)));
}
