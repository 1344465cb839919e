/**
 * HTTP plumbing of a service that demands a permit before it acts: the permit header, the JSON args
 * body, and the status a refusal answers with. Used by the payments service beside it (and by the
 * demo's tool service, which answers the same way).
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PermitErrorCode } from 'agent-pep';

/** Codes that mean "not an authentic, current permit": 401. */
const UNAUTHENTICATED: ReadonlySet<PermitErrorCode> = new Set<PermitErrorCode>([
  'permit_missing',
  'permit_malformed',
  'permit_alg_not_allowed',
  'permit_signature_invalid',
  'permit_expired',
  'permit_not_yet_valid',
  'permit_claim_invalid',
]);

/** Codes that mean "cannot check right now": 503, and the service refuses rather than act unchecked. */
const UNAVAILABLE: ReadonlySet<PermitErrorCode> = new Set<PermitErrorCode>([
  'permit_keys_unavailable',
  'permit_store_unavailable',
]);

/**
 * The HTTP status for a refused permit: 401 (not authentic or not current), 503 (cannot check now),
 * 403 (an authentic permit for another action, or used before).
 */
export function refusalStatus(code: PermitErrorCode): 401 | 403 | 503 {
  if (UNAUTHENTICATED.has(code)) return 401;
  if (UNAVAILABLE.has(code)) return 503;
  return 403;
}

/** The permit from `authorization: Permit <jws>`, or undefined. */
export function permitOf(req: IncomingMessage): string | undefined {
  return /^Permit\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
}

/** Answers JSON, never cached. */
export function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
}

/** The body read as a JSON object of args, or the status and error code to answer with. */
export type JsonBody = { args: Record<string, unknown> } | { status: number; error: string };

/** Reads the body as a JSON object of args (UTF-8, at most `maxBytes`). */
export async function readJsonObject(req: IncomingMessage, maxBytes: number): Promise<JsonBody> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) return { status: 413, error: 'body_too_large' };
    chunks.push(chunk);
  }
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks)));
  } catch {
    return { status: 400, error: 'invalid_json' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { status: 400, error: 'args_not_object' };
  }
  return { args: value as Record<string, unknown> };
}
