/**
 * `agent-pep/mcp`: the Model Context Protocol adapter for `@modelcontextprotocol/sdk` 1.x
 * (CONTRACT.md section 8). The only import of the MCP SDK.
 *
 * - {@link guardMcpServer}: every tool of an `McpServer` runs its callback only after an ALLOW or WARN
 *   (`pep.guardTool`), or, with `{ verifier }`, only after the permit the client sent in
 *   `params._meta['agent-pep/permit']` verified (the PDP is not asked again).
 * - {@link guardMcpClient}: every `tools/call` a `Client` sends is authorized before it leaves, carries
 *   its permit in `_meta`, and its result is checked at `context_egress` before the caller sees it.
 *
 * A blocked or held call answers `{ isError: true, content: [{ type: 'text', text: toolMessage }] }`, the
 * tool-error form MCP clients show to the model. MCP 1.x has no human-approval flow for `tools/call`, so
 * ESCALATE is a hold the model is told about (`ERROR: Tool '<name>' is held for human review: <reason>`).
 * @packageDocumentation
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Pep } from '../client.js';
import { type FailClosedCode, synthesizeBlock } from '../decision.js';
import { PolicyEnforcementError, toolMessage } from '../errors.js';
import { optionError, refuseUnknownKeys } from '../internal/option-error.js';
import type { CallOptions } from '../options.js';
import type { PermitVerifier } from '../permit/verify.js';

/**
 * The `params._meta` key a guarded client puts the permit under, and a guarded server reads it from.
 * @remarks A server that does not use {@link guardMcpServer} can read it from `extra._meta` and verify it
 * with `createPermitVerifier` against the tool name and the arguments it received, before acting.
 * @example
 * ```ts
 * const permit = extra._meta?.[PERMIT_META_KEY];
 * if (typeof permit !== 'string') return { isError: true, content: [{ type: 'text', text: 'no permit' }] };
 * await verifier.verify(permit, { tool: 'refund_payment', args: receivedArgs });
 * ```
 */
export const PERMIT_META_KEY = 'agent-pep/permit';

/** Options of {@link guardMcpServer}. */
export interface GuardMcpServerOptions {
  /**
   * Verify the permit the client's PEP sent in `params._meta['agent-pep/permit']` (with every check of
   * CONTRACT.md section 4, the replay claim included) instead of asking the PDP. A call without a
   * valid permit is refused; the PDP is never asked. Make it with `createPermitVerifier({ keys, issuer,
   * audience })`, `audience` being the name the PDP puts in `aud` for this server.
   * @defaultValue undefined (each call is decided by `pep.guardTool`, which asks the PDP)
   */
  verifier?: PermitVerifier | undefined;
}

/** Options of {@link guardMcpClient}. */
export interface GuardMcpClientOptions {
  /**
   * Check each tool result at `context_egress` (with the tool's name) before the caller sees it:
   * ALLOW returns it as it is, WARN replaces its text with the PDP's `transformedContent`, BLOCK or
   * ESCALATE withholds it (an `isError` result with the `toolMessage`). @defaultValue true
   */
  checkResult?: boolean | undefined;
}

/** An MCP tool result as this adapter builds it (the SDK's `CallToolResult`, structurally). */
interface ToolResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  isError?: boolean;
}

/** The parts of an `McpServer` 1.x this adapter reaches (read from the SDK's `server/mcp.js`). */
interface ServerInternals {
  _registeredTools: Record<string, RegisteredToolInternals>;
  server: { _requestHandlers: Map<string, unknown> };
  validateToolInput(tool: RegisteredToolInternals, args: unknown, name: string): Promise<unknown>;
}

/** A registered tool of `McpServer` 1.x: `handler` is the callback (or a task handler with `createTask`). */
interface RegisteredToolInternals {
  handler: unknown;
  inputSchema?: unknown;
}

/** What a `tools/call` request carried, as the server received it. */
interface Received {
  name: unknown;
  arguments: unknown;
  _meta: unknown;
}

