/**
 * `guardMcpServer` for a 2.x `McpServer` or low-level `Server` of `@modelcontextprotocol/server`, given
 * directly (not behind `createMcpHandler`). Public API of the SDK only: the guard sets the `tools/call` and
 * `tools/list` handlers of the low-level server (`removeRequestHandler`, `setRequestHandler`), and reaches
 * each tool through the handle `registerTool` returned (its public `handler`, `inputSchema`, `enabled`...),
 * which the application passes (`{ tools: { name: handle } }`). No member of an SDK object is replaced.
 * Internal to `agent-pep/mcp`.
 * @internal
 */

import type { VisibleToolsOptions } from '../../core/visibility.js';
import { PolicyEnforcementError } from '../../errors.js';
import { normalizeToolName } from '../../internal/tool-name.js';
import { optionError } from '../../options/kit.js';
import type { Pep } from '../../pep.js';
import type { PermitVerifier } from '../../permit/verifier.js';
import {
  asToolResult,
  failedClosed,
  isObject,
  noSession,
  refusal,
  refusals,
  requestSession,
  type SessionOfRequest,
} from './common.js';
import { approvalRequest } from './escalation.js';
import { pinOf } from './pins.js';
import { argsHashOf, isGuardState, type RequestStates, type StateClaims } from './request-state.js';
import {
  type Callback,
  invalidState,
  isInvalidStateAnswer,
  makeRunner,
  permitRefusal,
  type Received,
  type RegisteredTool,
  roundOf,
} from './server-call.js';

/** A tool handle `registerTool` of a 2.x `McpServer` returns (structurally: the public fields the guard reads). */
export interface McpToolHandleV2 {
  title?: string | undefined;
  description?: string | undefined;
  inputSchema?: unknown;
  outputSchema?: unknown;
  outputSchemaJson?: unknown;
  annotations?: unknown;
  icons?: unknown;
  execution?: unknown;
  _meta?: unknown;
  handler: unknown;
  enabled: boolean;
  update(updates: Record<string, unknown>): void;
}

/** The handlers of a 2.x low-level `Server` the guard serves `tools/call` and `tools/list` with. */
export interface McpToolHandlersV2 {
  /** Answers a `tools/call` request the guard let through, with the arguments decided. */
  call(request: { method: string; params: Record<string, unknown> }, ctx: unknown): unknown;
  /** Answers `tools/list` (filtered by the guard unless `hideBlocked: false`). */
  list?: ((request: { method: string; params: Record<string, unknown> }, ctx: unknown) => unknown) | undefined;
}

/** The public members of a 2.x low-level `Server` the guard uses. */
interface LowLevelV2 {
  setRequestHandler(method: string, handler: Callback): void;
  removeRequestHandler(method: string): void;
  assertCanSetRequestHandler(method: string): void;
  projectCallToolResult(result: unknown, outputSchemaJson: unknown): unknown;
}

/**
 * What differs between the SDK lines on the owned route: how a handler is set, how a schema parses and
 * lists, and how a result is put on the wire. The default is the 2.x one; `server.ts` makes the 1.x one.
 */
export interface ToolStack {
  /** Sets `method`'s handler on the low-level server in place of the SDK's (public API). */
  serve(low: unknown, method: 'tools/call' | 'tools/list', handler: Callback): void;
  /** The output of `schema` for `value`, or an Error naming the issues. */
  parse(schema: unknown, value: unknown): Promise<unknown>;
  /** A tool's listed `inputSchema`. */
  inputJson(tool: McpToolHandleV2): unknown;
  /** A tool's listed `outputSchema`, or undefined. */
  outputJson(tool: McpToolHandleV2): unknown;
  /** The result on the wire (2.x: the SDK's projection). */
  project(low: unknown, result: unknown, tool: McpToolHandleV2): unknown;
}

/** What both v2 guards need. */
export interface V2Deps {
  scope: string;
  pep: Pep;
  verifier: PermitVerifier | undefined;
  hideBlocked: boolean;
  session: SessionOfRequest | undefined;
  /** Signs and checks the `requestState` of an ESCALATE's `InputRequiredResult` (2.x, 2026-07-28). */
  states?: RequestStates | undefined;
  /** An `McpServer`: the most elements a call's arguments may hold (`maxToolInputElements`), else undefined. */
  maxInputElements?: number | undefined;
}

type Request = { method: string; params: Record<string, unknown> };

/** Whether `server` is a 2.x low-level `Server` (it has the 2026-07-28 result projection; 1.x has not). */
export function isLowLevelV2(server: unknown): server is LowLevelV2 {
  return (
    isObject(server) &&
    typeof server.setRequestHandler === 'function' &&
    typeof server.removeRequestHandler === 'function' &&
    typeof server.assertCanSetRequestHandler === 'function' &&
    typeof server.projectCallToolResult === 'function'
  );
}

