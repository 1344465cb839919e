/**
 * `guardMcpServer`: every tool of an `McpServer` 1.x runs its callback only after an ALLOW or WARN, or
 * with `{ verifier }` only after the client's permit verified; `tools/list` offers only the tools the
 * policy shows. Public API of the MCP SDK only: each tool's callback is wrapped at registration
 * (`registerTool`, `tool`, `experimental.tasks.registerToolTask`, `RegisteredTool.update`), and the
 * SDK's own `tools/list` and `tools/call` handlers are wrapped as it sets them through
 * `server.server.setRequestHandler`, the documented request-handler API. Tools registered before the
 * guard are decided on the server's transport (`transport.ts`).
 * @internal
 */
// Types only, for the 1.x route's internals: never in the emitted declarations (a 2.x-only project type-checks).
import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { VisibleToolsOptions } from '../../core/visibility.js';
import { normalizeToolName } from '../../internal/tool-name.js';
import { optionError, refuseUnknownKeys } from '../../options/kit.js';
import type { Pep } from '../../pep.js';
import type { PermitVerifier } from '../../permit/verifier.js';
import {
  assertGuardable,
  assertPep,
  isObject,
  JSONRPC_ERROR,
  McpProtocolError,
  refusals,
  requestSession,
  type SessionOfRequest,
  type ToolResult,
} from './common.js';
import { guardHandler, type McpHttpHandlerLike } from './handler.js';
import { requestStates } from './request-state.js';
import { sdkV1 } from './sdk-v1.js';
import { type Callback, makeRunner, type Received } from './server-call.js';
import {
  guardLowLevelV2,
  guardMcpServerV2,
  isLowLevelV2,
  isMcpServerV2,
  type McpToolHandlersV2,
  type McpToolHandleV2,
  type ToolStack,
  visibleOnly,
} from './server-v2.js';
import { guardTransport, type TransportLike } from './transport.js';

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
   * Answer `tools/list` with the tools `pep.visibleTools` shows for the session (the MCP session id, else
   * the Pep's): a tool the policy blocks outright is never offered (docs/visibility.md). A hidden tool
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
   * A `createMcpHandler` handler only: the HMAC-SHA256 key (at least 32 bytes) that signs the `requestState`
   * of the `InputRequiredResult` an ESCALATE is answered with at revision 2026-07-28. Give every instance
   * behind one endpoint the same key. @defaultValue a random key of this process
   */
  requestStateKey?: Uint8Array | undefined;
  /** How long a `requestState` may be echoed back, in milliseconds. @defaultValue 600000 (10 minutes) */
  requestStateTtlMs?: number | undefined;
  /**
   * An `McpServer` (required for a 2.x one; on 1.x it selects this route): the handle `registerTool`
   * returned for each tool, by name (`{ tools: { refund_payment: handle } }`). The guard serves `tools/call`
   * and `tools/list` itself from these handles through the low-level server's public `removeRequestHandler`
   * and `setRequestHandler` (the SDK keeps its tools private), replacing no member of any SDK object: a tool
   * whose handle is not given is not listed and its calls are refused. Register the tools first, then guard.
   * Task tools (`experimental.tasks.registerToolTask`) are not served on this route (their calls answer a
   * tool error). @defaultValue undefined (1.x: registration and the low-level handlers are wrapped instead)
   */
  tools?: Record<string, McpToolHandleV2> | undefined;
  /**
   * A 2.x low-level `Server` only (and required there): the `tools/call` handler (`call(request, ctx)`,
   * run only after the guard's decision, with the arguments decided) and, optionally, the `tools/list`
   * one (`list`), which the guard sets on the server. Do not set them on the server yourself.
   */
  toolHandlers?: McpToolHandlersV2 | undefined;
}

const SERVER_OPTIONS: ReadonlySet<string> = new Set([
  'verifier',
  'hideBlocked',
  'session',
  'requestStateKey',
  'requestStateTtlMs',
  'tools',
  'toolHandlers',
]);

const guardedServers = new WeakSet<object>();