type Callback = (...args: unknown[]) => unknown;

const SERVER_OPTIONS: ReadonlySet<string> = new Set(['verifier']);
const CLIENT_OPTIONS: ReadonlySet<string> = new Set(['checkResult']);

const guardedServers = new WeakSet<object>();
/** Thrown inside the guarded execute when the args to run do not fit the tool's input schema. */
class SchemaRefusal extends Error {}
const guardedClients = new WeakSet<object>();

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

/** The refusals this adapter made (not a tool's own error results). */
const refusals = new WeakSet<object>();

/** The tool-error result MCP clients show to the model. */
function refusal(text: string): ToolResult {
  const result: ToolResult = { content: [{ type: 'text', text }], isError: true };
  refusals.add(result);
  return result;
}

/** A refusal for a call the adapter itself failed closed on (no PDP decision to show). */
function failedClosed(tool: string, code: FailClosedCode, message: string): ToolResult {
  return refusal(toolMessage(synthesizeBlock('action', globalThis.crypto.randomUUID(), code, message, 0), tool));
}

/** A non-empty session id, else undefined. */
function sessionOf(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** An interceptor's substitute as a tool result: a result-shaped object as is, anything else as text. */
function asToolResult(value: unknown): unknown {
  if (isObject(value) && Array.isArray(value.content)) return value;
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  return { content: [{ type: 'text', text }] };
}

/** `guardTool` throws a TypeError at creation when `permits` is neither configured nor explicitly off. */
function assertGuardable(pep: Pep, scope: string): void {
  try {
    pep.guardTool('agent_pep_mcp', () => undefined);
  } catch (cause) {
    throw new TypeError(`${scope}: the Pep cannot guard tools (configure \`permits\`, or \`permits: false\`)`, {
      cause,
    });
  }
}

function assertPep(pep: unknown, scope: string): asserts pep is Pep {
  if (!isObject(pep) || typeof pep.guardTool !== 'function' || typeof pep.authorizeAction !== 'function') {
    throw new TypeError(`${scope}: pep must be a Pep made by createPep`);
  }
}

/**
 * Guards every tool of an `McpServer` (`@modelcontextprotocol/sdk` 1.x): the tools registered before
 * this call and every tool registered after it (`registerTool`, the older `tool()` overloads, the
 * experimental task tools), including a callback swapped in later with `RegisteredTool.update({ callback })`
 * and a tool renamed with `update({ name })` (it is decided under its new name).
 *
 * Without a verifier, each `tools/call` goes through `pep.guardTool` with the tool name as registered
 * and the arguments as received: the PDP decides, the permit is verified, interceptors apply (a
 * `substitute` answers without running the tool, `after` interceptors see the result), and the
 * callback runs with the PDP's `transformedArgs` on WARN (parsed by the tool's input schema first).
 * With `{ verifier }`, the server does not ask the PDP: it verifies the permit the client's PEP put in
 * `params._meta['agent-pep/permit']` against the tool name as registered and the arguments as
 * received, claims its `jti` (so a replayed request is refused), and only then runs the callback.
 *
 * @param pep - the client that decides (`createPep`); it must be able to guard tools (`permits`
 *   configured, or `permits: false`) unless `opts.verifier` is given. Session: the MCP session id
 *   (`extra.sessionId`) where the transport has one, else the Pep's.
 * @param server - an `McpServer` of `@modelcontextprotocol/sdk` 1.x, before or after `connect`
 * @param opts - `{ verifier? }` (see {@link GuardMcpServerOptions})
 * @returns the same server
 * @throws TypeError when `pep` is not a Pep or cannot guard tools, `server` is not an `McpServer` 1.x
 *   (its internals are not those this adapter reads), the server is already guarded, or `opts` has an
 *   unknown or bad key (`err.option` names it)
 * @remarks Fails closed: a blocked or held call, a PDP that is down or slow, a permit that is missing
 * or fails any check, and any error of the adapter itself answer `{ isError: true, content: [{ type:
 * 'text', text: toolMessage }] }` and the callback does not run. ESCALATE is a hold the model is told
 * about: MCP 1.x has no human-approval flow for `tools/call`. An error thrown by the callback itself is
 * the SDK's usual tool error. With a verifier, refusals are not sent to the PDP, so its evidence does
 * not show them; the Pep's interceptors do not run on the server (the client's did).
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
export function guardMcpServer(pep: Pep, server: McpServer, opts?: GuardMcpServerOptions): McpServer {
  const scope = 'guardMcpServer';
  assertPep(pep, scope);
  const rawOpts: unknown = opts;
  if (rawOpts !== undefined && !isObject(rawOpts)) optionError(scope, 'opts', 'expected an object');
  if (rawOpts !== undefined) refuseUnknownKeys(scope, rawOpts, SERVER_OPTIONS);
  const verifier: PermitVerifier | undefined = opts?.verifier;
  const given: unknown = verifier;
  if (given !== undefined && !(isObject(given) && typeof given.verify === 'function')) {
    optionError(scope, 'verifier', 'expected a PermitVerifier (createPermitVerifier)');
  }
  const internals = server as unknown as ServerInternals;
  const tools = isObject(server) ? internals._registeredTools : undefined;
  const handlers = isObject(server) && isObject(internals.server) ? internals.server._requestHandlers : undefined;
  if (!isObject(tools) || !(handlers instanceof Map) || typeof internals.validateToolInput !== 'function') {
    throw new TypeError(`${scope}: server must be an McpServer of @modelcontextprotocol/sdk 1.x`);
  }
  if (guardedServers.has(server)) throw new TypeError(`${scope}: this server is already guarded`);
  if (verifier === undefined) assertGuardable(pep, scope);

  /** What each tools/call carried, by the `extra` object the SDK hands to the tool callback. */
  const received = new WeakMap<object, Received>();
  const recorders = new WeakMap<object, Callback>();
  /** Records the request as received, then runs the SDK's own tools/call handler. */
  function recording(handler: Callback): Callback {
    let wrapped = recorders.get(handler);
    if (wrapped === undefined) {
      wrapped = (request: unknown, extra: unknown) => {
        const params = isObject(request) && isObject(request.params) ? request.params : {};
        if (isObject(extra))
          received.set(extra, { name: params.name, arguments: params.arguments, _meta: params._meta });
        return handler(request, extra);
      };
      recorders.set(handler, wrapped);
    }
    return wrapped;
  }
  // The SDK installs its tools/call handler lazily (at the first tool); reading it through `get` covers both.
  const mapGet = Map.prototype.get;
  Object.defineProperty(handlers, 'get', {
    value(method: unknown) {
      const handler: unknown = mapGet.call(handlers, method);
      return method === 'tools/call' && typeof handler === 'function' ? recording(handler as Callback) : handler;
    },
    writable: false,
    configurable: false,
  });

  /** The name `tool` is registered under now (it can be renamed), or undefined once removed. */
  function nameOf(tool: RegisteredToolInternals): string | undefined {
    for (const key of Object.keys(tools as object)) if ((tools as Record<string, unknown>)[key] === tool) return key;
    return undefined;
  }

  /** One guarded call of `callback` (the tool's callback or a task handler's `createTask`). */
  async function run(tool: RegisteredToolInternals, callback: Callback, callArgs: unknown[]): Promise<unknown> {
    const hasSchema = Boolean(tool.inputSchema);
    // The SDK calls `callback(parsedArgs, extra)` with an input schema, `callback(extra)` without one.
    const parsed = hasSchema ? callArgs[0] : undefined;
    const extra = hasSchema ? callArgs[1] : callArgs[0];
    const name = nameOf(tool);
    if (name === undefined) return failedClosed('unknown', 'invalid_request', 'the tool is no longer registered');
    let bodyRan = false;
    try {
      const got = isObject(extra) ? received.get(extra) : undefined;
      if (got !== undefined && got.name !== name) {
        return failedClosed(name, 'invalid_request', 'the request names another tool');
      }
      // The arguments as received (what the client's PDP decided on); a direct call: what the callback got.
      const wire = got !== undefined ? (got.arguments ?? {}) : (parsed ?? {});
      const invoke = (args: unknown): unknown => {
        bodyRan = true;
        return hasSchema ? callback(args, extra) : callback(extra);
      };

      if (verifier !== undefined) {
        const meta = got !== undefined ? got._meta : isObject(extra) ? extra._meta : undefined;
        const permit = isObject(meta) ? meta[PERMIT_META_KEY] : undefined;
        if (typeof permit !== 'string' || permit === '') {
          return failedClosed(name, 'permit_invalid', 'no permit in params._meta');
        }
        if (!isObject(wire)) return failedClosed(name, 'permit_invalid', 'arguments are not an object');
        try {
          await verifier.verify(permit, { tool: name, args: wire });
        } catch (err) {
          const code = isObject(err) && typeof err.code === 'string' ? err.code : 'error';
          return failedClosed(name, 'permit_invalid', `permit failed verification (${code})`);
        }
        return await invoke(parsed);
      }

      const callOpts: CallOptions = {};
      const session = isObject(extra) ? sessionOf(extra.sessionId) : undefined;
      if (session !== undefined) callOpts.session = session;
      if (isObject(extra) && extra.signal instanceof AbortSignal) callOpts.signal = extra.signal;
      const guarded = pep.guardTool(name, async (effective) => {
        // The args that will run (WARN's transformedArgs, an interceptor's replacement) go through the
        // tool's input schema as the SDK would put them; args that do not fit are refused, not run.
        let args: unknown;
        if (hasSchema) {
          try {
            args = await internals.validateToolInput(tool, effective, name);
          } catch {
            throw new SchemaRefusal();
          }
        }
        return invoke(args);
      });
      const out = await guarded(wire as Record<string, unknown>, callOpts);
      return bodyRan ? out : asToolResult(out);
    } catch (err) {
      if (err instanceof PolicyEnforcementError) return refusal(err.toolMessage);
      if (err instanceof SchemaRefusal) {
        return failedClosed(name, 'invalid_request', 'the arguments to run do not fit the input schema');
      }
      if (bodyRan) throw err;
      return failedClosed(name, 'invalid_request', 'the adapter failed');
    }
  }

  /** The guarded form of a tool's callback or task handler (per tool: one callback may serve several). */
  function guardedHandler(tool: RegisteredToolInternals, handler: unknown): unknown {
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

  const guardedTools = new WeakSet<object>();
  /** Makes `tool.handler` an accessor that always yields the guarded form, whatever is assigned to it. */
  function guardTool(tool: unknown): void {
    if (!isObject(tool) || guardedTools.has(tool)) return;
    const entry = tool as unknown as RegisteredToolInternals;
    let guarded = guardedHandler(entry, entry.handler);
    Object.defineProperty(tool, 'handler', {
      get: () => guarded,
      set: (value: unknown) => {
        guarded = guardedHandler(entry, value);
      },
      enumerable: true,
      configurable: false,
    });
    guardedTools.add(tool);
  }

  for (const tool of Object.values(tools)) guardTool(tool);
  // Every way a tool becomes callable puts it in this record: registerTool, tool(), task tools, renames.
  const proxy = new Proxy(tools, {
    set(target, key, value) {
      guardTool(value);
      return Reflect.set(target, key, value);
    },
    defineProperty(target, key, descriptor) {
      if (descriptor.get !== undefined || descriptor.set !== undefined) return false;
      guardTool(descriptor.value);
      return Reflect.defineProperty(target, key, descriptor);
    },
  });
  Object.defineProperty(server, '_registeredTools', { value: proxy, writable: false, configurable: false });
  guardedServers.add(server);
  return server;
}

/** The text of a tool result the PDP checks: text items, embedded resource texts, structured content. */
function resultText(result: unknown): string {
  if (!isObject(result) || !Array.isArray(result.content)) return JSON.stringify(result) ?? '';
  const parts: string[] = [];
  for (const item of result.content as unknown[]) {
    if (!isObject(item)) continue;
    if (item.type === 'text' && typeof item.text === 'string') parts.push(item.text);
    else if (item.type === 'resource' && isObject(item.resource) && typeof item.resource.text === 'string') {
      parts.push(item.resource.text);
    }
  }
  if (result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent) ?? '');
  return parts.join('\n');
}

