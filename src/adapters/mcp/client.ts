/**
 * `guardMcpClient`: every `tools/call` an MCP `Client` (1.x or 2.x) sends is decided before it leaves, carries
 * its permit in `_meta`, and its result is checked at `context_egress`.
 * @internal
 */
import { PolicyEnforcementError } from '../../errors.js';
import { isSessionId } from '../../internal/guards.js';
import { optionError, refuseUnknownKeys } from '../../options/kit.js';
import type { ActionCallOptions } from '../../options/pep.js';
import type { Pep } from '../../pep.js';
import { argsBySchema, callOptions, enforcementOf } from '../kit.js';
import {
  assertGuardable,
  assertPep,
  asToolResult,
  failedClosed,
  isObject,
  JSONRPC_ERROR,
  McpProtocolError,
  PERMIT_META_KEY,
  refusal,
  SESSION_META_KEY,
  type ToolResult,
} from './common.js';
import { type McpPinSet, readPinSet } from './pins.js';
import { resultText, withText } from './result.js';
import { makeToolSurface, type ToolSurface } from './surface.js';

/** Options of {@link guardMcpClient}. */
export interface GuardMcpClientOptions {
  /**
   * Check each tool result at `context_egress` (with the tool's name) before the caller sees it:
   * ALLOW returns it as it is, WARN replaces its text with the PDP's `transformedContent`, BLOCK or
   * ESCALATE withholds it (an `isError` result with the `toolMessage`). @defaultValue true
   */
  checkResult?: boolean | undefined;
  /**
   * Filter what `listTools` (any `tools/list`) returns to the tools `pep.visibleTools` shows for the
   * session: a tool the policy blocks outright is never offered to the model (docs/visibility.md). A
   * hidden tool called anyway is still decided per call. @defaultValue true
   */
  hideBlocked?: boolean | undefined;
  /**
   * Pin the tool definitions (docs/visibility.md): `true` takes the pins at the first `tools/list`; a pin
   * set (from `pepPins()` or `agent-pep pin mcp`) starts from those. A tool whose definition differs from
   * its pin, or that was not pinned, is hidden, and a call to it is a synthesized BLOCK `tool_changed`.
   * @defaultValue undefined (no pinning)
   */
  pin?: true | McpPinSet | undefined;
  /** With `pin`: offer (and pin at first sight) a tool that was not pinned, instead of hiding it. @defaultValue false */
  allowNew?: boolean | undefined;
  /**
   * The policy session every call of this client is decided in, and sent to the server in
   * `params._meta['agent-pep/session']`. Nothing a server sends (`Mcp-Session-Id`, `_meta` of a response)
   * changes it (CONTRACT section 16). @defaultValue the Pep's own session (`createPep({ session })`,
   * `pep.withSession(id)`)
   */
  session?: string | undefined;
}

/**
 * What {@link guardMcpClient} takes: a `Client` of `@modelcontextprotocol/sdk` 1.x or of
 * `@modelcontextprotocol/client` 2.x (structurally, so that neither package's types are needed).
 */
export interface McpClientLike {
  callTool(...args: never[]): Promise<unknown>;
  request(...args: never[]): Promise<unknown>;
}

/** A client guarded by {@link guardMcpClient}. */
export interface GuardedMcpClient {
  /**
   * The pin set, plain JSON: `{ version: 1, server: { name, version }, tools: { <name>: <sha256> } }`
   * (docs/visibility.md); `undefined` without `pin`.
   */
  pepPins(): McpPinSet | undefined;
}

const CLIENT_OPTIONS: ReadonlySet<string> = new Set(['checkResult', 'hideBlocked', 'pin', 'allowNew', 'session']);

const guardedClients = new WeakSet<object>();

type Send = (params: Record<string, unknown>) => Promise<unknown>;