/** The public members of the low-level `Server` (`server.server`) this adapter uses. */
interface LowLevel {
  setRequestHandler(schema: unknown, handler: Callback): void;
  connect(transport: unknown): Promise<void>;
  readonly transport?: unknown;
  assertCanSetRequestHandler(method: string): void;
  fallbackRequestHandler?: Callback | undefined;
}

type Register = (...args: unknown[]) => unknown;

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

/** The method a request schema is for (`tools/call`, ...), or undefined. */
function methodOf(schema: unknown): unknown {
  const { CallToolRequestSchema, ListToolsRequestSchema, getLiteralValue } = sdkV1();
  if (schema === CallToolRequestSchema) return 'tools/call';
  if (schema === ListToolsRequestSchema) return 'tools/list';
  try {
    const shape = (schema as { shape?: { method?: unknown } } | undefined)?.shape;
    return shape?.method === undefined ? undefined : getLiteralValue(shape.method as never);
  } catch {
    return undefined;
  }
}

/** The normalized form of a tool name, or undefined for one that normalizes to nothing (refused when called). */
function normalized(key: unknown): string | undefined {
  if (typeof key !== 'string') return undefined;
  try {
    return normalizeToolName(key);
  } catch {
    return undefined;
  }
}

/** Whether the low-level server has a handler for `method` (public `assertCanSetRequestHandler` throws then). */
function hasHandler(low: LowLevel, method: string): boolean {
  try {
    low.assertCanSetRequestHandler(method);
    return false;
  } catch {
    return true;
  }
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
  if (verifier === undefined) assertGuardable(pep, scope);
  return {
    verifier,
    hideBlocked: hideBlocked as boolean,
    session: session as SessionOfRequest | undefined,
    states: requestStates(key as Uint8Array | undefined, ttl as number),
  };
}

/** The checked options and server. @throws TypeError */
function checkArguments(pep: Pep, server: McpServer, opts: GuardMcpServerOptions | undefined) {
  const scope = 'guardMcpServer';
  const { verifier, hideBlocked, session } = readServerOptions(scope, pep, opts);
  const s = server as unknown as Record<string, unknown>;
  const low = isObject(server) ? (s.server as LowLevel | undefined) : undefined;
  if (
    !isObject(server) ||
    typeof s.registerTool !== 'function' ||
    typeof s.tool !== 'function' ||
    !isObject(low) ||
    typeof low.setRequestHandler !== 'function' ||
    typeof low.assertCanSetRequestHandler !== 'function'
  ) {
    throw new TypeError(
      `${scope}: server must be an McpServer of @modelcontextprotocol/sdk 1.x or a createMcpHandler handler of @modelcontextprotocol/server 2.x`,
    );
  }
  if (guardedServers.has(server)) throw new TypeError(`${scope}: this server is already guarded`);
  // Tools registered before this call: the SDK's tools/list and tools/call handlers are there, and their
  // callbacks are out of the public API's reach, so their calls are decided on the transport. A tools/call
  // handler without the SDK's tools/list beside it was set on the low-level server: code the guard cannot see.
  const preexisting = hasHandler(low, 'tools/call');
  if (preexisting && !hasHandler(low, 'tools/list')) {
    throw new TypeError(
      `${scope}: the low-level server has a tools/call handler of its own, which the guard cannot see`,
    );
  }
  return { scope, verifier, hideBlocked, low, preexisting, session };
}

