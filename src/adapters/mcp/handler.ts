/**
 * `guardMcpHandler`: the Web-standard MCP handler of `@modelcontextprotocol/server` 2.x (`createMcpHandler`,
 * `handler.fetch(request)`), guarded by wrapping its public `fetch`: a new handler is returned, nothing of
 * the SDK's is changed. Each `tools/call` is decided before the server sees it, on the args the tool will
 * run with; `tools/list` answers what the caller may see, marked `cacheScope: "private"`. Internal to
 * `agent-pep/mcp`.
 * @internal
 */
import { isDeepStrictEqual } from 'node:util';
import { PolicyEnforcementError } from '../../errors.js';
import { readCapped } from '../../internal/read-capped.js';
import type { Pep } from '../../pep.js';
import type { PermitVerifier } from '../../permit/verifier.js';
import { argsBySchema, enforcementOf } from '../kit.js';
import { asToolResult, failedClosed, isObject, noSession, refusal, requestSession } from './common.js';
import {
  approvalRequest,
  CLIENT_CAPABILITIES_META,
  declaresElicitation,
  isModernRevision,
  PROTOCOL_VERSION_META,
} from './escalation.js';
import { argsHashOf, isGuardState, type RequestStates, type StateClaims } from './request-state.js';
import { permitRefusal } from './server-call.js';

/** A Web-standard MCP handler: `fetch(request)` answers one HTTP request (`createMcpHandler`'s result). */
export interface McpHttpHandlerLike {
  fetch(request: Request, ...rest: never[]): Promise<Response>;
}

/** What the handler guard needs. */
export interface HandlerGuardDeps {
  pep: Pep;
  verifier: PermitVerifier | undefined;
  hideBlocked: boolean;
  /** Signs and checks the `requestState` of the `InputRequiredResult` ESCALATE is answered with. */
  states: RequestStates;
  /** The server's `session` option: called with the JSON-RPC request and the HTTP `Request`. */
  session: ((request: { method: string; params: Record<string, unknown> }, extra: unknown) => unknown) | undefined;
  /** The most bytes of a request body the guard reads (`maxRequestBodySize`); over it, 413 as the SDK answers. */
  maxRequestBodySize: number;
}

type Message = Record<string, unknown>;

/** Thrown inside the guarded execute: the server answered with something other than a result. */
class Passthrough extends Error {
  constructor(readonly response: Response) {
    super('the server answered without a result');
  }
}

/** The JSON-RPC message answering `id` in a response body (JSON, or the `data:` lines of an SSE stream). */
function answerIn(text: string, id: unknown): Message | undefined {
  const candidates: string[] = [];
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) candidates.push(trimmed);
  else for (const line of text.split('\n')) if (line.startsWith('data:')) candidates.push(line.slice(5).trim());
  for (const c of candidates) {
    try {
      const parsed: unknown = JSON.parse(c);
      for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
        if (isObject(m) && m.id === id && ('result' in m || 'error' in m)) return m;
      }
    } catch {
      // not JSON: not the answer
    }
  }
  return undefined;
}

/**
 * Whether the request speaks a revision whose results must say `resultType` (2026-07-28 on): its `_meta`
 * or its `MCP-Protocol-Version` header names one.
 */
function isModern(c: Call): boolean {
  const meta = isObject(c.params._meta) ? c.params._meta[PROTOCOL_VERSION_META] : undefined;
  return isModernRevision(typeof meta === 'string' ? meta : c.request.headers.get('mcp-protocol-version'));
}

/** Whether the request's client declared form elicitation (see {@link declaresElicitation}). */
function elicits(c: Call): boolean {
  return declaresElicitation(isObject(c.params._meta) ? c.params._meta[CLIENT_CAPABILITIES_META] : undefined);
}

/** A JSON-RPC result the guard makes itself, as a JSON response (`resultType: "complete"` where due). */
function guardAnswer(c: Call, result: unknown, status = 200): Response {
  const complete = isModern(c) && isObject(result) && !('resultType' in result);
  return jsonAnswer(c.message.id, complete ? { ...result, resultType: 'complete' } : result, status);
}

/** A JSON-RPC result as a JSON response. */
function jsonAnswer(id: unknown, result: unknown, status = 200): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id, result }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