/** Whether `server` is a 2.x `McpServer` (`registerTool`, no 1.x `tool()`, a 2.x low-level `server`). */
export function isMcpServerV2(server: unknown): boolean {
  return (
    isObject(server) &&
    typeof server.registerTool === 'function' &&
    typeof server.tool !== 'function' &&
    isLowLevelV2(server.server)
  );
}

/** Whether the low-level server has a handler for `method` (public `assertCanSetRequestHandler` throws then). */
function hasHandler(low: LowLevelV2, method: string): boolean {
  try {
    low.assertCanSetRequestHandler(method);
    return false;
  } catch {
    return true;
  }
}

/** Sets `method`'s handler on the low-level server, replacing the SDK's (public API). */
function serve(low: LowLevelV2, method: string, handler: Callback): void {
  low.removeRequestHandler(method);
  low.setRequestHandler(method, handler);
}

/** The 2.x stack: Standard Schema parse and JSON Schema, the SDK's own projection of a result. */
const V2_STACK: ToolStack = {
  serve: (low, method, handler) => serve(low as LowLevelV2, method, handler),
  parse: (schema, value) => standardParse(schema, value),
  inputJson: (t) => (t.inputSchema ? inputJson(t.inputSchema) : { type: 'object', properties: {} }),
  outputJson: (t) => (t.outputSchema ? t.outputSchemaJson : undefined),
  project: (low, result, t) => (low as LowLevelV2).projectCallToolResult(result, t.outputSchemaJson),
};

/** The normalized form of a tool name, or undefined for one that normalizes to nothing. */
function normalized(name: string): string | undefined {
  try {
    return normalizeToolName(name);
  } catch {
    return undefined;
  }
}

/** Whether `value` is a tool handle `registerTool` returned (its public `update` and `handler`). */
function isHandle(value: unknown): value is McpToolHandleV2 {
  return isObject(value) && typeof value.update === 'function' && 'handler' in value;
}

/**
 * The guard's reading of the `tools` record at one time: the handles it serves, and the names it refuses
 * (not a handle, or a name that normalizes like another's: a permit could not tell them apart), each with
 * the reason. Made again only when the record's keys or values changed.
 */
interface ToolView {
  keys: string[];
  values: unknown[];
  handles: Map<string, McpToolHandleV2>;
  refused: Map<string, string>;
}

/** Reads the `tools` record (its own enumerable keys), checking each entry; `prev` when nothing changed. */
function viewOf(tools: Record<string, unknown>, prev: ToolView | undefined): ToolView {
  const keys = Object.keys(tools);
  if (prev !== undefined && keys.length === prev.keys.length) {
    let same = true;
    for (let i = 0; same && i < keys.length; i++) {
      same = keys[i] === prev.keys[i] && tools[keys[i] as string] === prev.values[i];
    }
    if (same) return prev;
  }
  const values = keys.map((k) => tools[k]);
  const handles = new Map<string, McpToolHandleV2>();
  const refused = new Map<string, string>();
  const byNorm = new Map<string, string[]>();
  keys.forEach((name, i) => {
    const value = values[i];
    if (!isHandle(value)) {
      refused.set(name, 'not a handle registerTool returned');
      return;
    }
    handles.set(name, value);
    const norm = normalized(name);
    if (norm !== undefined) byNorm.set(norm, [...(byNorm.get(norm) ?? []), name]);
  });
  for (const group of byNorm.values()) {
    if (group.length < 2) continue;
    for (const name of group) {
      handles.delete(name);
      refused.set(
        name,
        `the same normalized name as ${JSON.stringify((group[0] === name ? group[1] : group[0]) ?? '')}`,
      );
    }
  }
  return { keys, values, handles, refused };
}

/** The `tools` record given at guarding, checked. @throws TypeError with `err.option` `'tools'` */
function readTools(scope: string, tools: unknown): ToolView {
  if (!isObject(tools) || Array.isArray(tools)) {
    optionError(
      scope,
      'tools',
      'an McpServer needs the handles registerTool returned: register the tools first, then guard with { tools: { refund_payment: handle } } (docs/mcp.md, Migrating)',
    );
  }
  const view = viewOf(tools, undefined);
  for (const [name, why] of view.refused) {
    optionError(scope, 'tools', `${JSON.stringify(name.slice(0, 64))}: ${why}`);
  }
  return view;
}