/** A tool result whose text is the PDP's: one text item, the other items kept, structured content dropped. */
function withText(result: unknown, text: string): unknown {
  const rest = isObject(result) && Array.isArray(result.content) ? (result.content as unknown[]) : [];
  const kept = rest.filter(
    (item) =>
      isObject(item) &&
      item.type !== 'text' &&
      !(item.type === 'resource' && isObject(item.resource) && typeof item.resource.text === 'string'),
  );
  const out: Record<string, unknown> = isObject(result) && Array.isArray(result.content) ? { ...result } : {};
  delete out.structuredContent;
  delete out.toolResult;
  out.content = [{ type: 'text', text }, ...kept];
  return out;
}

type Send = (params: Record<string, unknown>) => Promise<unknown>;

/**
 * Guards the `tools/call` requests of an MCP `Client` (`@modelcontextprotocol/sdk` 1.x): `callTool` (and
 * any other `tools/call` sent through `client.request`) is authorized by the PDP before the request
 * leaves, and sent only after an ALLOW or WARN whose permit verified (`pep.guardTool`), with the
 * PDP's `transformedArgs` on WARN and the permit in `params._meta['agent-pep/permit']`, where a server
 * guarded with `{ verifier }` checks it. The result is then checked at `context_egress` with the
 * tool's name.
 *
 * @param pep - the client that decides (`createPep`), with `permits` configured (or `permits: false`,
 *   which sends no permit). Session: the MCP session id (`client.transport.sessionId`) where the
 *   transport has one, else the Pep's.
 * @param client - a `Client` of `@modelcontextprotocol/sdk` 1.x, before or after `connect`
 * @param opts - `{ checkResult? }` (see {@link GuardMcpClientOptions})
 * @returns the same client
 * @throws TypeError when `pep` is not a Pep or cannot guard tools, `client` is not an MCP `Client`, the
 *   client is already guarded, or `opts` has an unknown or bad key (`err.option` names it)
 * @remarks Fails closed: a blocked or held call is never sent, and `callTool` resolves with `{ isError:
 * true, content: [{ type: 'text', text: toolMessage }] }`, the form the host shows to the model; so does
 * a result the PDP blocks at `context_egress` (withheld) and any error of the adapter itself. ESCALATE
 * is a hold the model is told about (MCP 1.x has no approval flow for `tools/call`). On a WARN of the
 * result, its text items are replaced by the PDP's text and `structuredContent` is dropped (it would
 * carry what the PDP redacted); images and other non-text items are not checked. Task-augmented
 * `tools/call` requests (experimental) are refused with an `McpError`, since their results would
 * escape the check. Errors of the transport or the server are thrown as the SDK throws them.
 * @example
 * ```ts
 * const client = new Client({ name: 'support-agent', version: '1.0.0' });
 * guardMcpClient(pep, client);
 * await client.connect(transport);
 * const result = await client.callTool({ name: 'refund_payment', arguments: { orderId: 'ord_1842', amount: 129 } });
 * // result.isError with the toolMessage when the PDP blocked or held the call: it was never sent.
 * ```
 */
