/**
 * One `tools/call` a guarded client transport received from its `Client`: read once, decided through the
 * enforcement layer (`pep.guardTool`), sent with its permit and session in `_meta` only on an ALLOW or
 * WARN whose permit verified, and its result checked at `context_egress`; what the `Client` then receives
 * for that request id. Internal to `agent-pep/mcp`.
 * @internal
 */
import { PolicyEnforcementError } from '../../errors.js';
import type { ActionCallOptions } from '../../options/pep.js';
import type { Pep } from '../../pep.js';
import { callOptions, enforcementOf } from '../kit.js';
import { argsByListedSchema, readParams, withPermit } from './client-call.js';
import { asToolResult, failedClosed, isObject, JSONRPC_ERROR, refusal } from './common.js';
import { PROTOCOL_VERSION_META } from './escalation.js';
import { resultText, withText } from './result.js';
import type { ToolSurface } from './surface.js';

/** A promise with its settle functions. */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(reason: unknown): void;
}

export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A message the inner transport delivered, with the `extra` it came with. */
export interface Received {
  message: Record<string, unknown>;
  extra: unknown;
}

/** One `tools/call` in the guard's hands, from the `Client`'s `send` until the `Client` has its answer. */
export interface PendingCall {
  /** `deciding` until it is sent (the server never saw it), then `sent`. */
  state: 'deciding' | 'sent';
  /** Cancelled by the `Client` (or closed): nothing is sent, nothing is delivered. */
  cancelled: boolean;
  /** Aborted on cancellation or close: the decision stops. */
  abort: AbortController;
  /** Settled with the server's response to the sent request (rejected with `NotSent` on close). */
  response: Deferred<Received>;
  /** What the `Client`'s `send` resolves with: once the request is sent or known never to be; the inner send's error. */
  handed: Deferred<void>;
}

export function pendingCall(): PendingCall {
  const call: PendingCall = {
    state: 'deciding',
    cancelled: false,
    abort: new AbortController(),
    response: deferred<Received>(),
    handed: deferred<void>(),
  };
  // Neither may reject unobserved: the route awaits them only on some paths.
  call.response.promise.catch(() => undefined);
  call.handed.promise.catch(() => undefined);
  return call;
}

/** Nothing was (or will be) sent, or the answer is no longer wanted: the `Client` receives nothing. */
export class NotSent extends Error {}

/** A response of the server the `Client` receives as it is (a JSON-RPC error, an `input_required` result). */
class PassThrough extends Error {
  constructor(readonly received: Received) {
    super('passed through');
  }
}

/**
 * A server's JSON-RPC error answer to a sent call: text the model may read (frameworks hand a tool's error
 * message to the model), so `pep.guardTool` checks it at `context_egress` like a result, and the session
 * learns what it read.
 */
class ErrorAnswer {
  constructor(readonly received: Received) {}

  /** The error's message and data, as the check reads them. */
  get text(): string {
    const error = this.received.message.error as Record<string, unknown>;
    const parts = [error.message, error.data].filter((v) => v !== undefined);
    return parts.map((v) => (typeof v === 'string' ? v : (JSON.stringify(v) ?? ''))).join('\n');
  }

  /** The error with the PDP's text as its message (a WARN), its code kept and its data dropped. */
  withMessage(text: string): Received {
    const { message, extra } = this.received;
    const error = message.error as Record<string, unknown>;
    return { message: { ...message, error: { code: error.code, message: text } }, extra };
  }
}

/** What the guarded transport needs to decide a call. */
export interface CallContext {
  pep: Pep;
  checkResult: boolean;
  /** The guard's session, else undefined (the Pep's own). */
  session: string | undefined;
  surface: ToolSurface;
  /** Sends on the inner transport. */
  send(message: Record<string, unknown>, options: unknown): Promise<void>;
  /** Whether the transport was closed. */
  closed(): boolean;
}

/** What the `Client` receives for one call: a result, a message as it is, or nothing. */
export type Outcome =
  | { kind: 'result'; result: Record<string, unknown> }
  | { kind: 'message'; received: Received }
  | { kind: 'none' };