/**
 * The original request's headers, for a request to the same endpoint: as they are for the call itself; for
 * another method, the headers 2026-07-28 mirrors from the body (`Mcp-Method`, `Mcp-Name`) made to match it.
 */
function headersFor(original: Request, method: string, originalMethod: unknown): Headers {
  const headers = new Headers(original.headers);
  headers.delete('content-length');
  if (method !== originalMethod) {
    headers.delete('mcp-name');
    if (headers.has('mcp-method')) headers.set('mcp-method', method);
  }
  return headers;
}

/**
 * Guards a Web-standard MCP handler; the returned handler is the one to serve (the one given stays
 * unguarded: nothing of it is changed).
 */
export function guardHandler<H extends McpHttpHandlerLike>(handler: H, deps: HandlerGuardDeps): H {
  const inner = (request: Request, rest: never[]): Promise<Response> => handler.fetch(request, ...rest);
  const guarded = async (request: Request, ...rest: never[]): Promise<Response> => {
    if (request.method !== 'POST') return inner(request, rest);
    let message: unknown;
    try {
      message = await messageOf(request, rest, deps.maxRequestBodySize);
    } catch {
      return inner(request, rest);
    }
    if (message === TOO_LARGE) return tooLarge(deps.maxRequestBodySize);
    if (Array.isArray(message)) return refusedBatch(message, deps) ?? inner(request, rest);
    if (!isObject(message) || typeof message.method !== 'string' || !('id' in message)) return inner(request, rest);
    const params = isObject(message.params) ? message.params : {};
    const call = { request, rest, message, params, inner, deps };
    if (message.method === 'tools/call') return decideCall(call);
    if (message.method === 'tools/list' && deps.hideBlocked) return filterList(call);
    return inner(request, rest);
  };
  return { ...handler, fetch: guarded } as H;
}

/** What {@link messageOf} answers for a body over the ceiling. */
const TOO_LARGE = Symbol('too large');

/**
 * The JSON-RPC message of a request as the SDK will serve it: the host's `parsedBody` when it gave one
 * (`fetch(request, { parsedBody })`: the SDK then never reads the body), else the body parsed, read up to
 * `maxBytes` as the SDK's `readRequestBody` reads it (a declared `Content-Length` over it is refused unread).
 * @returns the message, or {@link TOO_LARGE}
 * @throws when the body is not JSON (the SDK refuses it too) or cannot be read
 */
async function messageOf(request: Request, rest: never[], maxBytes: number): Promise<unknown> {
  const options: unknown = rest[0];
  if (isObject(options) && options.parsedBody !== undefined) return options.parsedBody;
  if (Number(request.headers.get('content-length')) > maxBytes) return TOO_LARGE;
  const body = await readCapped(request.clone().body, maxBytes);
  if (body === undefined) return TOO_LARGE;
  return JSON.parse(new TextDecoder().decode(body));
}

/** The SDK's answer to a body over its ceiling (`createMcpHandler`): 413, JSON-RPC -32000. */
function tooLarge(maxBytes: number): Response {
  const message = `Payload Too Large: Request body must not exceed ${maxBytes} bytes`;
  return Response.json({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }, { status: 413 });
}

/** The host's `fetch` options for a request of the guard's own: without `parsedBody` (its body is the guard's). */
function ownRest(rest: never[]): never[] {
  const [options, ...more] = rest as unknown[];
  if (!isObject(options) || !('parsedBody' in options)) return rest;
  const { parsedBody: _parsed, ...kept } = options;
  return [kept, ...more] as never[];
}

/**
 * A JSON-RPC batch (which the SDK's 2025-era fallback serves) holding a request the guard decides or filters:
 * refused whole, each `tools/call` in it observed as a refusal, so that none of it runs undecided; else
 * undefined (the batch passes as it is).
 */
function refusedBatch(batch: unknown[], deps: HandlerGuardDeps): Response | undefined {
  const guarded = (m: unknown) =>
    isObject(m) && (m.method === 'tools/call' || (m.method === 'tools/list' && deps.hideBlocked));
  if (!batch.some(guarded)) return undefined;
  const why = 'a JSON-RPC batch with a tools/call or tools/list is not supported';
  for (const m of batch) {
    if (!isObject(m) || m.method !== 'tools/call') continue;
    const name = isObject(m.params) && typeof m.params.name === 'string' ? m.params.name : 'unknown';
    enforcementOf(deps.pep, 'agent-pep/mcp').refuse({ stage: 'action', tool: name }, 'invalid_request', why);
  }
  const error = { code: -32600, message: `agent-pep/mcp: ${why}` };
  return new Response(JSON.stringify({ jsonrpc: '2.0', id: null, error }), {
    status: 400,
    headers: { 'content-type': 'application/json' },
  });
}