/**
 * Guards every tool of an `McpServer` (`@modelcontextprotocol/sdk` 1.x): those registered after this call
 * (`registerTool`, the older `tool()` overloads, the experimental task tools), including a callback
 * swapped in later with `RegisteredTool.update({ callback })` or assigned to `handler`, and a tool
 * renamed with `update({ name })` (it is decided under its new name), and those registered before it.
 * It uses the SDK's public API only (docs/adapters.md names the SDK line tested): the tools registered
 * before it are guarded on the server's transport (the public `Transport` interface, now if connected,
 * else at `connect`): each `tools/call` to them is decided, or its permit verified, on the arguments as
 * received before the server sees it (the guard cannot see their input schema: guard first where a
 * schema defaults, coerces or transforms; docs/adapters.md), and look-alike names among them are
 * refused when called. The rules below on parsed args are those of tools registered after it.
 *
 * Without a verifier, each `tools/call` goes through `pep.guardTool` with the tool name as registered
 * and the arguments as the tool's input schema parsed them (coercions and defaults applied: what the
 * callback gets): the PDP decides, the permit is verified, interceptors apply (a `substitute` answers
 * without running the tool, `after` interceptors see the result), and the callback runs with the PDP's
 * `transformedArgs` on WARN (parsed by the tool's input schema first; args it would change are refused).
 * With `{ verifier }`, the server does not ask the PDP: it verifies the permit the client's PEP put in
 * `params._meta['agent-pep/permit']` against the tool name as registered and the arguments as
 * received, claims its `jti` (so a replayed request is refused), and only then runs the callback (a
 * schema whose parse adds a member, such as a default, or changes a value sent, such as a coercion, is
 * refused: the permit binds the arguments sent). `tools/list` answers only the tools
 * `pep.visibleTools` shows for the session, unless `{ hideBlocked: false }` (docs/visibility.md).
 *
 * @param pep - the client that decides (`createPep`); it must be able to guard tools (`permits`
 *   configured, or `permits: false`) unless `opts.verifier` is given. Session: `opts.session(request,
 *   extra)` when given, else the one the client's guard sent in `params._meta['agent-pep/session']`;
 *   never the transport's `Mcp-Session-Id`. A `tools/call` the guard decides without one is refused
 *   (`invalid_request`, observed like any synthesized BLOCK).
 * @param server - an `McpServer` of `@modelcontextprotocol/sdk` 1.x, before or after `connect`, with or without tools
 * @param opts - `{ verifier?, hideBlocked?, session? }` (see {@link GuardMcpServerOptions})
 * @returns the same server
 * @throws TypeError when `pep` is not a Pep or cannot guard tools, `server` is not an `McpServer` 1.x, `@modelcontextprotocol/sdk` 1.x cannot be loaded,
 *   the server is already guarded, its low-level `server.server` has a `tools/call` handler of its own
 *   (without the SDK's `tools/list` beside it), its transport's `onmessage` or `send` cannot be
 *   redefined (also at a later `connect`, rejected), or `opts` has an unknown or bad key (`err.option`
 *   names it); later,
 *   `server.server.setRequestHandler` for `tools/call` (that handler would answer every call without the
 *   guard) and registering or renaming a tool to a name that normalizes like another's (`refundPayment`,
 *   `refund_payment`: a permit names the normalized tool) throw `TypeError` too
 * @remarks Fails closed: a blocked or held call, a PDP that is down or slow, a permit that is missing
 * or fails any check, and any error of the adapter itself answer `{ isError: true, content: [{ type:
 * 'text', text: toolMessage }] }` and the callback does not run. ESCALATE is a hold the model is told
 * about: MCP 1.x has no human-approval flow for `tools/call`. An error thrown by the callback itself is
 * the SDK's usual tool error. With a verifier, refusals are not sent to the PDP, so its evidence does
 * not show them; the Pep's interceptors do not run on the server (the client's did). A PDP that fails
 * during `tools/list` hides every tool.
 * @example
 * ```ts
 * const server = new McpServer({ name: 'payments', version: '1.0.0' });
 * guardMcpServer(pep, server, {
 *   verifier: createPermitVerifier({ keys: jwksUrl, issuer, audience: 'payments-mcp' }),
 * });
 * server.registerTool('refund_payment', { inputSchema: { orderId: z.string(), amount: z.number() } },
 *   async ({ orderId, amount }) => ({ content: [{ type: 'text', text: `refunded ${amount} on ${orderId}` }] }));
 * ```
 */