const result = (r: unknown): Outcome => ({ kind: 'result', result: asToolResult(r) as Record<string, unknown> });

/**
 * Decides one `tools/call` request and says what the `Client` receives for it; never rejects (an error of
 * the adapter itself is a synthesized BLOCK, observed).
 */
export async function decideCall(
  ctx: CallContext,
  request: Record<string, unknown>,
  call: PendingCall,
  options: unknown,
): Promise<Outcome> {
  const params = readParams(request.params);
  const name = typeof params.name === 'string' ? params.name : undefined;
  if (name === undefined) {
    return result(failedClosed(ctx.pep, 'unknown', 'invalid_request', 'tools/call params without a tool name'));
  }
  if (isObject(params.task)) return taskRefused(ctx.pep, name, request.id);
  const opts = { signal: call.abort.signal };
  try {
    const changed = await ctx.surface.refuseCall(name, opts);
    if (changed !== undefined) return result(changed);
    const planned = await argsByListedSchema(ctx.pep, ctx.surface, name, params.arguments, opts);
    if (planned.kind === 'refused') return result(planned.result);
    params.arguments = planned.args;
  } catch (err) {
    // A pin set for another server (TypeError naming `pin`), found at the first list: nothing is sent.
    if (err instanceof TypeError) return taskRefused(ctx.pep, name, request.id, err.message);
    return result(failedClosed(ctx.pep, name, 'invalid_request', 'the adapter failed'));
  }
  return decidedOutcome(ctx, name, request, params, call, options);
}

/**
 * A task-augmented `tools/call` (its result would escape the check), or a call the guard cannot decide
 * for a reason the host must fix: the JSON-RPC invalid-request error, observed as a synthesized BLOCK.
 */
function taskRefused(pep: Pep, name: string, id: unknown, why?: string): Outcome {
  const message = why ?? 'agent-pep/mcp: task-augmented tools/call is not supported';
  enforcementOf(pep, 'guardMcpClient').refuse({ stage: 'action', tool: name }, 'invalid_request', message);
  const error = { code: JSONRPC_ERROR.invalidRequest, message };
  return { kind: 'message', received: { message: { jsonrpc: '2.0', id, error }, extra: undefined } };
}

/** What happened to one call inside `pep.guardTool`. */
interface SendState {
  sent: boolean;
  /** The result checked (after the `after` interceptors), to tell a WARN's text from a replacement. */
  checked: unknown;
}

/** The call through `pep.guardTool`, and the result the `Client` receives. */
async function decidedOutcome(
  ctx: CallContext,
  name: string,
  request: Record<string, unknown>,
  params: Record<string, unknown>,
  call: PendingCall,
  options: unknown,
): Promise<Outcome> {
  const state: SendState = { sent: false, checked: undefined };
  try {
    const out = await decideAndSend(ctx, name, request, params, call, options, state);
    if (!state.sent) return result(out);
    if (out instanceof ErrorAnswer) return { kind: 'message', received: out.received };
    if (typeof out !== 'string') return { kind: 'result', result: out as Record<string, unknown> };
    // A WARN's transformedContent in place of the result checked: its items that show no text stay.
    // Else the string is an `after` interceptor's replacement: the whole result, nothing of the server's.
    const checked = state.checked;
    if (checked instanceof ErrorAnswer) return { kind: 'message', received: checked.withMessage(out) };
    const replaced =
      out !== checked && typeof checked !== 'string' && checked !== undefined ? withText(checked, out) : out;
    return result(fitOutputSchema(asToolResult(replaced), ctx.surface.hasOutputSchema(name)));
  } catch (err) {
    if (err instanceof NotSent) return { kind: 'none' };
    if (err instanceof PassThrough) return { kind: 'message', received: err.received };
    if (err instanceof PolicyEnforcementError) return result(refusal(err.toolMessage));
    return result(failedClosed(ctx.pep, name, 'invalid_request', 'the adapter failed'));
  }
}