/** One request the guard handles. */
interface Call {
  request: Request;
  rest: never[];
  message: Message;
  params: Message;
  inner(request: Request, rest: never[]): Promise<Response>;
  deps: HandlerGuardDeps;
}

/** The request's policy session: the `session` option's answer, else `params._meta['agent-pep/session']`. */
function sessionOfCall(c: Call): string | undefined {
  return requestSession(c.deps.session, String(c.message.method), c.params, c.request);
}

/** Sends `body` to the inner handler as a request like `c.request`; resolves with the response and its text. */
async function send(c: Call, body: Message, method: string): Promise<{ response: Response; text: string }> {
  const req = new Request(c.request.url, {
    method: 'POST',
    headers: headersFor(c.request, method, c.message.method),
    body: JSON.stringify(body),
  });
  const response = await c.inner(req, ownRest(c.rest));
  return { response, text: await response.clone().text() };
}

/** The `inputSchema` the server lists for `name` (a tools/list of the guard's own, every page). */
async function listedSchema(c: Call, name: string): Promise<unknown> {
  let cursor: unknown;
  for (let page = 0; page < 100; page++) {
    const id = `agent-pep/${globalThis.crypto.randomUUID()}`;
    // Stateless revisions carry what a request needs (protocol version, client info) in `_meta`: the same.
    const listParams: Message = { ...(isObject(c.params._meta) ? { _meta: c.params._meta } : {}) };
    if (typeof cursor === 'string') listParams.cursor = cursor;
    const body: Message = { jsonrpc: '2.0', id, method: 'tools/list', params: listParams };
    const { text } = await send(c, body, 'tools/list');
    const result = answerIn(text, id)?.result;
    if (!isObject(result) || !Array.isArray(result.tools)) throw new Error('no tool list');
    const own = result.tools.find((t) => isObject(t) && t.name === name) as Message | undefined;
    if (own !== undefined) return own.inputSchema;
    cursor = result.nextCursor;
    if (typeof cursor !== 'string') return undefined;
  }
  throw new Error('too many pages');
}

/** One tools/call: refused here, or sent on with the args decided and its answer returned. */
async function decideCall(c: Call): Promise<Response> {
  const { pep, verifier } = c.deps;
  const id = c.message.id;
  const name = typeof c.params.name === 'string' ? c.params.name : undefined;
  const refuse = (why: string) => guardAnswer(c, failedClosed(pep, name ?? 'unknown', 'invalid_request', why));
  if (name === undefined) return refuse('no tool name');
  const args = c.params.arguments ?? {};
  if (verifier !== undefined) return verifiedCall(c, verifier, name, args);
  if (!isObject(args)) return refuse('arguments are not an object');
  const session = sessionOfCall(c);
  if (session === undefined) return guardAnswer(c, noSession(pep, name, 'httpRequest'));
  let planned: ReturnType<typeof argsBySchema>;
  try {
    planned = argsBySchema(await listedSchema(c, name), args as Record<string, unknown>);
  } catch {
    return refuse("the server's tool list could not be read to apply the tool's input schema");
  }
  if (planned.kind === 'refused') return refuse(planned.why);
  // A retry of a held call (2026-07-28): a state of the guard's must be unexpired and for this very call, and
  // neither it nor the approval reaches the server. Another state is a tool's own round trip: the server's.
  const bound = { tool: name, argsHash: argsHashOf(planned.args), session };
  const own = isGuardState(c.params.requestState);
  if (own && !c.deps.states.verify(c.params.requestState, bound)) return invalidState(c, name);
  const { requestState: _state, inputResponses: _responses, ...rest } = c.params;
  const forwarded = own ? rest : c.params;
  let original: { response: Response; result: unknown } | undefined;
  const run = async (effective: Record<string, unknown>) => {
    const { response, text } = await send(
      c,
      { ...c.message, params: { ...forwarded, arguments: effective } },
      'tools/call',
    );
    const answer = answerIn(text, id);
    if (answer === undefined || !('result' in answer)) throw new Passthrough(response);
    original = { response, result: answer.result };
    return answer.result;
  };
  try {
    const out = await pep.guardTool(name, run)(planned.args, { session, signal: c.request.signal });
    // The server's own answer as it came (its progress notifications included) when nothing replaced it.
    if (original !== undefined && out === original.result) return original.response;
    return guardAnswer(c, asToolResult(out));
  } catch (err) {
    if (err instanceof Passthrough) return err.response;
    if (err instanceof PolicyEnforcementError) return guardAnswer(c, heldOrRefused(c, err, bound));
    return refuse('the adapter failed');
  }
}