export function guardMcpServer<S extends McpServerV1Like>(pep: Pep, server: S, opts?: GuardMcpServerOptions): S;
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
 *   validated and projected as the SDK does. A tool whose handle is not given is not listed and its calls are
 *   refused; register every tool before guarding.
 * - a low-level `Server`: with `{ toolHandlers: { call, list? } }`, the guard's `tools/call` decides on the
 *   arguments as received and only then calls `call(request, ctx)`; `list` answers `tools/list`.
 * Session, verifier, `hideBlocked` and refusals as for a 1.x `McpServer`; every refusal of the guard reaches
 * `onDecision` and telemetry. Never set `tools/call` on the low-level server after guarding: that handler
 * would replace the guard's.
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
  const v2 = isMcpServerV2(target) ? 'server' : isLowLevelV2(target) ? 'low' : undefined;
  if (v2 !== undefined) {
    const deps = readServerOptions(scope, pep, opts);
    if (guardedServers.has(target as object)) throw new TypeError(`${scope}: this server is already guarded`);
    const v2Deps = { scope, pep, verifier: deps.verifier, hideBlocked: deps.hideBlocked, session: deps.session };
    if (opts?.[v2 === 'server' ? 'toolHandlers' : 'tools'] !== undefined) {
      optionError(scope, v2 === 'server' ? 'toolHandlers' : 'tools', 'not for this kind of server');
    }
    if (v2 === 'server') guardMcpServerV2(target as Record<string, unknown>, opts?.tools, v2Deps);
    else guardLowLevelV2(target as never, opts?.toolHandlers, v2Deps);
    guardedServers.add(target as object);
    return target;
  }
  if (opts?.tools !== undefined && isMcpServerV1(target)) {
    // The owned route on 1.x: the tools reached through their handles, no member of the SDK replaced.
    const deps = readServerOptions(scope, pep, opts);
    if (guardedServers.has(target)) throw new TypeError(`${scope}: this server is already guarded`);
    if (opts.toolHandlers !== undefined) optionError(scope, 'toolHandlers', 'not for this kind of server');
    const v1Deps = { scope, pep, verifier: deps.verifier, hideBlocked: deps.hideBlocked, session: deps.session };
    guardMcpServerV2(target, opts.tools, v1Deps, V1_STACK);
    guardedServers.add(target);
    return target;
  }
  for (const key of ['tools', 'toolHandlers'] as const) {
    if (opts?.[key] !== undefined) optionError(scope, key, 'only for a 2.x McpServer (tools) or Server (toolHandlers)');
  }
  if (isObject(target) && typeof target.fetch === 'function' && typeof target.registerTool !== 'function') {
    const deps = readServerOptions(scope, pep, opts);
    return guardHandler(target as unknown as McpHttpHandlerLike, { pep, ...deps });
  }
  return guardServer(pep, target as McpServer, opts);
}

/** `guardMcpServer` for an `McpServer` 1.x. */
function guardServer(pep: Pep, server: McpServer, opts?: GuardMcpServerOptions): McpServer {
  const { scope, verifier, hideBlocked, low, preexisting, session } = checkArguments(pep, server, opts);
  // The 1.x SDK's values, loaded now (not at this module's load): a 1.x server needs the 1.x SDK.
  sdkV1();
  /** Each guarded tool and the name it is registered under now. */
  const names = new Map<RegisteredTool, string>();
  const received = new WeakMap<object, Received>();
  const run = makeRunner({ pep, verifier, received, session, nameOf: (tool) => names.get(tool as RegisteredTool) });

  /** Refuses `name` when another guarded tool's name normalizes alike: a permit could not tell them apart. */
  function refuseLookalike(name: unknown, self: RegisteredTool | undefined): void {
    const norm = normalized(name);
    if (norm === undefined) return;
    for (const [tool, other] of names) {
      if (tool !== self && other !== name && normalized(other) === norm) {
        throw new TypeError(
          `${scope}: tools ${JSON.stringify(other.slice(0, 64))} and ${JSON.stringify(String(name).slice(0, 64))} have the same normalized name; a permit cannot tell them apart`,
        );
      }
    }
  }

  const adopt = adopter(run, names, refuseLookalike);
  let installing = false;
  /** A registration method that guards the tool it makes. */
  const registering =
    (register: Register, self: unknown): Register =>
    (...args: unknown[]) => {
      refuseLookalike(args[0], undefined);
      installing = true;
      let tool: unknown;
      try {
        tool = register.apply(self, args);
      } finally {
        installing = false;
      }
      if (isObject(tool) && typeof args[0] === 'string') adopt(tool as unknown as RegisteredTool, args[0]);
      return tool;
    };
  const s = server as unknown as Record<string, unknown>;
  for (const method of ['registerTool', 'tool'] as const) {
    define(server, method, registering(s[method] as Register, server));
  }
  const tasks = experimentalTasks(server);
  if (tasks) define(tasks, 'registerToolTask', registering(tasks.registerToolTask as Register, tasks));

  guardLowLevel(low, scope, {
    installing: () => installing,
    onCall: (handler) => recording(handler, received),
    onList: (handler) => (hideBlocked ? listing(pep, handler, session) : handler),
  });
  if (preexisting) {
    const wrapped = (name: string): boolean => [...names.values()].includes(name);
    const filterList = hideBlocked
      ? (result: unknown, listed: string | undefined) => visibleOnly(pep, result, listed ? { session: listed } : {})
      : undefined;
    onTransport(low, scope, (transport) =>
      guardTransport(transport, { pep, verifier, wrapped, filterList, session }, scope),
    );
  }
  guardedServers.add(server);
  return server;
}

