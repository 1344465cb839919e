/**
 * `guardMcpClient(pep, client)`, the route that still wraps a `Client`'s methods (`callTool`, `request`,
 * `setNotificationHandler`, `pepPins`): every `tools/call` an MCP `Client` (1.x or 2.x) sends is decided
 * before it leaves, carries its permit in `_meta`, and its result is checked at `context_egress`. The
 * transport route (`client-transport.ts`) does the same on the public `Transport` seam and patches nothing:
 * prefer it. Internal to `agent-pep/mcp`.
 * @internal
 */
import { PolicyEnforcementError } from '../../errors.js';
import { optionError } from '../../options/kit.js';
import type { ActionCallOptions } from '../../options/pep.js';
import type { Pep } from '../../pep.js';
import { callOptions } from '../kit.js';
import { argsByListedSchema, readParams, withPermit } from './client-call.js';
import type { ClientOptions } from './client-options.js';
import {
  assertGuardable,
  asToolResult,
  failedClosed,
  isObject,
  JSONRPC_ERROR,
  McpProtocolError,
  refusal,
} from './common.js';
import type { McpPinSet } from './pins.js';
import { resultText, withText } from './result.js';
import { sdkV1 } from './sdk-v1.js';
import { makeToolSurface } from './surface.js';

/**
 * What `guardMcpClient` takes on this route: a `Client` of `@modelcontextprotocol/sdk` 1.x or of
 * `@modelcontextprotocol/client` 2.x (structurally, so that neither package's types are needed).
 */
export interface McpClientLike {
  callTool(...args: never[]): Promise<unknown>;
  request(...args: never[]): Promise<unknown>;
}

/** A client guarded by `guardMcpClient(pep, client)`. */
export interface GuardedMcpClient {
  /**
   * The pin set, plain JSON: `{ version: 1, server: { name, version }, tools: { <name>: <sha256> } }`
   * (docs/visibility.md); `undefined` without `pin`.
   */
  pepPins(): McpPinSet | undefined;
}

/** Whether `v` is a `Client` (it has `callTool` and `request`), the object this route guards. */
export function isMcpClient(v: unknown): v is McpClientLike {
  return isObject(v) && typeof v.callTool === 'function' && typeof v.request === 'function';
}

const guardedClients = new WeakSet<object>();

type Send = (params: Record<string, unknown>) => Promise<unknown>;

/**
 * `guardMcpClient(pep, client, opts)` on a `Client` (see `guardMcpClient` in `client.ts`): wraps its
 * `callTool`, `request` and (1.x, with `pin`) `setNotificationHandler`, and adds `pepPins`.
 * @throws TypeError when the client is already guarded, or `pin` is given for a 2.x `Client`
 */
export function guardClientMethods<C extends McpClientLike>(
  pep: Pep,
  client: C,
  read: ClientOptions,
  scope: string,
): C & GuardedMcpClient {
  const { checkResult, session, ...surfaceOpts } = read;
  const target = client as unknown as Record<string, unknown>;
  if (guardedClients.has(client)) throw new TypeError(`${scope}: this client is already guarded`);
  const stack = stackOf(target);
  if (stack === 'v2' && surfaceOpts.pin !== undefined) {
    optionError(
      scope,
      'pin',
      'pinning a 2.x Client needs the transport route: guardMcpClient(pep, transport, { pin })',
    );
  }
  assertGuardable(pep, scope);
  const callTool = target.callTool as SdkMethod;
  const request = target.request as SdkMethod;
  const readPage = (params: { cursor: string } | undefined, options: unknown): Promise<unknown> => {
    const req = { method: 'tools/list', params };
    // v1 takes `(request, resultSchema?, options?)`, v2 `(request, options?)` (the result schema is its own).
    return stack === 'v1'
      ? request.call(client, req, sdkV1().ListToolsResultSchema, options)
      : request.call(client, req, options);
  };
  const surface = makeToolSurface({
    scope,
    pep,
    readPage,
    server: () => serverVersionOf(target),
    session,
    ...surfaceOpts,
  });
  if (surfaceOpts.pin !== undefined) watchListChanged(target, stack, () => surface.listChanged());
  const guard: ClientGuard = { pep, target, checkResult, session, surface, authorized: new WeakSet<object>() };
  fix(
    client,
    'callTool',
    stack === 'v1' ? guardedCallToolV1(guard, client, callTool) : guardedCallToolV2(guard, client, callTool),
  );
  fix(client, 'request', guardedRequest(guard, client, request, stack));
  fix(client, 'pepPins', () => guard.surface.pins());
  guardedClients.add(client);
  return client as unknown as C & GuardedMcpClient;
}

