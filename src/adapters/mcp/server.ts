/**
 * `guardMcpServer`: every tool of an `McpServer` (1.x or 2.x) runs its callback only after an ALLOW or WARN, or
 * with `{ verifier }` only after the client's permit verified; `tools/list` offers only the tools the policy
 * shows. One route, on the SDK's public API only (CONTRACT section 16): the guard sets the low-level server's
 * `tools/call` and `tools/list` handlers (`removeRequestHandler`, `setRequestHandler`) and serves them from the
 * handles `registerTool` returned (`{ tools: { name: handle } }`), replacing no member of any SDK object.
 * @internal
 */
import { optionError, refuseUnknownKeys } from '../../options/kit.js';
import type { Pep } from '../../pep.js';
import type { PermitVerifier } from '../../permit/verifier.js';
import { assertGuardable, assertPep, isObject, type SessionOfRequest } from './common.js';
import { guardHandler, type McpHttpHandlerLike } from './handler.js';
import { requestStates } from './request-state.js';
import { sdkV1 } from './sdk-v1.js';
import type { Callback } from './server-call.js';
import {
  guardLowLevelV2,
  guardMcpServerV2,
  isLowLevelV2,
  isMcpServerV2,
  type McpToolHandlersV2,
  type McpToolHandleV2,
  type ToolStack,
} from './server-v2.js';

/** A 2.x `McpServer` or low-level `Server` of `@modelcontextprotocol/server` (structurally). */
export type McpServerV2Like =
  | { readonly server: { projectCallToolResult(...args: never[]): unknown } }
  | { projectCallToolResult(...args: never[]): unknown; setRequestHandler(...args: never[]): unknown };

/**
 * A 1.x `McpServer` of `@modelcontextprotocol/sdk` (structurally, so that a project with only the 2.x
 * packages type-checks; `tool` is 1.x only).
 */
export interface McpServerV1Like {
  registerTool(...args: never[]): unknown;
  tool(...args: never[]): unknown;
  readonly server: object;
}