/** Defines a method that cannot be replaced. */
function define(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: false, configurable: false });
}

/** `server.experimental.tasks` where the SDK has it (a public, experimental getter), else undefined. */
function experimentalTasks(server: McpServer): Record<string, unknown> | undefined {
  try {
    const tasks = (server as unknown as { experimental?: { tasks?: unknown } }).experimental?.tasks;
    return isObject(tasks) && typeof tasks.registerToolTask === 'function' ? tasks : undefined;
  } catch {
    return undefined;
  }
}

/**
 * How a registered tool is guarded: its `handler` becomes an accessor that always yields the guarded
 * form (whatever `update({ callback })` or an assignment puts there), and its `update` keeps the name
 * it is decided under (and refuses a look-alike rename).
 */
function adopter(
  run: ReturnType<typeof makeRunner>,
  names: Map<RegisteredTool, string>,
  refuseLookalike: (name: unknown, self: RegisteredTool | undefined) => void,
): (tool: RegisteredTool, name: string) => void {
  return (tool, name) => {
    names.set(tool, name);
    let guarded = guardedHandler(tool, tool.handler, run);
    Object.defineProperty(tool, 'handler', {
      get: () => guarded,
      set: (value: unknown) => {
        guarded = guardedHandler(tool, value, run);
      },
      enumerable: true,
      configurable: false,
    });
    const update = tool.update as (updates: unknown) => void;
    define(tool, 'update', (updates: unknown) => {
      const rename = isObject(updates) && 'name' in updates ? updates.name : undefined;
      if (typeof rename === 'string') refuseLookalike(rename, tool);
      update.call(tool, updates);
      if (typeof rename === 'string') names.set(tool, rename);
      else if (isObject(updates) && 'name' in updates && updates.name === null) names.delete(tool);
    });
  };
}

/** The guarded form of a tool's callback or task handler (per tool: one callback may serve several). */
function guardedHandler(tool: RegisteredTool, handler: unknown, run: ReturnType<typeof makeRunner>): unknown {
  if (typeof handler === 'function') {
    return (...callArgs: unknown[]) => run(tool, handler as Callback, callArgs);
  }
  if (isObject(handler) && typeof handler.createTask === 'function') {
    // A task tool: a refusal is thrown, so that the SDK answers it as the tool error with that text.
    const createTask = handler.createTask as Callback;
    const guardedCreate = async (...callArgs: unknown[]): Promise<unknown> => {
      const out = await run(tool, createTask.bind(handler), callArgs);
      if (isObject(out) && refusals.has(out)) throw new Error((out as ToolResult).content[0]?.text);
      return out;
    };
    return { ...handler, createTask: guardedCreate };
  }
  // Neither: the SDK cannot call it either (it answers a tool error); nothing to guard.
  return handler;
}