/** A Standard Schema's parse of `value`: its output, or a thrown Error naming the issues. */
async function standardParse(schema: unknown, value: unknown): Promise<unknown> {
  const std = isObject(schema) ? (schema['~standard'] as Record<string, unknown> | undefined) : undefined;
  if (!isObject(std) || typeof std.validate !== 'function')
    throw new Error('the input schema is not a Standard Schema');
  const out = (await (std.validate as (v: unknown) => unknown)(value)) as { value?: unknown; issues?: unknown[] };
  if (Array.isArray(out.issues) && out.issues.length > 0) {
    const text = out.issues
      .map((i) => (isObject(i) && typeof i.message === 'string' ? i.message : 'invalid'))
      .join('; ');
    throw new Error(text);
  }
  return out.value;
}

/** A Standard Schema's JSON Schema (its `~standard.jsonSchema.input`), else an empty object schema. */
function inputJson(schema: unknown): unknown {
  const std = isObject(schema) ? schema['~standard'] : undefined;
  const json = isObject(std) && isObject(std.jsonSchema) ? std.jsonSchema.input : undefined;
  if (typeof json === 'function') {
    try {
      return (json as (o: unknown) => unknown)({ target: 'draft-2020-12' });
    } catch {
      // the SDK lists what it can; the guard lists an object schema
    }
  }
  return { type: 'object', properties: {} };
}

/** The tool-error result the SDK answers a failed tool with. */
function toolError(text: string): unknown {
  return { content: [{ type: 'text', text }], isError: true };
}

/** The SDK's invalid-params protocol error (a disabled tool). */
function invalidParams(message: string): Error {
  return Object.assign(new Error(message), { code: -32602 });
}

/** A tools/list result with only the tools `pep.visibleTools` shows. */
export async function visibleOnly(pep: Pep, result: unknown, o: VisibleToolsOptions): Promise<unknown> {
  if (!isObject(result) || !Array.isArray(result.tools)) return result;
  const listed = result.tools as unknown[];
  const names = listed.map((t) => (isObject(t) && typeof t.name === 'string' ? t.name : undefined));
  const visible = new Set(
    await pep.visibleTools(
      names.filter((n): n is string => n !== undefined),
      o,
    ),
  );
  return { ...result, tools: listed.filter((_, i) => names[i] !== undefined && visible.has(names[i] as string)) };
}

/** A tools/list handler: `list`'s answer, kept to the tools the session may see unless `hideBlocked: false`. */
function listing(deps: V2Deps, list: (request: Request, ctx: unknown) => unknown): Callback {
  return async (request: unknown, ctx: unknown) => {
    const req = request as Request;
    const result = await list(req, ctx);
    if (!deps.hideBlocked) return result;
    const o: VisibleToolsOptions = {};
    const params = isObject(req) && isObject(req.params) ? req.params : {};
    const session = requestSession(deps.session, 'tools/list', params, ctx);
    if (session !== undefined) o.session = session;
    const signal = isObject(ctx) && isObject(ctx.mcpReq) ? ctx.mcpReq.signal : undefined;
    if (signal instanceof AbortSignal) o.signal = signal;
    const visible = await visibleOnly(deps.pep, result, o);
    // What this caller may see: a cache shared between callers must not keep it (MCP 2026-07-28 `cacheScope`).
    return isObject(visible) ? { ...visible, cacheScope: 'private' } : visible;
  };
}

/** One tool as the guard lists it (as the SDK lists it). */
function definition(name: string, t: McpToolHandleV2, stack: ToolStack): Record<string, unknown> {
  const def: Record<string, unknown> = { name, title: t.title, description: t.description };
  def.inputSchema = stack.inputJson(t);
  for (const key of ['annotations', 'icons', 'execution', '_meta'] as const) def[key] = t[key];
  const output = stack.outputJson(t);
  if (output !== undefined) def.outputSchema = output;
  return def;
}

/** The pin a client computes from the tool as listed (its JSON on the wire), or undefined when it has none. */
function pinOfListed(name: string, t: McpToolHandleV2, stack: ToolStack): string | undefined {
  try {
    return pinOf(JSON.parse(JSON.stringify(definition(name, t, stack))) as Record<string, unknown>);
  } catch {
    return undefined;
  }
}

/** The listing of the tools the guard serves (as the SDK lists them), enabled ones only. */
function definitions(view: ToolView, stack: ToolStack): { tools: Record<string, unknown>[] } {
  const tools: Record<string, unknown>[] = [];
  for (const [name, t] of view.handles) if (t.enabled) tools.push(definition(name, t, stack));
  return { tools };
}