/** Options of {@link guardMcpServer}. */
export interface GuardMcpServerOptions {
  /**
   * Verify the permit the client's PEP sent in `params._meta['agent-pep/permit']` (with every check of
   * docs/permits.md, the replay claim included) instead of asking the PDP. A call without a
   * valid permit is refused; the PDP is never asked. Make it with `createPermitVerifier({ keys, issuer,
   * audience })`, `audience` being the name the PDP puts in `aud` for this server.
   * @defaultValue undefined (each call is decided by `pep.guardTool`, which asks the PDP)
   */
  verifier?: PermitVerifier | undefined;
  /**
   * Answer `tools/list` with the tools (of those in `tools`) `pep.visibleTools` shows for the request's
   * policy session (its `_meta` or the `session` option, else the Pep's; never the transport's
   * `Mcp-Session-Id`): a tool the policy blocks outright is never offered (docs/visibility.md). A hidden tool
   * called anyway is still decided per call. @defaultValue true
   */
  hideBlocked?: boolean | undefined;
  /**
   * The policy session of a request, from what the server knows of its caller (its auth, a header in
   * `extra.requestInfo`): called with the request (`{ method, params }`) and the SDK's `extra`; an answer
   * that is not a non-empty string (or a throw) is no session, and a `tools/call` the guard decides
   * without one is refused (`invalid_request`). Never the transport's `Mcp-Session-Id` (CONTRACT
   * section 16). @defaultValue undefined (the session the client's guard sent in
   * `params._meta['agent-pep/session']`)
   */
  session?: ((request: { method: string; params: Record<string, unknown> }, extra: unknown) => string) | undefined;
  /**
   * A `createMcpHandler` handler, or a 2.x `McpServer` or `Server`: the HMAC-SHA256 key (at least 32 bytes)
   * that signs the `requestState` of the `InputRequiredResult` an ESCALATE is answered with at revision
   * 2026-07-28, to a client that declared elicitation. Give every instance behind one endpoint (and every
   * server a `createMcpHandler` factory makes) the same key. @defaultValue a random key of this process (one
   * per guarded server)
   */
  requestStateKey?: Uint8Array | undefined;
  /** How long a `requestState` may be echoed back, in milliseconds. @defaultValue 600000 (10 minutes) */
  requestStateTtlMs?: number | undefined;
  /**
   * An `McpServer` (1.x or 2.x) only, and required there: the handle `registerTool` returned for each tool,
   * by name (`{ tools: { refund_payment: handle } }`). The guard serves `tools/call` and `tools/list` itself
   * from this record through the low-level server's public `removeRequestHandler` and `setRequestHandler`
   * (the SDK keeps its tools private), replacing no member of any SDK object. The record is read again at
   * each `tools/list` and `tools/call`: a tool registered after guarding is served once its handle is added
   * (`tools.new_tool = server.registerTool(...)`); a tool whose handle is not in it is never listed and its
   * calls are refused (`invalid_request`, observed), as are names that normalize alike (`refundPayment`,
   * `refund_payment`: a permit names the normalized tool) and an entry that is not a handle; delete a key to
   * stop serving its tool. A server with no tool registered yet must declare `capabilities: { tools: {} }`
   * (the SDK then sets its tool handlers at construction, so a later `registerTool` leaves the guard's
   * alone; without it, guarding throws: the SDK refuses a tools handler). Task tools
   * (`experimental.tasks.registerToolTask`, 1.x) are not served (their calls answer a tool error).
   * @defaultValue undefined (a TypeError for an `McpServer`, `err.option` `'tools'`)
   */
  tools?: Record<string, McpToolHandleV2> | undefined;
  /**
   * A 2.x low-level `Server` only (and required there): the `tools/call` handler (`call(request, ctx)`,
   * run only after the guard's decision, with the arguments decided) and, optionally, the `tools/list`
   * one (`list`), which the guard sets on the server. Do not set them on the server yourself.
   */
  toolHandlers?: McpToolHandlersV2 | undefined;
  /**
   * An `McpServer` only: the most elements (array items and object members, counted through every level) the
   * arguments of a `tools/call` may hold; a call over it is refused (`invalid_request`, observed) before the
   * schema parse, the action hash and the PDP. The guard serves `tools/call` itself, so the SDK's own
   * `maxToolInputElements` server option (private to the SDK) does not run on a guarded server: give the
   * same value here. A number of at least 1 (an integer), or `Infinity`.
   * @defaultValue undefined (no ceiling, as the SDK's default)
   */
  maxToolInputElements?: number | undefined;
  /**
   * A `createMcpHandler` handler only: the most bytes of a request body the guard reads (it reads the body
   * before the SDK does). A body over it is answered as the SDK answers it (413, JSON-RPC -32000) and nothing
   * is decided or run; give the same value as the SDK's `maxRequestBodySize` option when you set that one.
   * A positive, finite number of bytes.
   * @defaultValue 4194304 (4 MiB, the SDK's default)
   */
  maxRequestBodySize?: number | undefined;
}

const SERVER_OPTIONS: ReadonlySet<string> = new Set([
  'verifier',
  'hideBlocked',
  'session',
  'requestStateKey',
  'requestStateTtlMs',
  'tools',
  'toolHandlers',
  'maxToolInputElements',
  'maxRequestBodySize',
]);

const guardedServers = new WeakSet<object>();

/** `createMcpHandler`'s default ceiling on a request body, in bytes (the SDK's `DEFAULT_MAX_REQUEST_BODY_SIZE`). */
const DEFAULT_MAX_REQUEST_BODY_SIZE = 4 * 1024 * 1024;

const EMPTY_OBJECT_JSON_SCHEMA = { type: 'object', properties: {} };

/**
 * The 1.x stack of the owned route (`{ tools }`): the SDK's own schema parse and JSON Schema conversion
 * (`zod-compat`, `zod-json-schema-compat`, public modules of the SDK), handlers set by request schema.
 */