/**
 * Guards the `tools/call` requests of an MCP `Client` (`@modelcontextprotocol/sdk` 1.x, or
 * `@modelcontextprotocol/client` 2.x speaking protocol 2026-07-28; the stack is told by the object): `callTool` (and
 * any other `tools/call` sent through `client.request`) is authorized by the PDP before the request
 * leaves, and sent only after an ALLOW or WARN whose permit verified (`pep.guardTool`), with the
 * PDP's `transformedArgs` on WARN and the permit in `params._meta['agent-pep/permit']`, where a server
 * guarded with `{ verifier }` checks it. The result is then checked at `context_egress` with the
 * tool's name.
 *
 * @param pep - the client that decides (`createPep`), with `permits` configured (or `permits: false`,
 *   which sends no permit). Session: `opts.session`, else the Pep's own; it is sent to the server in
 *   `params._meta['agent-pep/session']`, and nothing the server sends (`Mcp-Session-Id`, a response's
 *   `_meta`) changes it (CONTRACT section 16).
 * @param client - a `Client` of `@modelcontextprotocol/sdk` 1.x or `@modelcontextprotocol/client` 2.x,
 *   before or after `connect` (`pin` is 1.x only for now: a TypeError naming `pin` on 2.x)
 * @param opts - `{ checkResult?, hideBlocked?, pin?, allowNew?, session? }` (see {@link GuardMcpClientOptions})
 * @returns the same client
 * @throws TypeError when `pep` is not a Pep or cannot guard tools, `client` is not an MCP `Client`, the
 *   client is already guarded, or `opts` has an unknown or bad key (`err.option` names it)
 * @remarks Fails closed: a blocked or held call is never sent, and `callTool` resolves with `{ isError:
 * true, content: [{ type: 'text', text: toolMessage }] }`, the form the host shows to the model; so does
 * a result the PDP blocks at `context_egress` (withheld) and any error of the adapter itself. ESCALATE
 * is a hold the model is told about (MCP 1.x has no approval flow for `tools/call`). On a WARN of the
 * result, its text items are replaced by the PDP's text and `structuredContent` is dropped (it would
 * carry what the PDP redacted); images and other non-text items are not checked. Task-augmented
 * `tools/call` requests (experimental) are refused with an error whose `code` is JSON-RPC's invalid request (-32600), since their results would
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
export function guardMcpClient<C extends McpClientLike>(
  pep: Pep,
  client: C,
  opts?: GuardMcpClientOptions,
): C & GuardedMcpClient {
  const scope = 'guardMcpClient';
  assertPep(pep, scope);
  const { checkResult, session, ...surfaceOpts } = readClientOptions(scope, opts);
  const target = client as unknown as Record<string, unknown>;
  if (!isObject(client) || typeof target.callTool !== 'function' || typeof target.request !== 'function') {
    throw new TypeError(
      `${scope}: client must be a Client of @modelcontextprotocol/sdk 1.x or @modelcontextprotocol/client 2.x`,
    );
  }
  if (guardedClients.has(client)) throw new TypeError(`${scope}: this client is already guarded`);
  const stack = stackOf(target);
  if (stack === 'v2' && surfaceOpts.pin !== undefined) {
    optionError(scope, 'pin', 'pinning is not supported on a @modelcontextprotocol/client 2.x Client yet');
  }
  assertGuardable(pep, scope);

  const callTool = target.callTool as SdkMethod;
  const request = target.request as SdkMethod;
  // The SDK's own request, one shape for both stacks: v1 takes `(request, resultSchema?, options?)`, v2
  // `(request, options?)` for the spec's methods (the result schema is its own).
  const sdkRequest: SdkMethod =
    stack === 'v1'
      ? (req, schema, options) => request.call(client, req, schema, options)
      : (req, _schema, options) => request.call(client, req, options);
  const guard: ClientGuard = {
    pep,
    target,
    checkResult,
    session,
    surface: makeToolSurface({ scope, pep, client: target, request: sdkRequest, session, stack, ...surfaceOpts }),
    authorized: new WeakSet<object>(),
  };
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
    if (isObject(req) && req.method === 'tools/list') return guard.surface.list(req, resultSchema, options);
    if (!isObject(req) || req.method !== 'tools/call') return forward(req);
    if (isObject(req.params) && guard.authorized.has(req.params)) {
      guard.authorized.delete(req.params);
      return forward(req);
    }
    return guardedCall(guard, req.params, options, (p) => forward({ ...req, params: p }));
  };
}

/** The params of a `tools/call`, each member read once: what is decided is what is sent (a getter cannot answer differently later). */
function readParams(given: unknown): Record<string, unknown> {
  try {
    return isObject(given) ? { ...given } : {};
  } catch {
    return {};
  }
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

/**
 * The args of a `tools/call` as the server's tool will run them (docs/adapters.md "Schemas"): by the
 * `inputSchema` it lists, or as sent when it lists none. A schema that cannot be read, or args that do
 * not fit it, are an `invalid_request` refusal, observed like the PDP's decisions.
 */
async function argsByListedSchema(
  pep: Pep,
  surface: ToolSurface,
  name: string,
  given: unknown,
  options: unknown,
): Promise<{ kind: 'args'; args: unknown } | { kind: 'refused'; result: ToolResult }> {
  if (!isObject(given)) return { kind: 'args', args: given };
  const refuse = (why: string) => ({
    kind: 'refused' as const,
    result: refusal(
      enforcementOf(pep, 'guardMcpClient').refuse({ stage: 'action', tool: name }, 'invalid_request', why).toolMessage,
    ),
  });
  let schema: unknown;
  try {
    schema = await surface.inputSchemaOf(name, options);
  } catch {
    return refuse("the server's tool list could not be read to apply the tool's input schema");
  }
  const planned = argsBySchema(schema, given);
  return planned.kind === 'args' ? planned : refuse(planned.why);
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
 * The params to send: the effective args, and in `_meta` the session the call was decided in and only
 * the permit the PDP minted for this call (a caller's own values under those keys never travel).
 */
function withPermit(
  params: Record<string, unknown>,
  effective: Record<string, unknown>,
  permitId: string | undefined,
  session: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...params, arguments: effective };
  const meta: Record<string, unknown> = { ...(isObject(params._meta) ? params._meta : {}) };
  delete meta[PERMIT_META_KEY];
  if (permitId !== undefined) meta[PERMIT_META_KEY] = permitId;
  meta[SESSION_META_KEY] = session;
  out._meta = meta;
  return out;
}

/** The options of {@link guardMcpClient}, checked in order. @throws TypeError with `err.option` */
function readClientOptions(scope: string, opts: GuardMcpClientOptions | undefined) {
  const rawOpts: unknown = opts;
  if (rawOpts !== undefined && !isObject(rawOpts)) optionError(scope, 'opts', 'expected an object');
  if (rawOpts !== undefined) refuseUnknownKeys(scope, rawOpts, CLIENT_OPTIONS);
  const checkResult: unknown = opts?.checkResult ?? true;
  if (typeof checkResult !== 'boolean') optionError(scope, 'checkResult', 'expected a boolean');
  const session: unknown = opts?.session;
  if (session !== undefined && !isSessionId(session)) optionError(scope, 'session', 'expected a non-empty string');
  return {
    checkResult: checkResult as boolean,
    session: session as string | undefined,
    ...readSurfaceOptions(scope, opts),
  };
}

/** `hideBlocked`, `pin` and `allowNew`, checked. @throws TypeError with `err.option` */
function readSurfaceOptions(
  scope: string,
  opts: GuardMcpClientOptions | undefined,
): { hideBlocked: boolean; pin: McpPinSet | true | undefined; allowNew: boolean } {
  const hideBlocked: unknown = opts?.hideBlocked ?? true;
  if (typeof hideBlocked !== 'boolean') optionError(scope, 'hideBlocked', 'expected a boolean');
  const allowNew: unknown = opts?.allowNew ?? false;
  if (typeof allowNew !== 'boolean') optionError(scope, 'allowNew', 'expected a boolean');
  const given: unknown = opts?.pin;
  const pin = given === undefined || given === true ? given : readPinSet(scope, given);
  if (allowNew === true && pin === undefined) optionError(scope, 'allowNew', 'allowNew needs pin');
  return { hideBlocked: hideBlocked as boolean, pin, allowNew: allowNew as boolean };
}
