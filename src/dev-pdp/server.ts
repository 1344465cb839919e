/**
 * The dev PDP's HTTP server (node:http): `POST /api/policy/authorize` speaking CONTRACT.md section 3,
 * `GET /.well-known/jwks.json`, and `POST /api/escalations/{id}` for a reviewer UI.
 * @packageDocumentation
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { isTextStage, STAGES, type Stage, type Verdict } from '../decision.js';
import type { EvidenceRecord } from '../evidence/record.js';
import { hasDuplicateMemberNames, isIJsonValue } from '../internal/ijson.js';
import { snapshotJsonObject } from '../internal/json.js';
import { actionHashOfSnapshot } from '../permit/hash.js';
import { normalizeToolName } from '../permit/normalize.js';
import type { EscalationBook, EscalationSubject } from './escalations.js';
import { EscalationError } from './escalations.js';
import { evaluatePolicy } from './evaluate.js';
import type { EvidenceEntry, EvidenceLog } from './evidence.js';
import { DEFAULT_SLOW_BYTES_PER_SECOND, type Fault, GARBAGE_BODY } from './faults.js';
import type { CompiledPolicy } from './policy.js';
import { randomId, type SigningKey, signPermit } from './signing.js';

/** Error codes in `{ error: { code, message } }` bodies. */
export type DevPdpErrorCode =
  | 'unauthorized'
  | 'unknown_agent'
  | 'invalid_request'
  | 'payload_too_large'
  | 'not_found'
  | 'escalation_not_found'
  | 'escalation_already_resolved'
  | 'fault_status'
  | 'internal_error';

/** Everything the server needs. @internal */
export interface ServerConfig {
  policy: CompiledPolicy;
  key: SigningKey;
  evidence: EvidenceLog;
  escalations: EscalationBook;
  apiKey?: string;
  /** Key for the escalation endpoint; `apiKey` when absent. */
  reviewerApiKey?: string;
  audience: string;
  permitTtlSec: number;
  maxBodyBytes: number;
  issuer(): string;
  fault(): Readonly<Fault> | null;
  onDecision?: (record: EvidenceRecord) => void;
}

/** The running server. @internal */
export interface PdpServer {
  readonly server: Server;
  /** Destroys every open socket (hung ones included) and stops listening. */
  close(): Promise<void>;
}

const AUTHORIZE_PATH = '/api/policy/authorize';
const JWKS_PATH = '/.well-known/jwks.json';
const ESCALATION_PATH = /^\/api\/escalations\/([A-Za-z0-9_-]{1,200})$/;
/** A request id that can be echoed in a header: 1-200 visible ASCII characters. */
const REQUEST_ID = /^[\x21-\x7e]{1,200}$/;
const JSON_TYPE = 'application/json; charset=utf-8';
const ESCALATION_BODY_LIMIT = 16 * 1024;

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: DevPdpErrorCode,
    message: string,
  ) {
    super(message);
  }
}

const invalid = (message: string) => new HttpError(400, 'invalid_request', message);