const V1_STACK: ToolStack = {
  serve(low, method, handler) {
    const l = low as { removeRequestHandler(m: string): void; setRequestHandler(schema: unknown, h: Callback): void };
    l.removeRequestHandler(method);
    const { CallToolRequestSchema, ListToolsRequestSchema } = sdkV1();
    l.setRequestHandler(method === 'tools/call' ? CallToolRequestSchema : ListToolsRequestSchema, handler);
  },
  async parse(schema, value) {
    const { normalizeObjectSchema, safeParseAsync, getParseErrorMessage } = sdkV1();
    const s = schema as Parameters<typeof normalizeObjectSchema>[0];
    const parsed = await safeParseAsync((normalizeObjectSchema(s) ?? s) as never, value);
    if (!parsed.success) throw new Error(getParseErrorMessage('error' in parsed ? parsed.error : 'Unknown error'));
    return parsed.data;
  },
  inputJson(t) {
    const { normalizeObjectSchema, toJsonSchemaCompat } = sdkV1();
    const obj = normalizeObjectSchema(t.inputSchema as never);
    return obj ? toJsonSchemaCompat(obj, { strictUnions: true, pipeStrategy: 'input' }) : EMPTY_OBJECT_JSON_SCHEMA;
  },
  outputJson(t) {
    const { normalizeObjectSchema, toJsonSchemaCompat } = sdkV1();
    const obj = t.outputSchema ? normalizeObjectSchema(t.outputSchema as never) : undefined;
    return obj ? toJsonSchemaCompat(obj, { strictUnions: true, pipeStrategy: 'output' }) : undefined;
  },
  project: (_low, result) => result,
};

/** Whether `server` is a 1.x `McpServer` (`registerTool` and `tool`, a low-level `server` taking schemas). */
function isMcpServerV1(server: unknown): server is Record<string, unknown> {
  return (
    isObject(server) &&
    typeof server.registerTool === 'function' &&
    typeof server.tool === 'function' &&
    isObject(server.server) &&
    typeof server.server.removeRequestHandler === 'function' &&
    typeof server.server.setRequestHandler === 'function'
  );
}

/** The checked options (both kinds of server). @throws TypeError with `err.option` */
function readServerOptions(scope: string, pep: Pep, opts: GuardMcpServerOptions | undefined) {
  assertPep(pep, scope);
  const rawOpts: unknown = opts;
  if (rawOpts !== undefined && !isObject(rawOpts)) optionError(scope, 'opts', 'expected an object');
  if (rawOpts !== undefined) refuseUnknownKeys(scope, rawOpts, SERVER_OPTIONS);
  const verifier: PermitVerifier | undefined = opts?.verifier;
  const given: unknown = verifier;
  if (given !== undefined && !(isObject(given) && typeof given.verify === 'function')) {
    optionError(scope, 'verifier', 'expected a PermitVerifier (createPermitVerifier)');
  }
  const hideBlocked: unknown = opts?.hideBlocked ?? true;
  if (typeof hideBlocked !== 'boolean') optionError(scope, 'hideBlocked', 'expected a boolean');
  const session: unknown = opts?.session;
  if (session !== undefined && typeof session !== 'function') optionError(scope, 'session', 'expected a function');
  const key: unknown = opts?.requestStateKey;
  if (key !== undefined && !(key instanceof Uint8Array && key.length >= 32)) {
    optionError(scope, 'requestStateKey', 'expected a Uint8Array of at least 32 bytes');
  }
  const ttl: unknown = opts?.requestStateTtlMs ?? 600_000;
  if (!Number.isSafeInteger(ttl) || (ttl as number) <= 0 || (ttl as number) > 86_400_000) {
    optionError(scope, 'requestStateTtlMs', 'expected milliseconds, from 1 to 86400000');
  }
  const max: unknown = opts?.maxToolInputElements;
  if (max !== undefined && max !== Number.POSITIVE_INFINITY && !(Number.isSafeInteger(max) && (max as number) >= 1)) {
    optionError(scope, 'maxToolInputElements', 'expected an integer of at least 1, or Infinity');
  }
  const bodySize: unknown = opts?.maxRequestBodySize ?? DEFAULT_MAX_REQUEST_BODY_SIZE;
  if (typeof bodySize !== 'number' || !Number.isFinite(bodySize) || bodySize <= 0) {
    optionError(scope, 'maxRequestBodySize', 'expected a positive, finite number of bytes');
  }
  if (verifier === undefined) assertGuardable(pep, scope);
  return {
    maxRequestBodySize: bodySize as number,
    maxInputElements: max === Number.POSITIVE_INFINITY ? undefined : (max as number | undefined),
    verifier,
    hideBlocked: hideBlocked as boolean,
    session: session as SessionOfRequest | undefined,
    states: requestStates(key as Uint8Array | undefined, ttl as number),
  };
}