/** The server's `{ name, version }` as the client read it at `initialize`, else undefined. */
function serverVersionOf(client: Record<string, unknown>): { name?: unknown; version?: unknown } | undefined {
  const get = client.getServerVersion;
  return typeof get === 'function'
    ? (get as () => { name?: unknown; version?: unknown } | undefined).call(client)
    : undefined;
}

/** A method of the SDK's `Client`, as the guard calls it. */
type SdkMethod = (...a: unknown[]) => Promise<unknown>;

/**
 * Which SDK made the client: `@modelcontextprotocol/client` 2.x has `discover` (protocol 2026-07-28's
 * `server/discover`), which no 1.x `Client` has.
 */
function stackOf(client: Record<string, unknown>): 'v1' | 'v2' {
  return typeof client.discover === 'function' ? 'v2' : 'v1';
}

/** v1's `callTool(params, resultSchema?, options?)`, guarded. */
function guardedCallToolV1(guard: ClientGuard, client: object, callTool: SdkMethod) {
  return (params: unknown, resultSchema?: unknown, options?: unknown) =>
    guardedCall(guard, params, options, (p) => {
      guard.authorized.add(p);
      return callTool.call(client, p, resultSchema, options);
    });
}

/** v2's `callTool(params, options?)`, guarded. */
function guardedCallToolV2(guard: ClientGuard, client: object, callTool: SdkMethod) {
  return (params: unknown, options?: unknown) =>
    guardedCall(guard, params, options, (p) => {
      guard.authorized.add(p);
      return callTool.call(client, p, options);
    });
}

/** Whether a v2 `request`'s second argument is a result schema (a Standard Schema), not the options. */
function isResultSchema(v: unknown): boolean {
  return isObject(v) && '~standard' in v;
}

/** What one guarded client works with. */
interface ClientGuard {
  pep: Pep;
  /** The client, as an object. */
  target: Record<string, unknown>;
  checkResult: boolean;
  /** The session given to the guard, else undefined (the Pep's own). */
  session: string | undefined;
  surface: ReturnType<typeof makeToolSurface>;
  /** The params objects of calls already authorized, which `request` sends as they are. */
  authorized: WeakSet<object>;
}

/** Puts `value` on the client as a member that cannot be written or redefined. */
function fix(client: object, key: string, value: unknown): void {
  Object.defineProperty(client, key, { value, writable: false, configurable: false });
}

/**
 * The client's `request`, guarded: `tools/list` through the tool surface (hidden and pinned tools),
 * `tools/call` decided (unless it is a `callTool` already authorized), anything else as it is.
 */
function guardedRequest(guard: ClientGuard, client: object, request: SdkMethod, stack: 'v1' | 'v2') {
  return (given: unknown, second?: unknown, third?: unknown) => {
    // v1: (request, resultSchema?, options?); v2: (request, options?) or (request, resultSchema, options?).
    const withSchema = stack === 'v1' || isResultSchema(second);
    const resultSchema = withSchema ? second : undefined;
    const options = withSchema ? third : second;
    const forward = (r: unknown): Promise<unknown> =>
      withSchema ? request.call(client, r, second, third) : request.call(client, r, second);
    // Read once, so that a getter cannot show another method to this check than to the SDK.
    let req: unknown = given;
    if (isObject(given)) {
      try {
        req = { ...given };
      } catch {
        return Promise.resolve(failedClosed(guard.pep, 'unknown', 'invalid_request', 'the request could not be read'));
      }
    }
    if (isObject(req) && req.method === 'tools/list') {
      const continuing = isObject(req.params) && typeof req.params.cursor === 'string';
      const listReq = req;
      const sent = withSchema
        ? request.call(client, listReq, resultSchema, options)
        : request.call(client, listReq, second);
      return sent.then((result) => guard.surface.filterList(result, continuing, options));
    }
    if (!isObject(req) || req.method !== 'tools/call') return forward(req);
    if (isObject(req.params) && guard.authorized.has(req.params)) {
      guard.authorized.delete(req.params);
      return forward(req);
    }
    return guardedCall(guard, req.params, options, (p) => forward({ ...req, params: p }));
  };
}

