/**
 * HTTP plumbing shared by the example services that demand a permit before they act
 * (examples/payments-service and the demo's tool service): the permit header, the JSON args body, and
 * the status a refusal answers with.
 * @module
 */

/** Codes that mean "not an authentic, current permit": 401. */
const UNAUTHENTICATED = new Set([
  'permit_missing',
  'permit_malformed',
  'permit_alg_not_allowed',
  'permit_signature_invalid',
  'permit_expired',
  'permit_not_yet_valid',
  'permit_claim_invalid',
]);

/** Codes that mean "cannot check right now": 503, and the service refuses rather than act unchecked. */
const UNAVAILABLE = new Set(['permit_keys_unavailable', 'permit_store_unavailable']);

/**
 * The HTTP status for a refused permit: 401 (not authentic or not current), 503 (cannot check now),
 * 403 (an authentic permit for another action, or used before).
 * @param {string} code - a PermitVerificationError code
 * @returns {401 | 403 | 503}
 */
export function refusalStatus(code) {
  if (UNAUTHENTICATED.has(code)) return 401;
  if (UNAVAILABLE.has(code)) return 503;
  return 403;
}

/**
 * The permit from `authorization: Permit <jws>`, or undefined.
 * @param {import('node:http').IncomingMessage} req
 * @returns {string | undefined}
 */
export function permitOf(req) {
  return /^Permit\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
}

/**
 * Answers JSON, never cached.
 * @param {import('node:http').ServerResponse} res
 * @param {number} status
 * @param {unknown} body
 * @param {Record<string, string>} [headers]
 */
export function send(res, status, body, headers = {}) {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
}

/**
 * Reads the body as a JSON object of args (UTF-8, at most `maxBytes`).
 * @param {import('node:http').IncomingMessage} req
 * @param {number} maxBytes
 * @returns {Promise<{ args: Record<string, unknown> } | { status: number, error: string }>}
 */
export async function readJsonObject(req, maxBytes) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > maxBytes) return { status: 413, error: 'body_too_large' };
    chunks.push(chunk);
  }
  let value;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks)));
  } catch {
    return { status: 400, error: 'invalid_json' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { status: 400, error: 'args_not_object' };
  }
  return { args: value };
}