/**
 * Guards an `McpServer` through the handles of its tools (2.x, or 1.x with its `stack`): the guard serves
 * `tools/call` and `tools/list` from the `tools` record, read again at each request (a handle added to it
 * after guarding is served like the others; a tool registered without its handle added is neither listed nor
 * callable, its calls refused and observed). Names that normalize alike are refused (checked when the record's
 * keys or values changed). A server with no tool registered yet must declare `capabilities: { tools }`
 * (the SDK then sets its tool handlers at construction, and a later `registerTool` leaves the guard's alone).
 * @throws TypeError when `tools` is missing or bad (`err.option` `'tools'`), two names normalize alike, or
 *   the server does not serve tools yet (no tool registered, no tools capability declared)
 */
export function guardMcpServerV2(
  server: Record<string, unknown>,
  tools: unknown,
  deps: V2Deps,
  stack: ToolStack = V2_STACK,
): void {
  const { pep } = deps;
  const low = server.server as LowLevelV2;
  let view = readTools(deps.scope, tools);
  const record = tools as Record<string, unknown>;
  const current = (): ToolView => {
    view = viewOf(record, view);
    return view;
  };
  const run = makeRunner({
    pep,
    verifier: deps.verifier,
    session: deps.session,
    parse: (tool, args) => stack.parse(tool.inputSchema, args ?? {}),
    pinOf: (tool, name) => pinOfListed(name, tool as McpToolHandleV2, stack),
    states: deps.states,
  });
  const call: Callback = async (request: unknown, ctx: unknown) => {
    const params = isObject(request) && isObject(request.params) ? request.params : {};
    if (typeof params.name !== 'string') return failedClosed(pep, 'unknown', 'invalid_request', 'no tool name');
    const name = params.name;
    const { handles, refused } = current();
    const tool = Object.hasOwn(record, name) ? handles.get(name) : undefined;
    if (tool === undefined) {
      const why = refused.get(name) ?? 'the tool is not one the guard was given';
      return failedClosed(pep, name, 'invalid_request', why);
    }
    if (!tool.enabled) throw invalidParams(`Tool ${name} disabled`);
    const max = deps.maxInputElements;
    if (max !== undefined && elementCount(params.arguments, max) > max) {
      return failedClosed(pep, name, 'invalid_request', `the arguments hold more than the maximum of ${max} elements`);
    }
    const meta = isObject(ctx) && isObject(ctx.mcpReq) ? (ctx.mcpReq._meta ?? params._meta) : params._meta;
    const received: Received = { name, arguments: params.arguments, _meta: meta };
    return await runTool({ low, stack, run }, { tool, name, received, ctx });
  };
  try {
    stack.serve(low, 'tools/call', call);
  } catch {
    // The SDK refuses a tools handler on a server without the tools capability (no tool, none declared).
    optionError(
      deps.scope,
      'tools',
      'the server does not serve tools yet: register a tool before guarding, or declare capabilities: { tools: {} }',
    );
  }
  stack.serve(
    low,
    'tools/list',
    listing(deps, () => definitions(current(), stack)),
  );
}

/**
 * The elements of a JSON value (array items and own object members, through every level), counted as the
 * SDK's `maxToolInputElements` counts them, stopping once over `max`.
 */
function elementCount(value: unknown, max: number): number {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    const children = Array.isArray(node) ? node : Object.values(node as Record<string, unknown>);
    for (const child of children) {
      if (++count > max) return count;
      if (child !== null && typeof child === 'object') stack.push(child);
    }
  }
  return count;
}

/** A retry whose `requestState` of the guard's failed verification (answered with the SDK's -32602). */
class InvalidRequestState extends Error {}

/** The SDK's invalid-params error for a `requestState` that failed verification. */
function invalidStateError(): Error {
  return Object.assign(invalidParams('Invalid or expired requestState'), { data: { reason: 'invalid_request_state' } });
}