/**
 * Guards every tool of an `McpServer` of `@modelcontextprotocol/sdk` 1.x, on the SDK's public API only
 * (CONTRACT section 16): the guard sets the low-level server's `tools/call` and `tools/list` handlers
 * (`server.server.removeRequestHandler` and `setRequestHandler`) and serves them from the handles
 * `registerTool` returned, passed as `{ tools: { name: handle } }` (required: the SDK keeps its tools
 * private); no member of the server, its `server`, a handle or the transport is replaced. Register the tools
 * first, then guard. The `tools` record is read at each request: a tool registered after guarding is served
 * once its handle is added to it (`tools.new_tool = server.registerTool(...)`); one whose handle is not there
 * is never listed and its calls are refused (observed).
 *
 * Each call is validated by the tool's input schema as the SDK does, then, without a verifier, goes through
 * `pep.guardTool` with the tool's name and the arguments as the schema parsed them (coercions and defaults
 * applied: what the callback gets): the PDP decides, the permit is verified, interceptors apply (a
 * `substitute` answers without running the tool, `after` interceptors see the result), and the handle's
 * current `handler` runs (so a callback swapped in later with the handle's `update({ callback })` is guarded
 * too) with the PDP's `transformedArgs` on WARN (parsed by the tool's input schema first; args it would
 * change are refused). Its output is validated as the SDK does. With `{ verifier }`, the server does not ask
 * the PDP: it verifies the permit the client's PEP put in `params._meta['agent-pep/permit']` against the tool
 * name and the arguments as received, claims its `jti` (so a replayed request is refused), and only then
 * runs the callback (a schema whose parse adds a member, such as a default, or changes a value sent, such
 * as a coercion, is refused: the permit binds the arguments sent). `tools/list` answers only the tools
 * `pep.visibleTools` shows for the session, unless `{ hideBlocked: false }` (docs/visibility.md).
 *
 * @param pep - the client that decides (`createPep`); it must be able to guard tools (`permits`
 *   configured, or `permits: false`) unless `opts.verifier` is given. Session: `opts.session(request,
 *   extra)` when given, else the one the client's guard sent in `params._meta['agent-pep/session']`;
 *   never the transport's `Mcp-Session-Id`. A `tools/call` the guard decides without one is refused
 *   (`invalid_request`, observed like any synthesized BLOCK).
 * @param server - an `McpServer` of `@modelcontextprotocol/sdk` 1.x with a tool registered or
 *   `capabilities: { tools: {} }` declared, before or after `connect`
 * @param opts - `{ tools, verifier?, hideBlocked?, session? }` (see {@link GuardMcpServerOptions})
 * @returns the same server
 * @throws TypeError when `pep` is not a Pep or cannot guard tools, `server` is not an `McpServer`,
 *   `@modelcontextprotocol/sdk` 1.x cannot be loaded, the server is already guarded, or `opts` has an
 *   unknown or bad key (`err.option` names it): `tools` missing (a breaking change of 0.x: pass the handles
 *   `registerTool` returned; docs/mcp.md, Migrating), holding a value that is not a handle or two names that
 *   normalize alike (a permit names the normalized tool), or the server not serving tools yet (no tool
 *   registered, no tools capability declared)
 * @remarks Fails closed: a blocked or held call, a PDP that is down or slow, a permit that is missing
 * or fails any check, a tool whose handle the guard was not given, and any error of the adapter itself
 * answer `{ isError: true, content: [{ type: 'text', text: toolMessage }] }` and the callback does not run;
 * every refusal of the guard reaches `onDecision` and telemetry. ESCALATE is a hold the model is told about:
 * MCP 1.x has no human-approval flow for `tools/call`. An error thrown by the callback itself is the SDK's
 * usual tool error. Never set `tools/call` or `tools/list` on the low-level server after guarding (that
 * handler would replace the guard's). A server with no tool before guarding declares `capabilities: { tools:
 * {} }` (then `{ tools: {} }` and handles added later work); without it the SDK refuses the guard's
 * handlers and guarding throws (`err.option` `'tools'`). With a verifier,
 * refusals are not sent to the PDP, so its evidence does not show them; the Pep's interceptors do not run on
 * the server (the client's did). A PDP that fails during `tools/list` hides every tool.
 * @example
 * ```ts
 * const server = new McpServer({ name: 'payments', version: '1.0.0' });
 * const refund = server.registerTool('refund_payment', { inputSchema: { orderId: z.string(), amount: z.number() } },
 *   async ({ orderId, amount }) => ({ content: [{ type: 'text', text: `refunded ${amount} on ${orderId}` }] }));
 * const tools = { refund_payment: refund };
 * guardMcpServer(pep, server, {
 *   tools,
 *   verifier: createPermitVerifier({ keys: jwksUrl, issuer, audience: 'payments-mcp' }),
 * });
 * // later: a tool registered after guarding is served once its handle is in the record
 * tools.lookup_order = server.registerTool('lookup_order', { inputSchema: { id: z.string() } }, lookup);
 * ```
 */
