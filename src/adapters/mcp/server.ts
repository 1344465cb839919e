/**
 * `guardMcpServer`: every tool of an `McpServer` 1.x runs its callback only after an ALLOW or WARN, or
 * with `{ verifier }` only after the client's permit verified. Reaches the parts of `McpServer` read
 * from the SDK's `server/mcp.js` (the tool record, the `tools/call` handler, `validateToolInput`).
 * @internal
 */
import { isDeepStrictEqual } from 'node:util';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Pep } from '../../core/client.js';
import { PolicyEnforcementError } from '../../errors.js';
import { isPlainObject, withoutUndefinedMembers } from '../../internal/json.js';
import { optionError, refuseUnknownKeys } from '../../options/kit.js';
import type { CallOptions } from '../../options/pep.js';
import { normalizeToolName } from '../../permit/normalize.js';
import type { PermitVerifier } from '../../permit/verifier.js';
import {
  assertGuardable,
  assertPep,
  asToolResult,
  failedClosed,
  isObject,
  PERMIT_META_KEY,
  refusal,
  refusals,
  sessionOf,
  type ToolResult,
} from './common.js';

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
}

/** The parts of an `McpServer` 1.x this adapter reaches (read from the SDK's `server/mcp.js`). */
interface ServerInternals {
  _registeredTools: Record<string, RegisteredToolInternals>;
  server: { _requestHandlers: Map<string, unknown> };
  validateToolInput(tool: RegisteredToolInternals, args: unknown, name: string): Promise<unknown>;
  /** Installs the SDK's own `tools/list` and `tools/call` handlers (at the first tool); sets the flag below. */
  setToolRequestHandlers(): void;
  _toolHandlersInitialized: boolean;
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

const guardedServers = new WeakSet<object>();
/** Thrown inside the guarded execute when the args to run do not fit the tool's input schema. */
class SchemaRefusal extends Error {}

/**
 * Whether `parsed` (an input schema's output, its `undefined` members left out) is `sent` with at most
 * some members dropped (unknown ones stripped), at any depth: nothing added (a default) and no value
 * changed (a coercion, a transform).
 */
function onlyDropsMembers(sent: unknown, parsed: unknown): boolean {
  if (Array.isArray(sent) || Array.isArray(parsed)) {
    return (
      Array.isArray(sent) &&
      Array.isArray(parsed) &&
      sent.length === parsed.length &&
      sent.every((v, i) => onlyDropsMembers(v, parsed[i]))
    );
  }
  if (isObject(sent) && isObject(parsed)) {
    // A Map, a Date or a class instance shows no own keys to compare: never the args sent.
    if (!isPlainObject(sent) || !isPlainObject(parsed)) return false;
    for (const key of Object.keys(parsed)) {
      if (!Object.hasOwn(sent, key) || !onlyDropsMembers(sent[key], parsed[key])) return false;
    }
    return true;
  }
  return isDeepStrictEqual(sent, parsed);
}

/**
 * Guards every tool of an `McpServer` (`@modelcontextprotocol/sdk` 1.x): the tools registered before
 * this call and every tool registered after it (`registerTool`, the older `tool()` overloads, the
 * experimental task tools), including a callback swapped in later with `RegisteredTool.update({ callback })`
 * and a tool renamed with `update({ name })` (it is decided under its new name).
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
 * refused: the permit binds the arguments sent).
 *
 * @param pep - the client that decides (`createPep`); it must be able to guard tools (`permits`
 *   configured, or `permits: false`) unless `opts.verifier` is given. Session: the MCP session id
 *   (`extra.sessionId`) where the transport has one, else the Pep's.
 * @param server - an `McpServer` of `@modelcontextprotocol/sdk` 1.x, before or after `connect`
 * @param opts - `{ verifier? }` (see {@link GuardMcpServerOptions})
 * @returns the same server
 * @throws TypeError when `pep` is not a Pep or cannot guard tools, `server` is not an `McpServer` 1.x
 *   (its internals are not those this adapter reads), the server is already guarded, its low-level
 *   `server.server` has a `tools/call` handler of its own (set with `setRequestHandler` before any tool),
 *   two of its tools have names that normalize alike (`refundPayment`, `refund_payment`: a permit names
 *   the normalized tool, so it could not tell them apart), or `opts` has an unknown or bad key
 *   (`err.option` names it); later, `server.server.setRequestHandler` for `tools/call` (that handler would
 *   answer every call without the guard) and registering or renaming a tool to a look-alike name throw
 *   `TypeError` too
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
  if (
    !isObject(tools) ||
    !(handlers instanceof Map) ||
    typeof internals.validateToolInput !== 'function' ||
    typeof internals.setToolRequestHandlers !== 'function' ||
    typeof internals._toolHandlersInitialized !== 'boolean'
  ) {
    throw new TypeError(`${scope}: server must be an McpServer of @modelcontextprotocol/sdk 1.x`);
  }
  if (guardedServers.has(server)) throw new TypeError(`${scope}: this server is already guarded`);
  // A tools/call handler set on the low-level server (`server.server.setRequestHandler`) would answer
  // every call without the guard: one that is there before the SDK's own is refused now, any later one when set.
  if (handlers.has('tools/call') && !internals._toolHandlersInitialized) {
    throw new TypeError(
      `${scope}: the low-level server has a tools/call handler of its own, which the guard cannot see`,
    );
  }
  if (verifier === undefined) assertGuardable(pep, scope);

  /** The normalized form of a tool name, or undefined for one that normalizes to nothing (refused when called). */
  function normalized(key: unknown): string | undefined {
    if (typeof key !== 'string') return undefined;
    try {
      return normalizeToolName(key);
    } catch {
      return undefined;
    }
  }
  /**
   * Refuses a tool under `key` when another registered tool's name normalizes alike (`refundPayment`,
   * `refund_payment`): the PDP and a permit name tools in normalized form, so they could not tell the two apart.
   */
  function refuseLookalike(key: PropertyKey, value: unknown): void {
    const name = normalized(key);
    if (name === undefined) return;
    for (const [other, tool] of Object.entries(tools as Record<string, unknown>)) {
      if (other !== key && tool !== value && normalized(other) === name) {
        throw new TypeError(
          `${scope}: tools ${JSON.stringify(other.slice(0, 64))} and ${JSON.stringify(String(key).slice(0, 64))} have the same normalized name; a permit cannot tell them apart`,
        );
      }
    }
  }
  for (const key of Object.keys(tools)) refuseLookalike(key, tools[key]);

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
  // Before the first tool, tools/call is answered "method not found" here, never by the low-level
  // server's `fallbackRequestHandler` (code the guard cannot see).
  const mapGet = Map.prototype.get;
  const noTools: Callback = () => Promise.reject(new McpError(ErrorCode.MethodNotFound, 'Method not found'));
  Object.defineProperty(handlers, 'get', {
    value(method: unknown) {
      const handler: unknown = mapGet.call(handlers, method);
      if (method !== 'tools/call') return handler;
      return typeof handler === 'function' ? recording(handler as Callback) : noTools;
    },
    writable: false,
    configurable: false,
  });