function errorBody(code: DevPdpErrorCode, message: string): Buffer {
  return Buffer.from(JSON.stringify({ error: { code, message } }), 'utf8');
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Reads the whole body; past `limit` it keeps draining (up to 8x) so the 413 can be read, then gives up. */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    let size = 0;
    let tooLarge = Number.isFinite(declared) && declared > limit;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) tooLarge = true;
      if (tooLarge) {
        chunks.length = 0;
        if (size > limit * 8) {
          req.pause();
          reject(new HttpError(413, 'payload_too_large', `request body over ${limit} bytes`));
        }
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (tooLarge) reject(new HttpError(413, 'payload_too_large', `request body over ${limit} bytes`));
      else resolve(Buffer.concat(chunks));
    });
    req.on('error', reject);
  });
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function parseJsonObject(body: Buffer): Record<string, unknown> {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw invalid('the body is not valid UTF-8');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid('the body is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalid('the body must be a JSON object');
  // I-JSON (RFC 7493) in, so that nothing echoed or hashed can break the answer or the evidence log
  if (!isIJsonValue(value)) throw invalid('the body is not I-JSON (an unpaired surrogate or a number out of range)');
  if (hasDuplicateMemberNames(text)) throw invalid('the body is not I-JSON (a member name appears twice)');
  return value as Record<string, unknown>;
}

/** A validated authorize request. */
interface AuthorizeRequest {
  agentId: string;
  session: string;
  stage: Stage;
  requestId: string;
  simulated: boolean;
  content?: string;
  /** Normalized. */
  tool?: string;
  args?: Record<string, unknown>;
  actHash?: string;
}

function validateAuthorize(body: Record<string, unknown>, headerId: string | undefined): AuthorizeRequest {
  const { agentId, session, stage, requestId, simulated, content, tool, args } = body;
  if (typeof agentId !== 'string' || agentId.length === 0) throw invalid('agentId must be a non-empty string');
  if (typeof session !== 'string' || session.length === 0) throw invalid('session must be a non-empty string');
  if (typeof stage !== 'string' || !(STAGES as readonly string[]).includes(stage))
    throw invalid('stage is not a stage');
  if (requestId !== undefined && (typeof requestId !== 'string' || !REQUEST_ID.test(requestId))) {
    throw invalid('requestId must be 1-200 visible ASCII characters');
  }
  if (requestId !== undefined && headerId !== undefined && requestId !== headerId) {
    throw invalid('requestId differs from the x-request-id header');
  }
  if (simulated !== undefined && typeof simulated !== 'boolean') throw invalid('simulated must be a boolean');
  const out: AuthorizeRequest = {
    agentId,
    session,
    stage: stage as Stage,
    requestId: requestId ?? headerId ?? randomId('req_'),
    simulated: simulated === true,
  };
  if (isTextStage(stage)) {
    if (typeof content !== 'string') throw invalid('content must be a string on a text stage');
    if (tool !== undefined || args !== undefined) throw invalid('tool and args belong to the action stage');
    out.content = content;
    return out;
  }
  if (content !== undefined) throw invalid('content belongs to the text stages');
  if (typeof tool !== 'string') throw invalid('tool must be a string on the action stage');
  if (typeof args !== 'object' || args === null || Array.isArray(args)) throw invalid('args must be a JSON object');
  try {
    out.tool = normalizeToolName(tool);
  } catch {
    throw invalid('tool normalizes to nothing');
  }
  try {
    out.args = snapshotJsonObject(args);
  } catch {
    throw invalid('args must be a plain object of JSON values');
  }
  out.actHash = actionHashOfSnapshot(out.tool, out.args);
  return out;
}

/** Creates the server; the caller listens. @internal */
export function createPdpServer(config: ServerConfig): PdpServer {
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let closing: Promise<void> | undefined;
  const expectedKey = config.apiKey === undefined ? undefined : digest(config.apiKey);
  const reviewerKey = config.reviewerApiKey === undefined ? expectedKey : digest(config.reviewerApiKey);

  function authorized(req: IncomingMessage, expected = expectedKey): boolean {
    if (expected === undefined) return true;
    const header = req.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer +(\S+)$/i.exec(header) : null;
    // compare fixed-length digests in constant time, so neither length nor prefix leaks
    const given = digest(match?.[1] ?? '');
    return timingSafeEqual(given, expected) && match !== null;
  }

  function send(
    res: ServerResponse,
    requestId: string,
    status: number,
    body: Buffer,
    extra: Record<string, string> = {},
  ): void {
    if (res.headersSent || res.destroyed) return;
    res.writeHead(status, {
      'content-type': JSON_TYPE,
      'content-length': String(body.length),
      'cache-control': 'no-store',
      'x-request-id': requestId,
      ...extra,
    });
    res.end(body);
  }

  function trickle(res: ServerResponse, requestId: string, body: Buffer, bytesPerSecond: number): void {
    if (res.headersSent || res.destroyed) return;
    res.writeHead(200, {
      'content-type': JSON_TYPE,
      'content-length': String(body.length),
      'cache-control': 'no-store',
      'x-request-id': requestId,
    });
    res.flushHeaders();
    const chunk = Math.max(1, Math.floor(bytesPerSecond / 20));
    const interval = Math.max(1, Math.round((chunk * 1000) / bytesPerSecond));
    let offset = 0;
    const timer = setInterval(() => {
      if (res.destroyed) {
        clearInterval(timer);
        timers.delete(timer);
        return;
      }
      const next = body.subarray(offset, offset + chunk);
      offset += next.length;
      if (offset >= body.length) {
        clearInterval(timer);
        timers.delete(timer);
        res.end(next);
      } else {
        res.write(next);
      }
    }, interval);
    timers.add(timer);
    res.on('close', () => {
      clearInterval(timer);
      timers.delete(timer);
    });
  }

  async function decide(request: AuthorizeRequest): Promise<Record<string, unknown>> {
    const evaluation = evaluatePolicy(config.policy, {
      stage: request.stage,
      ...(request.tool !== undefined ? { tool: request.tool } : {}),
      ...(request.args !== undefined ? { args: request.args } : {}),
      ...(request.content !== undefined ? { content: request.content } : {}),
    });
    let verdict: Verdict = evaluation.verdict;
    let reason = evaluation.reason;
    let transformedContent = evaluation.transformedContent;
    let escalationId: string | undefined;
    if (verdict === 'ESCALATE') {
      const subject: EscalationSubject = {
        agentId: request.agentId,
        session: request.session,
        stage: request.stage,
        hash: request.actHash ?? config.evidence.contentHash(request.content ?? ''),
        ...(request.tool !== undefined ? { tool: request.tool } : {}),
      };
      // a simulated request reports what would happen without using up the resolution
      const resolution = config.escalations.take(subject, !request.simulated);
      if (resolution === 'approve') {
        verdict = 'ALLOW';
        reason = 'approved by a reviewer';
        transformedContent = undefined;
      } else if (resolution === 'deny') {
        verdict = 'BLOCK';
        reason = 'denied by a reviewer';
        transformedContent = undefined;
      } else {
        escalationId = config.escalations.open(subject);
      }
    }
    const decisionId = randomId('dec_');
    let permitId: string | undefined;
    if (request.stage === 'action' && (verdict === 'ALLOW' || verdict === 'WARN') && !request.simulated) {
      // the dev PDP's policies never transform args, so the permit is for the request's args
      permitId = await signPermit(config.key, {
        issuer: config.issuer(),
        audience: config.audience,
        agentId: request.agentId,
        session: request.session,
        tool: request.tool as string,
        args: request.args as Record<string, unknown>,
        decisionId,
        ttlSec: config.permitTtlSec,
      });
    }
    const entry: EvidenceEntry = {
      decisionId,
      requestId: request.requestId,
      agentId: request.agentId,
      session: request.session,
      stage: request.stage,
      verdict,
      latches: evaluation.latches,
      simulated: request.simulated,
    };
    if (reason !== undefined) entry.reason = reason;
    if (request.tool !== undefined) entry.tool = request.tool;
    if (request.actHash !== undefined) entry.argsHash = request.actHash;
    if (request.content !== undefined) entry.content = request.content;
    const record = await config.evidence.append(entry);
    try {
      config.onDecision?.(structuredClone(record));
    } catch {
      // an observer cannot change the decision
    }
    const response: Record<string, unknown> = {
      verdict,
      decisionId,
      requestId: request.requestId,
      stage: request.stage,
      latches: evaluation.latches,
    };
    if (reason !== undefined) response.reason = reason;
    if (permitId !== undefined) response.permitId = permitId;
    if (transformedContent !== undefined && verdict === 'WARN' && isTextStage(request.stage)) {
      response.transformedContent = transformedContent;
    }
    if (escalationId !== undefined) response.escalationId = escalationId;
    if (request.simulated) response.simulated = true;
    return response;
  }

  async function authorize(req: IncomingMessage, res: ServerResponse, headerId: string | undefined): Promise<void> {
    const fault = config.fault();
    let replyId = headerId ?? randomId('req_');
    if (fault?.kind === 'reset') {
      req.socket.resetAndDestroy();
      return;
    }
    if (fault?.kind === 'hang') {
      req.resume(); // read the request, never answer; close() ends the socket
      return;
    }
    if (fault?.kind === 'status' || fault?.kind === 'garbage') {
      await readBody(req, config.maxBodyBytes).catch(() => undefined);
      if (fault.kind === 'garbage') {
        if (res.destroyed) return;
        res.writeHead(200, {
          'content-type': JSON_TYPE,
          'content-length': String(GARBAGE_BODY.length),
          'x-request-id': replyId,
        });
        res.end(GARBAGE_BODY);
      } else {
        send(res, replyId, fault.status, errorBody('fault_status', 'injected fault'));
      }
      return;
    }
    try {
      if (!authorized(req)) throw new HttpError(401, 'unauthorized', 'a valid API key is required');
      const body = parseJsonObject(await readBody(req, config.maxBodyBytes));
      const request = validateAuthorize(body, headerId);
      replyId = request.requestId;
      if (!config.policy.agents.has(request.agentId))
        throw new HttpError(404, 'unknown_agent', 'the policy does not list this agent');
      const payload = Buffer.from(JSON.stringify(await decide(request)), 'utf8');
      if (fault?.kind === 'slow') trickle(res, replyId, payload, fault.bytesPerSecond ?? DEFAULT_SLOW_BYTES_PER_SECOND);
      else send(res, replyId, 200, payload);
    } catch (error) {
      replyError(res, replyId, error);
    }
  }

  function replyError(res: ServerResponse, requestId: string, error: unknown): void {
    const e = error instanceof HttpError ? error : new HttpError(500, 'internal_error', 'internal error');
    const extra: Record<string, string> = {};
    if (e.status === 401) extra['www-authenticate'] = 'Bearer';
    if (e.status === 413) extra.connection = 'close';
    send(res, requestId, e.status, errorBody(e.code, e.message), extra);
  }

  async function escalation(req: IncomingMessage, res: ServerResponse, id: string, requestId: string): Promise<void> {
    try {
      if (!authorized(req, reviewerKey)) throw new HttpError(401, 'unauthorized', 'a valid reviewer key is required');
      const body = parseJsonObject(await readBody(req, ESCALATION_BODY_LIMIT));
      const resolution = body.resolution;
      if (resolution !== 'approve' && resolution !== 'deny') throw invalid('resolution must be "approve" or "deny"');
      try {
        config.escalations.resolve(id, resolution);
      } catch (error) {
        if (error instanceof EscalationError && error.code === 'escalation_already_resolved') {
          throw new HttpError(409, error.code, 'escalation already resolved');
        }
        throw new HttpError(404, 'escalation_not_found', 'unknown escalation id');
      }
      send(res, requestId, 200, Buffer.from(JSON.stringify({ escalationId: id, resolution }), 'utf8'));
    } catch (error) {
      replyError(res, requestId, error);
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rawId = req.headers['x-request-id'];
    const headerId = typeof rawId === 'string' && REQUEST_ID.test(rawId) ? rawId : undefined;
    const requestId = headerId ?? randomId('req_');
    let path: string;
    try {
      path = new URL(req.url ?? '/', 'http://localhost').pathname;
    } catch {
      path = '';
    }
    if (path === AUTHORIZE_PATH && req.method === 'POST') {
      if (typeof rawId === 'string' && headerId === undefined) {
        replyError(res, requestId, invalid('x-request-id must be 1-200 visible ASCII characters'));
        return;
      }
      await authorize(req, res, headerId);
      return;
    }
    if (path === JWKS_PATH && (req.method === 'GET' || req.method === 'HEAD')) {
      const body = Buffer.from(JSON.stringify(config.key.jwks), 'utf8');
      res.writeHead(200, {
        'content-type': JSON_TYPE,
        'content-length': String(body.length),
        'cache-control': 'public, max-age=60',
        'x-request-id': requestId,
      });
      res.end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    const match = ESCALATION_PATH.exec(path);
    if (match?.[1] !== undefined && req.method === 'POST') {
      await escalation(req, res, match[1], requestId);
      return;
    }
    req.resume();
    send(res, requestId, 404, errorBody('not_found', 'no such endpoint'));
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const rawId = req.headers['x-request-id'];
      replyError(res, typeof rawId === 'string' && REQUEST_ID.test(rawId) ? rawId : randomId('req_'), error);
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('clientError', (_error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
    else socket.destroy();
  });

  return {
    server,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const timer of timers) clearInterval(timer);
        timers.clear();
        for (const socket of sockets) socket.destroy();
        sockets.clear();
        if (!server.listening) resolve();
      });
      return closing;
    },
  };
}