/**
 * A call on a handler guarded with a verifier: the permit binds the args sent, so the server must run them as
 * they are. Args the input schema it lists would change (a default filled in, a value of another type to
 * coerce) are refused before the permit is claimed, as on an `McpServer` (docs/permits.md).
 */
async function verifiedCall(c: Call, verifier: PermitVerifier, name: string, args: unknown): Promise<Response> {
  let why: string | undefined;
  if (isObject(args)) {
    try {
      const planned = argsBySchema(await listedSchema(c, name), args as Record<string, unknown>);
      if (planned.kind === 'refused' || !isDeepStrictEqual(planned.args, args)) {
        why = 'the input schema changes the arguments the permit binds';
      }
    } catch {
      why = "the server's tool list could not be read to apply the tool's input schema";
    }
  }
  const refused = await permitRefusal(c.deps.pep, verifier, name, args, c.params._meta, () => why);
  return refused ? guardAnswer(c, refused) : c.inner(c.request, c.rest);
}

/**
 * The answer to a refused call: at revision 2026-07-28 an ESCALATE the PDP opened is an `InputRequiredResult`
 * (an elicitation with the held text, and a signed `requestState` bound to the call and the escalation) for a
 * client that declared elicitation; the client's retry is decided by the PDP again. Anything else (a client
 * without elicitation included) is the tool-error result with the refusal text.
 */
function heldOrRefused(c: Call, err: PolicyEnforcementError, bound: Omit<StateClaims, 'escalationId'>): unknown {
  const asked = isModern(c) && elicits(c) ? approvalRequest(err, c.deps.states, bound) : undefined;
  return asked ?? refusal(err.toolMessage);
}

/** A retry whose `requestState` fails verification: the SDK's invalid-params error, observed as a refusal. */
function invalidState(c: Call, name: string): Response {
  enforcementOf(c.deps.pep, 'agent-pep/mcp').refuse(
    { stage: 'action', tool: name },
    'invalid_request',
    'the requestState failed verification (tampered, expired, or for another call)',
  );
  const error = { code: -32602, message: 'Invalid or expired requestState', data: { reason: 'invalid_request_state' } };
  return new Response(JSON.stringify({ jsonrpc: '2.0', id: c.message.id, error }), {
    status: 200,
    headers: { 'content-type': 'application/json' },
  });
}

/** A tools/list answer with only the tools `pep.visibleTools` shows for the session, marked private. */
async function filterList(c: Call): Promise<Response> {
  const response = await c.inner(c.request, c.rest);
  const answer = answerIn(await response.clone().text(), c.message.id);
  const result = answer?.result;
  if (!isObject(result) || !Array.isArray(result.tools)) return response;
  const listed = result.tools as unknown[];
  const names = listed.map((t) => (isObject(t) && typeof t.name === 'string' ? t.name : undefined));
  const session = sessionOfCall(c);
  let visible: Set<string>;
  try {
    const shown = await c.deps.pep.visibleTools(
      names.filter((n): n is string => n !== undefined),
      session !== undefined ? { session, signal: c.request.signal } : { signal: c.request.signal },
    );
    visible = new Set(shown);
  } catch {
    visible = new Set();
  }
  const tools = listed.filter((_, i) => names[i] !== undefined && visible.has(names[i] as string));
  // What this caller may see: a cache shared between callers must not keep it (MCP 2026-07-28 `cacheScope`).
  return guardAnswer(c, { ...result, tools, cacheScope: 'private' }, response.status);
}