/** One guarded `tools/call`: checked, decided, sent with the permit, its result checked. */
async function guardedCall(guard: ClientGuard, given: unknown, options: unknown, send: Send): Promise<unknown> {
  const params = readParams(given);
  const name = typeof params.name === 'string' ? params.name : undefined;
  if (name === undefined) {
    return failedClosed(guard.pep, 'unknown', 'invalid_request', 'tools/call params without a tool name');
  }
  if (isObject(params.task) || (isObject(options) && isObject(options.task))) {
    throw new McpProtocolError(
      JSONRPC_ERROR.invalidRequest,
      `agent-pep/mcp: task-augmented tools/call is not supported`,
    );
  }
  const changed = await guard.surface.refuseCall(name, options);
  if (changed !== undefined) return changed;
  // The args the server's tool will run: its listed schema's defaults filled in, a value its parser
  // would coerce refused (docs/adapters.md "Schemas"), so that the PDP decides on what runs.
  const planned = await argsByListedSchema(guard.pep, guard.surface, name, params.arguments, options);
  if (planned.kind === 'refused') return planned.result;
  params.arguments = planned.args;
  const state: SendState = { sent: false, checked: undefined };
  try {
    const out = await decideAndSend(guard, name, params, options, send, state);
    if (!state.sent) return asToolResult(out);
    if (typeof out !== 'string') return out;
    // A WARN's transformedContent in place of the result checked: its items that show no text stay.
    // Else the string is an `after` interceptor's replacement: the whole result, nothing of the server's.
    const checked = state.checked;
    return out !== checked && typeof checked !== 'string' && checked !== undefined
      ? withText(checked, out)
      : asToolResult(out);
  } catch (err) {
    if (err instanceof PolicyEnforcementError) return refusal(err.toolMessage);
    if (state.sent) throw err;
    return failedClosed(guard.pep, name, 'invalid_request', 'the adapter failed');
  }
}

/** What happened to one call inside `pep.guardTool`: whether it was sent, and the result checked. */
interface SendState {
  sent: boolean;
  /** The result checked (after the `after` interceptors), to tell a WARN's text from a replacement. */
  checked: unknown;
}

/**
 * The call through `pep.guardTool`: sent only on an ALLOW or WARN whose permit verified, with the
 * effective args and the permit in `_meta`; the result checked at `context_egress` with `checkResult`.
 */
function decideAndSend(
  guard: ClientGuard,
  name: string,
  params: Record<string, unknown>,
  options: unknown,
  send: Send,
  state: SendState,
): Promise<unknown> {
  const execute = async (
    effective: Record<string, unknown>,
    ctx: { permitId: string | undefined; session: string },
  ) => {
    const out = withPermit(params, effective, ctx.permitId, ctx.session);
    state.sent = true;
    return send(out);
  };
  const check = (result: unknown): string => {
    state.checked = result;
    return resultText(result);
  };
  const { pep } = guard;
  const guarded = guard.checkResult
    ? pep.guardTool(name, execute, { checkResult: check })
    : pep.guardTool(name, execute);
  // The application's session (the guard's option, else the Pep's): never the transport's
  // `sessionId`, which the SDK takes from whatever `mcp-session-id` the server last sent.
  const callOpts: ActionCallOptions = callOptions({
    session: guard.session,
    signal: isObject(options) ? options.signal : undefined,
  });
  // The pin the call is decided against: the PDP names it in the permit and binds an approval to it.
  const toolPin = guard.surface.pinOf(name);
  if (toolPin !== undefined) callOpts.toolPin = toolPin;
  const args = params.arguments ?? {};
  return guarded(args as Record<string, unknown>, callOpts);
}

/**
 * Calls `onChange` on every `notifications/tools/list_changed`, beside any handler the host (or the
 * SDK's `listChanged` option) sets for it later, through the client's public `setNotificationHandler`
 * (1.x only: a 2.x `Client` pins on the transport route).
 */
function watchListChanged(client: Record<string, unknown>, stack: 'v1' | 'v2', onChange: () => void): void {
  const set = client.setNotificationHandler as (schema: unknown, handler: (...a: unknown[]) => unknown) => void;
  if (typeof set !== 'function' || stack !== 'v1') return;
  const { ToolListChangedNotificationSchema } = sdkV1();
  const isListChanged = (schema: unknown): boolean => {
    if (schema === ToolListChangedNotificationSchema) return true;
    const method = (schema as { shape?: { method?: { value?: unknown } } } | undefined)?.shape?.method?.value;
    return method === 'notifications/tools/list_changed';
  };
  const compose =
    (handler: ((...a: unknown[]) => unknown) | undefined) =>
    (...args: unknown[]): unknown => {
      onChange();
      return handler?.(...args);
    };
  set.call(client, ToolListChangedNotificationSchema, compose(undefined));
  Object.defineProperty(client, 'setNotificationHandler', {
    value: (schema: unknown, handler: (...a: unknown[]) => unknown) =>
      set.call(client, schema, isListChanged(schema) ? compose(handler) : handler),
    writable: false,
    configurable: false,
  });
}