  // Only the SDK's own install may set the tools/call handler from now on.
  let installing = false;
  const mapSet = Map.prototype.set;
  Object.defineProperty(handlers, 'set', {
    value(method: unknown, handler: unknown) {
      if (method === 'tools/call' && !installing) {
        throw new TypeError(
          `${scope}: a tools/call handler set on the low-level server would bypass the guard; register tools on the McpServer`,
        );
      }
      return mapSet.call(handlers, method, handler);
    },
    writable: false,
    configurable: false,
  });
  const install = internals.setToolRequestHandlers;
  Object.defineProperty(server, 'setToolRequestHandlers', {
    value() {
      installing = true;
      try {
        install.call(server);
      } finally {
        installing = false;
      }
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
        // The permit binds the arguments as received; the callback gets them as the schema parses them.
        // A schema may drop unknown members, never add one (a default the client did not send) or change
        // a value (a coercion, a transform): the callback would run args the permit does not bind.
        if (hasSchema && !onlyDropsMembers(wire, withoutUndefinedMembers(parsed))) {
          return failedClosed(name, 'permit_invalid', 'the input schema changes the arguments the permit binds');
        }
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
      // The PDP decides on the args the callback would get: as the input schema parsed them (its
      // coercions and defaults applied, its `undefined` members left out as JSON does), not as sent.
      // A schema that makes something other than an object of the arguments: nothing a permit can bind.
      if (hasSchema && got !== undefined && !(isObject(parsed) && isPlainObject(parsed))) {
        return failedClosed(name, 'invalid_request', 'the input schema does not make an object of the arguments');
      }
      const decided = hasSchema && isObject(parsed) ? withoutUndefinedMembers(parsed) : wire;
      const guarded = pep.guardTool(name, async (effective) => {
        // The args decided run as the SDK parsed them. Others (WARN's transformedArgs, an interceptor's
        // replacement) go through the tool's input schema as the SDK would put them; args that do not
        // fit, or that the schema would change (the callback would run args the permit does not bind),
        // are refused, not run.
        let args: unknown;
        if (hasSchema) {
          if (isDeepStrictEqual(effective, decided)) args = parsed;
          else {
            try {
              args = await internals.validateToolInput(tool, effective, name);
            } catch {
              throw new SchemaRefusal();
            }
            if (!isDeepStrictEqual(withoutUndefinedMembers(args), effective)) throw new SchemaRefusal();
          }
        }
        return invoke(args);
      });
      const out = await guarded(decided as Record<string, unknown>, callOpts);
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
      refuseLookalike(key, value);
      guardTool(value);
      return Reflect.set(target, key, value);
    },
    defineProperty(target, key, descriptor) {
      if (descriptor.get !== undefined || descriptor.set !== undefined) return false;
      refuseLookalike(key, descriptor.value);
      guardTool(descriptor.value);
      return Reflect.defineProperty(target, key, descriptor);
    },
  });
  Object.defineProperty(server, '_registeredTools', { value: proxy, writable: false, configurable: false });
  guardedServers.add(server);
  return server;
}