export function guardMcpServer<S extends McpServerV1Like>(pep: Pep, server: S, opts: GuardMcpServerOptions): S;
/**
 * Guards the Web-standard handler of `@modelcontextprotocol/server` 2.x (`createMcpHandler(...)`, protocol
 * 2026-07-28 and its stateless fallback): returns a new handler to serve instead, whose `fetch` decides each
 * `tools/call` before the server sees it (on the args the tool will run with: the defaults of the input schema
 * the server lists filled in, a value its parser would coerce refused), in the request's policy session
 * (`params._meta['agent-pep/session']`, or `opts.session(request, httpRequest)`), and answers `tools/list` with
 * what the caller may see, marked `cacheScope: "private"`. The handler given is not changed (serve the one
 * returned). With `{ verifier }`, the client's permit is verified instead of asking the PDP.
 * @param pep - the client that decides (`createPep`)
 * @param handler - `createMcpHandler(factory, options?)`'s result (an object with `fetch(request)`)
 * @param opts - `{ verifier?, hideBlocked?, session? }` (see {@link GuardMcpServerOptions})
 * @returns a new handler with the same members and a guarded `fetch`
 * @throws TypeError as for an `McpServer` (a bad option names it in `err.option`)
 * @remarks Fails closed, as for an `McpServer`. At revision 2026-07-28, ESCALATE answers an
 * `InputRequiredResult` (an elicitation with the held text) whose `requestState` is HMAC-SHA256 signed
 * (`requestStateKey`) and bound to the tool, the args hash, the session and the escalation id, expiring after
 * `requestStateTtlMs`; the client's retry is decided by the PDP again (an approval in the host alone runs
 * nothing), and a tampered, expired or moved state is the SDK's invalid-params error (-32602,
 * `invalid_request_state`). Earlier revisions get the hold text. A `tools/call` without a session is refused
 * (`invalid_request`); every refusal of the guard is observed by `onDecision` and telemetry.
 */