/** The SDK's tools/call handler, recording what each request carried before it runs. */
function recording(handler: Callback, received: WeakMap<object, Received>): Callback {
  return (request: unknown, extra: unknown) => {
    const params = isObject(request) && isObject(request.params) ? request.params : {};
    if (isObject(extra)) received.set(extra, { name: params.name, arguments: params.arguments, _meta: params._meta });
    return handler(request, extra);
  };
}

/**
 * A tools/list handler whose answer keeps only the tools `pep.visibleTools` shows for the request's
 * session (its `_meta` or the `session` option; else the Pep's: visibility reads no session state).
 */
function listing(pep: Pep, handler: Callback, sessionFn: SessionOfRequest | undefined): Callback {
  return async (request: unknown, extra: unknown) => {
    const result = (await handler(request, extra)) as unknown;
    const o: VisibleToolsOptions = {};
    const params = isObject(request) && isObject(request.params) ? request.params : {};
    const session = requestSession(sessionFn, 'tools/list', params, extra);
    if (session !== undefined) o.session = session;
    if (isObject(extra) && extra.signal instanceof AbortSignal) o.signal = extra.signal;
    return await visibleOnly(pep, result, o);
  };
}

/**
 * Runs `install` on the low-level server's transport: now if it is connected (the public `transport`
 * getter), and on each transport `connect` is given later, before it starts (so that no message the
 * transport had queued reaches the server unguarded).
 * @throws TypeError when the transport is not an MCP `Transport`
 */
function onTransport(low: LowLevel, scope: string, install: (t: TransportLike) => void): void {
  const check = (t: unknown): TransportLike => {
    if (!isObject(t) || typeof t.send !== 'function' || typeof t.start !== 'function') {
      throw new TypeError(`${scope}: the server's transport is not an MCP Transport`);
    }
    return t as unknown as TransportLike;
  };
  if (low.transport !== undefined) install(check(low.transport));
  const connect = low.connect;
  define(low, 'connect', (transport: unknown) => {
    const t = check(transport);
    install(t);
    return connect.call(low, t);
  });
}

/**
 * Through the low-level server's public API: only the SDK's own install (inside a registration) may set
 * the tools/call handler, which is wrapped as it is set, as the tools/list handler is; the
 * `fallbackRequestHandler` never answers tools/call or tools/list (code the guard cannot see).
 */
function guardLowLevel(
  low: LowLevel,
  scope: string,
  hooks: { installing(): boolean; onCall(h: Callback): Callback; onList(h: Callback): Callback },
): void {
  const set = low.setRequestHandler;
  define(low, 'setRequestHandler', (schema: unknown, handler: Callback) => {
    const method = methodOf(schema);
    if (method === 'tools/call') {
      if (!hooks.installing()) {
        throw new TypeError(
          `${scope}: a tools/call handler set on the low-level server would bypass the guard; register tools on the McpServer`,
        );
      }
      return set.call(low, schema, hooks.onCall(handler));
    }
    return set.call(low, schema, method === 'tools/list' ? hooks.onList(handler) : handler);
  });
  let fallback = low.fallbackRequestHandler;
  const refusing = new WeakMap<Callback, Callback>();
  Object.defineProperty(low, 'fallbackRequestHandler', {
    get() {
      if (typeof fallback !== 'function') return fallback;
      let wrapped = refusing.get(fallback);
      if (wrapped === undefined) {
        const inner = fallback;
        wrapped = (request: unknown, extra: unknown) => {
          const method = isObject(request) ? request.method : undefined;
          if (method === 'tools/call' || method === 'tools/list') {
            return Promise.reject(new McpProtocolError(JSONRPC_ERROR.methodNotFound, 'Method not found'));
          }
          return inner(request, extra);
        };
        refusing.set(fallback, wrapped);
      }
      return wrapped;
    },
    set(value: Callback | undefined) {
      fallback = value;
    },
    enumerable: true,
    configurable: false,
  });
}
