/**
 * The demo's side-effecting service: it stands for every backend the agent's tools reach (mail,
 * bank, calendar, smart lock, ...). It performs nothing real; it records what would have run, and it
 * runs nothing without a one-time permit the PDP minted for exactly this tool and these args.
 *
 *   POST /tools/:name   body = the call's JSON args, header `authorization: Permit <jws>`
 *
 * Refusals answer `{ "error": "<PermitVerificationError code>" }` with 401 (not authentic or not
 * current), 403 (another action, or used before) or 503 (cannot check now: refuse rather than act).
 * @module
 */
import { createServer } from 'node:http';
import { createMemoryReplayStore, createPermitVerifier, normalizeToolName, PermitVerificationError } from 'agent-pep';
import { permitOf, readJsonObject, refusalStatus, send } from '../examples/permit-http.js';

const MAX_BODY_BYTES = 64 * 1024;

/**
 * @typedef {object} LedgerEntry
 * @property {string} tool - normalized tool name
 * @property {Record<string, unknown>} args - exactly the args the permit was bound to
 * @property {string} jti - the permit's id, now used up
 * @property {string | undefined} decisionId - the PDP decision that minted the permit
 */

/**
 * @typedef {object} ToolService
 * @property {string} url - base URL, like `http://127.0.0.1:54321`
 * @property {LedgerEntry[]} ledger - every effect performed, in order
 * @property {Record<string, number>} refusals - refused calls, by PermitVerificationError code
 * @property {() => Promise<void>} close - stops listening and drops open connections
 */

/**
 * Starts the tool service on 127.0.0.1.
 * @param {object} options
 * @param {import('agent-pep').PermitKeySource} options.keys - the PDP's JWKS URL (or JWKS, or key)
 * @param {string} options.issuer - the PDP's issuer (`iss`)
 * @param {string} options.audience - this service's name, the permits' `aud`
 * @param {import('agent-pep').ReplayStore} [options.replayStore] - default: a new memory store
 * @returns {Promise<ToolService>}
 */
export async function startToolService({ keys, issuer, audience, replayStore = createMemoryReplayStore() }) {
  const verifier = createPermitVerifier({ keys, issuer, audience, replayStore });
  /** @type {LedgerEntry[]} */
  const ledger = [];
  /** @type {Record<string, number>} */
  const refusals = {};

  const server = createServer(async (req, res) => {
    try {
      const { pathname } = new URL(req.url ?? '/', 'http://localhost');
      if (!pathname.startsWith('/tools/')) return send(res, 404, { error: 'not_found' });
      if (req.method !== 'POST') return send(res, 405, { error: 'method_not_allowed' });
      let tool;
      try {
        tool = normalizeToolName(decodeURIComponent(pathname.slice('/tools/'.length)));
      } catch {
        return send(res, 404, { error: 'unknown_tool' });
      }
      const body = await readJsonObject(req, MAX_BODY_BYTES);
      if (!('args' in body)) return send(res, body.status, { error: body.error });
      const permit = permitOf(req);
      let claims;
      try {
        // Signature, alg, typ, iss, aud, time, lifetime, tool, act_hash; then the jti is claimed once.
        claims = await verifier.verify(/** @type {string} */ (permit), { tool, args: body.args });
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

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(undefined));
  });
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${address.port}`,
    ledger,
    refusals,
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Calls the service the way a tool implementation does: the args as the JSON body, the permit in
 * `authorization: Permit <jws>`.
 * @param {string} serviceUrl
 * @param {string} tool
 * @param {Record<string, unknown>} args
 * @param {string | undefined} permitId
 * @param {AbortSignal} [signal]
 * @returns {Promise<{ ok: boolean, status: number, error?: string }>}
 */
export async function callToolService(serviceUrl, tool, args, permitId, signal) {
  /** @type {Record<string, string>} */
  const headers = { 'content-type': 'application/json' };
  if (permitId !== undefined) headers.authorization = `Permit ${permitId}`;
  const res = await fetch(`${serviceUrl}/tools/${encodeURIComponent(tool)}`, {
    method: 'POST',
    headers,
    body: JSON.stringify(args),
    signal: signal ?? AbortSignal.timeout(5000),
  });
  const body = /** @type {{ ok?: boolean, error?: string }} */ (await res.json().catch(() => ({})));
  return res.ok && body.ok === true
    ? { ok: true, status: res.status }
    : { ok: false, status: res.status, error: body.error ?? 'service_error' };
}