export function guardMcpServer<H extends McpHttpHandlerLike>(pep: Pep, handler: H, opts?: GuardMcpServerOptions): H;
/**
 * Guards a 2.x `McpServer` or low-level `Server` of `@modelcontextprotocol/server` given directly (CONTRACT
 * section 16), with the SDK's public API only: no member of the server, its `server` or its transport is
 * replaced. The guard sets the low-level server's `tools/call` and `tools/list` handlers (public
 * `removeRequestHandler` and `setRequestHandler`) and serves them:
 * - an `McpServer`: from the handles `registerTool` returned, passed as `{ tools: { name: handle } }` (the
 *   SDK keeps its tool table private). Each call is validated by the tool's input schema as the SDK does,
 *   decided on the parsed args (the args the callback runs with: defaults and coercions applied), then run
 *   through the handle's current `handler` (so `update({ callback })` later stays guarded), its output
 *   validated and projected as the SDK does. The same route as a 1.x `McpServer`: the `tools` record is read
 *   at each request (a handle added after guarding is served; a tool whose handle is not there is not listed
 *   and its calls are refused, observed), and a server with no tool yet declares `capabilities: { tools: {} }`.
 * - a low-level `Server`: with `{ toolHandlers: { call, list? } }`, the guard's `tools/call` decides on the
 *   arguments as received and only then calls `call(request, ctx)`; `list` answers `tools/list`.
 * Session, verifier, `hideBlocked` and refusals as for a 1.x `McpServer`; every refusal of the guard reaches
 * `onDecision` and telemetry. At revision 2026-07-28, to a client that declared elicitation, ESCALATE is an
 * `InputRequiredResult` whose `requestState` the guard signs (`requestStateKey`), as on the handler route; the
 * retry is decided by the PDP again, and a tampered, expired or moved state is the SDK's invalid-params error
 * (-32602). Never set `tools/call` on the low-level server after guarding: that handler would replace the
 * guard's.
 * @param pep - the client that decides (`createPep`)
 * @param server - a 2.x `McpServer` (with `opts.tools`) or `Server` (with `opts.toolHandlers`)
 * @param opts - see {@link GuardMcpServerOptions}
 * @returns the same server
 * @throws TypeError when `tools` (`McpServer`) or `toolHandlers` (`Server`) is missing or bad (`err.option`),
 *   two tools' names normalize alike, the `Server` already has a `tools/call` handler (the guard cannot reach
 *   it: pass it as `toolHandlers.call`), the server is already guarded, or as for a 1.x `McpServer`
 */
export function guardMcpServer<S extends McpServerV2Like>(pep: Pep, server: S, opts: GuardMcpServerOptions): S;
export function guardMcpServer(pep: Pep, target: unknown, opts?: GuardMcpServerOptions): unknown {
  const scope = 'guardMcpServer';
  const kind = isMcpServerV2(target)
    ? 'server'
    : isLowLevelV2(target)
      ? 'low'
      : isMcpServerV1(target)
        ? 'v1'
        : isObject(target) && typeof target.fetch === 'function' && typeof target.registerTool !== 'function'
          ? 'handler'
          : undefined;
  if (kind === undefined) {
    throw new TypeError(
      `${scope}: server must be an McpServer of @modelcontextprotocol/sdk 1.x or @modelcontextprotocol/server 2.x, a 2.x Server, or a createMcpHandler handler`,
    );
  }
  const deps = readServerOptions(scope, pep, opts);
  if (kind === 'handler') {
    for (const key of ['tools', 'toolHandlers', 'maxToolInputElements'] as const) {
      if (opts?.[key] !== undefined)
        optionError(scope, key, 'not for a createMcpHandler handler (its server keeps its own)');
    }
    return guardHandler(target as unknown as McpHttpHandlerLike, { pep, ...deps });
  }
  if (opts?.maxRequestBodySize !== undefined)
    optionError(scope, 'maxRequestBodySize', 'only for a createMcpHandler handler');
  if (guardedServers.has(target as object)) throw new TypeError(`${scope}: this server is already guarded`);
  const other = kind === 'low' ? 'tools' : 'toolHandlers';
  if (opts?.[other] !== undefined) optionError(scope, other, 'not for this kind of server');
  if (kind === 'low' && opts?.maxToolInputElements !== undefined) {
    optionError(scope, 'maxToolInputElements', 'only for an McpServer (the toolHandlers route has no such ceiling)');
  }
  const { verifier, hideBlocked, session, maxInputElements, states } = deps;
  const serverDeps = { scope, pep, verifier, hideBlocked, session, maxInputElements, states };
  if (kind === 'low') guardLowLevelV2(target as never, opts?.toolHandlers, serverDeps);
  else if (kind === 'server') guardMcpServerV2(target as Record<string, unknown>, opts?.tools, serverDeps);
  else {
    // 1.x: the same route, with the 1.x SDK's schema helpers (loaded now: a 1.x server needs the 1.x SDK).
    sdkV1();
    guardMcpServerV2(target as Record<string, unknown>, opts?.tools, serverDeps, V1_STACK);
  }
  guardedServers.add(target as object);
  return target;
}