/**
 * A replaced result of a tool that lists an `outputSchema`: both SDKs' `callTool` refuse a result without
 * `structuredContent` unless it is `isError` (and `structuredContent` would carry what the PDP redacted),
 * so the PDP's text reaches the caller as a tool error instead of an exception.
 */
function fitOutputSchema(r: unknown, hasOutputSchema: boolean): unknown {
  if (!hasOutputSchema || !isObject(r) || r.structuredContent !== undefined || r.isError === true) return r;
  return { ...r, isError: true };
}

/** The members of a 2026-07-28 `InputRequiredResult`: what may reach the `Client` without the result check. */
const INPUT_REQUIRED_KEYS = ['resultType', 'inputRequests', 'requestState', '_meta'] as const;

/**
 * A server's answer as the `Client` receives it unchecked: a JSON-RPC error as it is; an `input_required`
 * result (the retried request is decided again) only to a 2026-07-28 client and only with the members of
 * an `InputRequiredResult` (a `content` or `structuredContent` beside them would skip the check); else
 * `undefined`, a result to check (an earlier revision has no `input_required`: its `Client` reads the content).
 */
function unchecked(received: Received, modern: boolean): Received | undefined {
  const { message } = received;
  if (!('result' in message)) return received;
  const r = message.result;
  if (!modern || !isObject(r) || r.resultType !== 'input_required') return undefined;
  const kept: Record<string, unknown> = {};
  for (const k of INPUT_REQUIRED_KEYS) if (k in r) kept[k] = r[k];
  return { ...received, message: { ...message, result: kept } };
}

/** Whether a request was sent by a 2026-07-28 client (its `_meta` names the protocol revision). */
function isModern(request: Record<string, unknown>): boolean {
  const params = request.params;
  return isObject(params) && isObject(params._meta) && PROTOCOL_VERSION_META in params._meta;
}

/**
 * `pep.guardTool` around the send: the request leaves only on an ALLOW or WARN whose permit verified,
 * with the effective args, the permit and the session in `_meta`; the server's result is checked at
 * `context_egress` with `checkResult`.
 */
function decideAndSend(
  ctx: CallContext,
  name: string,
  request: Record<string, unknown>,
  params: Record<string, unknown>,
  call: PendingCall,
  options: unknown,
  state: SendState,
): Promise<unknown> {
  const execute = async (effective: Record<string, unknown>, c: { permitId: string | undefined; session: string }) => {
    if (call.cancelled || ctx.closed()) throw new NotSent();
    state.sent = true;
    call.state = 'sent';
    try {
      await ctx.send({ ...request, params: withPermit(params, effective, c.permitId, c.session) }, options);
    } catch (err) {
      // The `Client`'s own send rejects with the transport's error, as it would unguarded.
      call.handed.reject(err);
      throw new NotSent();
    }
    call.handed.resolve();
    const received = await call.response.promise;
    if (!('result' in received.message) && isObject(received.message.error)) return new ErrorAnswer(received);
    const passed = unchecked(received, isModern(request));
    if (passed !== undefined) throw new PassThrough(passed);
    return received.message.result;
  };
  const check = (r: unknown): string => {
    state.checked = r;
    return r instanceof ErrorAnswer ? r.text : resultText(r);
  };
  const guarded = ctx.checkResult
    ? ctx.pep.guardTool(name, execute, { checkResult: check })
    : ctx.pep.guardTool(name, execute);
  // The application's session (the guard's option, else the Pep's): never the transport's `sessionId`,
  // which the SDK takes from whatever `mcp-session-id` the server last sent.
  const callOpts: ActionCallOptions = callOptions({ session: ctx.session, signal: call.abort.signal });
  // The pin the call is decided against: the PDP names it in the permit and binds an approval to it.
  const toolPin = ctx.surface.pinOf(name);
  if (toolPin !== undefined) callOpts.toolPin = toolPin;
  return guarded((params.arguments ?? {}) as Record<string, unknown>, callOpts);
}