export function guardMcpClient(pep: Pep, client: Client, opts?: GuardMcpClientOptions): Client {
  const scope = 'guardMcpClient';
  assertPep(pep, scope);
  const rawOpts: unknown = opts;
  if (rawOpts !== undefined && !isObject(rawOpts)) optionError(scope, 'opts', 'expected an object');
  if (rawOpts !== undefined) refuseUnknownKeys(scope, rawOpts, CLIENT_OPTIONS);
  const checkResult: unknown = opts?.checkResult ?? true;
  if (typeof checkResult !== 'boolean') optionError(scope, 'checkResult', 'expected a boolean');
  const target = client as unknown as Record<string, unknown>;
  if (!isObject(client) || typeof target.callTool !== 'function' || typeof target.request !== 'function') {
    throw new TypeError(`${scope}: client must be a Client of @modelcontextprotocol/sdk 1.x`);
  }
  if (guardedClients.has(client)) throw new TypeError(`${scope}: this client is already guarded`);
  assertGuardable(pep, scope);

  const callTool = target.callTool as (...a: unknown[]) => Promise<unknown>;
  const request = target.request as (...a: unknown[]) => Promise<unknown>;
  /** The params objects of calls already authorized, which `request` sends as they are. */
  const authorized = new WeakSet<object>();

  /** One guarded `tools/call`: decide, send with the permit, check the result. */
  async function call(params: unknown, options: unknown, send: Send): Promise<unknown> {
    const name = isObject(params) && typeof params.name === 'string' ? params.name : undefined;
    if (name === undefined || !isObject(params)) {
      return failedClosed('unknown', 'invalid_request', 'tools/call params without a tool name');
    }
    if (isObject(params.task) || (isObject(options) && isObject(options.task))) {
      throw new McpError(ErrorCode.InvalidRequest, `agent-pep/mcp: task-augmented tools/call is not supported`);
    }
    let sent = false;
    let raw: unknown;
    try {
      const execute = async (effective: Record<string, unknown>, ctx: { permitId: string | undefined }) => {
        const out: Record<string, unknown> = { ...params, arguments: effective };
        if (ctx.permitId !== undefined) {
          out._meta = { ...(isObject(params._meta) ? params._meta : {}), [PERMIT_META_KEY]: ctx.permitId };
        }
        sent = true;
        raw = await send(out);
        return raw;
      };
      const guarded = checkResult
        ? pep.guardTool(name, execute, { checkResult: resultText })
        : pep.guardTool(name, execute);
      const callOpts: CallOptions = {};
      const session = sessionOf((target.transport as { sessionId?: unknown } | undefined)?.sessionId);
      if (session !== undefined) callOpts.session = session;
      if (isObject(options) && options.signal instanceof AbortSignal) callOpts.signal = options.signal;
      const args = params.arguments ?? {};
      const out = await guarded(args as Record<string, unknown>, callOpts);
      if (!sent) return asToolResult(out);
      // A string where the server answered an object: WARN's transformedContent for the result.
      return typeof out === 'string' && typeof raw !== 'string' ? withText(raw, out) : out;
    } catch (err) {
      if (err instanceof PolicyEnforcementError) return refusal(err.toolMessage);
      if (sent) throw err;
      return failedClosed(name, 'invalid_request', 'the adapter failed');
    }
  }

  Object.defineProperty(client, 'callTool', {
    value: (params: unknown, resultSchema?: unknown, options?: unknown) =>
      call(params, options, (p) => {
        authorized.add(p);
        return callTool.call(client, p, resultSchema, options);
      }),
    writable: false,
    configurable: false,
  });
  Object.defineProperty(client, 'request', {
    value: (req: unknown, resultSchema?: unknown, options?: unknown) => {
      if (!isObject(req) || req.method !== 'tools/call') return request.call(client, req, resultSchema, options);
      if (isObject(req.params) && authorized.has(req.params)) {
        authorized.delete(req.params);
        return request.call(client, req, resultSchema, options);
      }
      return call(req.params, options, (p) => request.call(client, { ...req, params: p }, resultSchema, options));
    },
    writable: false,
    configurable: false,
  });
  guardedClients.add(client);
  return client;
}