/** One call of a served tool, as the SDK's own `tools/call` runs it, through the guard's runner. */
async function runTool(
  on: { low: LowLevelV2; stack: ToolStack; run: ReturnType<typeof makeRunner> },
  c: { tool: McpToolHandleV2; name: string; received: Received; ctx: unknown },
): Promise<unknown> {
  const { low, stack, run } = on;
  const { tool, name, ctx } = c;
  let result: unknown;
  try {
    const handler = tool.handler as Callback;
    // A task tool's handler is an object (`createTask`): not served on this route, a tool error as the SDK's.
    if (typeof handler !== 'function') throw new Error(`Tool ${name} has no handler`);
    let parsed: unknown;
    if (tool.inputSchema) {
      try {
        parsed = await stack.parse(tool.inputSchema, c.received.arguments ?? {});
      } catch (err) {
        throw new Error(`Input validation error: Invalid arguments for tool ${name}: ${(err as Error).message}`);
      }
    }
    result = await run({
      tool: tool as RegisteredTool,
      name,
      callback: handler,
      parsed,
      extra: ctx,
      received: c.received,
    });
    if (isInvalidStateAnswer(result)) throw new InvalidRequestState();
    if (isObject(result) && refusals.has(result)) return result;
    if (isObject(result) && result.resultType === 'input_required') return result;
    if (tool.outputSchema && isObject(result) && 'content' in result && result.isError !== true) {
      if (result.structuredContent === undefined) {
        throw new Error(
          `Output validation error: Tool ${name} has an output schema but no structured content was provided`,
        );
      }
      try {
        await stack.parse(tool.outputSchema, result.structuredContent);
      } catch (err) {
        throw new Error(
          `Output validation error: Invalid structured content for tool ${name}: ${(err as Error).message}`,
        );
      }
    }
  } catch (err) {
    if (err instanceof InvalidRequestState) throw invalidStateError();
    return toolError(err instanceof Error ? err.message : String(err));
  }
  return stack.project(low, result, tool);
}

/**
 * Guards a 2.x low-level `Server`: the guard serves `tools/call` (decided on the arguments as received,
 * which the application's `call` gets) and, with `list`, `tools/list`.
 * @throws TypeError when `toolHandlers` is missing or bad, or the server already has a tools/call handler
 */
export function guardLowLevelV2(low: LowLevelV2, handlers: unknown, deps: V2Deps): void {
  const { scope, pep, verifier } = deps;
  if (!isObject(handlers) || typeof handlers.call !== 'function') {
    optionError(
      scope,
      'toolHandlers',
      'a 2.x low-level Server needs { call(request, ctx), list? } to serve tools with',
    );
  }
  if (handlers.list !== undefined && typeof handlers.list !== 'function') {
    optionError(scope, 'toolHandlers', 'list must be a function');
  }
  if (hasHandler(low, 'tools/call')) {
    throw new TypeError(
      `${scope}: the server has a tools/call handler the guard cannot reach; pass it as { toolHandlers: { call } } instead of setting it`,
    );
  }
  const { call, list } = handlers as unknown as McpToolHandlersV2;
  if (list === undefined && deps.hideBlocked && hasHandler(low, 'tools/list')) {
    optionError(scope, 'toolHandlers', 'pass the tools/list handler as toolHandlers.list (or hideBlocked: false)');
  }
  serve(low, 'tools/call', async (request: unknown, ctx: unknown) => {
    const req = request as Request;
    const params = isObject(req) && isObject(req.params) ? req.params : {};
    const name = typeof params.name === 'string' ? params.name : 'unknown';
    const args = params.arguments ?? {};
    const forward = (a: unknown) => call({ ...req, params: { ...params, arguments: a } }, ctx);
    let bound: Omit<StateClaims, 'escalationId'> | undefined;
    let asks = false;
    try {
      if (typeof params.name !== 'string') return failedClosed(pep, name, 'invalid_request', 'no tool name');
      if (verifier !== undefined) {
        return (await permitRefusal(pep, verifier, name, args, params._meta)) ?? (await forward(args));
      }
      if (!isObject(args)) return failedClosed(pep, name, 'invalid_request', 'arguments are not an object');
      const session = requestSession(deps.session, 'tools/call', params, ctx);
      if (session === undefined) return noSession(pep, name, 'extra');
      // A retry of a held call (2026-07-28): a state of the guard's must be unexpired and for this very call.
      const round = roundOf(ctx);
      const states = deps.states;
      bound = states === undefined ? undefined : { tool: name, argsHash: argsHashOf(args), session };
      if (bound !== undefined && isGuardState(round.state) && !states?.verify(round.state, bound)) {
        invalidState(pep, name);
        throw new InvalidRequestState();
      }
      asks = round.asks;
      const signal = isObject(ctx) && isObject(ctx.mcpReq) ? ctx.mcpReq.signal : undefined;
      const opts = signal instanceof AbortSignal ? { session, signal } : { session };
      return asToolResult(await pep.guardTool(name, forward)(args as Record<string, unknown>, opts));
    } catch (err) {
      if (err instanceof InvalidRequestState) throw invalidStateError();
      if (err instanceof PolicyEnforcementError) {
        const asked = asks && bound !== undefined && deps.states ? approvalRequest(err, deps.states, bound) : undefined;
        return asked ?? refusal(err.toolMessage);
      }
      throw err;
    }
  });
  if (list !== undefined) serve(low, 'tools/list', listing(deps, list));
}
