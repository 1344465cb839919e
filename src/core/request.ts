/**
 * A stage call -> a request: per-call options read once, the args snapshot taken once, the tool name
 * checked and normalized, and what was sent kept for the enforceability checks. Nothing here touches
 * the network. Input that cannot become a request is an {@link InvalidRequest} (a synthesized BLOCK
 * `invalid_request`, docs/api.md).
 * @internal
 */
import type { IntentGrant, SandboxRoute, Stage } from '../decision.js';
import { isAbortSignal, isSessionId } from '../internal/guards.js';
import { NotJsonError, snapshotJsonObject } from '../internal/json.js';
import { sessionOf } from '../internal/session.js';
import { normalizeToolName } from '../internal/tool-name.js';
import {
  type ActionCallOptions,
  type CallOptions,
  DEFAULTS,
  type EgressCallOptions,
  type InputCallOptions,
} from '../options/pep.js';
import { canonicalSnapshotJson } from '../permit/hash.js';
import type { AuthorizeRequest, SentRequest, VisibilityBatch } from '../wire/agent-pep.js';
import { readIntent } from './intent.js';

/** Why a call could not become a request; its message names the problem, never a value. */
export class InvalidRequest extends Error {
  override readonly name = 'InvalidRequest';
}

/** What a stage method was called with. */
export type Payload = { content: unknown; purpose?: 'model_request' } | { tool: unknown; args: unknown };

/** Args read once: their snapshot, or why they could not be taken. */
export type Snapshot = { ok: true; args: Record<string, unknown> } | { ok: false; error: unknown };

/** Reads `args` once into a deep copy of JSON values, or records why that failed (never re-read). */
export function takeSnapshot(args: unknown): Snapshot {
  try {
    return { ok: true, args: snapshotJsonObject(args) };
  } catch (error) {
    return { ok: false, error };
  }
}

/** Names the kind of value that is not JSON; never copies a message the args themselves threw. */
function argsMessage(error: unknown): string {
  return error instanceof NotJsonError
    ? `args are not a plain object of JSON values: ${error.message}`
    : 'args could not be read as a plain object of JSON values';
}

/** Per-call options after validation. */
export interface CallContext {
  signal: AbortSignal | undefined;
  session: string;
  simulated: boolean;
  /** `checkContextEgress`'s `tool`, as given. */
  tool: string | undefined;
  /** Set by `visibleTools` only (never a per-call option): the request asks what the model may see. */
  purpose?: 'visibility' | 'model_request' | undefined;
  /** Set by `visibleTools` only: the batch the request belongs to. */
  visibilityBatch?: VisibilityBatch | undefined;
  /** `checkInput`'s `intent`, checked and copied. */
  intent?: IntentGrant[] | undefined;
  /** An action's `toolPin` (43 base64url characters), checked. */
  toolPin?: string | undefined;
}

export { isAbortSignal, isSessionId };

/** The keys of {@link CallOptions}; `checkContextEgress` also takes `tool` (docs/api.md, `CallOptions`). */
const CALL_KEYS: ReadonlySet<string> = new Set(['signal', 'session', 'simulated']);
const EGRESS_CALL_KEYS: ReadonlySet<string> = new Set([...CALL_KEYS, 'tool']);
const INPUT_CALL_KEYS: ReadonlySet<string> = new Set([...CALL_KEYS, 'intent']);
const ACTION_CALL_KEYS: ReadonlySet<string> = new Set([...CALL_KEYS, 'toolPin']);
/** A SHA-256 in base64url without padding: the form of a tool pin (docs/visibility.md). */
const TOOL_PIN = /^[A-Za-z0-9_-]{43}$/;
/** Most characters of an unknown key named in a message (the key is the caller's, but may be long). */
const KEY_SHOWN = 64;

/**
 * Refuses a per-call option key that is not known (docs/api.md, `CallOptions`): a misspelt `tool` must
 * never skip the tool's rules. @throws InvalidRequest naming the first unknown key (cut to 64 characters)
 */
function refuseUnknownCallKeys(o: object, known: ReadonlySet<string>): void {
  for (const key of Object.keys(o)) {
    if (known.has(key)) continue;
    const shown = key.length > KEY_SHOWN ? `${key.slice(0, KEY_SHOWN)}...` : key;
    throw new InvalidRequest(`unknown call option ${JSON.stringify(shown)}`);
  }
}

/**
 * Reads the per-call options once. Unknown keys are refused.
 * @throws InvalidRequest on a bad option
 */
export function readCallOptions(
  raw: unknown,
  stage: Stage,
  defaults: { session: string; simulated: boolean },
): CallContext {
  // No options: no call session, so `sessionOf` would give the client's; the hot path skips the call.
  if (raw === undefined)
    return { signal: undefined, session: defaults.session, simulated: defaults.simulated, tool: undefined };
  if (typeof raw !== 'object' || raw === null) throw new InvalidRequest('call options must be an object');
  const o = raw as EgressCallOptions;
  refuseUnknownCallKeys(
    o,
    stage === 'context_egress'
      ? EGRESS_CALL_KEYS
      : stage === 'input'
        ? INPUT_CALL_KEYS
        : stage === 'action'
          ? ACTION_CALL_KEYS
          : CALL_KEYS,
  );
  const { signal, session, simulated } = o;
  const tool = stage === 'context_egress' ? o.tool : undefined;
  if (signal !== undefined && !isAbortSignal(signal)) throw new InvalidRequest('signal must be an AbortSignal');
  if (session !== undefined && !isSessionId(session)) throw new InvalidRequest('session must be a non-empty string');
  if (simulated !== undefined && typeof simulated !== 'boolean')
    throw new InvalidRequest('simulated must be a boolean');
  const call: CallContext = {
    signal,
    session: sessionOf({ call: session, client: defaults.session }) as string,
    simulated: simulated ?? defaults.simulated,
    tool,
  };
  const intent = (o as InputCallOptions).intent;
  if (stage === 'input' && intent !== undefined) {
    const read = readIntent(intent);
    if (!read.ok) throw new InvalidRequest(read.problem);
    call.intent = read.intent;
  }
  const toolPin = (o as ActionCallOptions).toolPin;
  if (stage === 'action' && toolPin !== undefined) {
    if (typeof toolPin !== 'string' || !TOOL_PIN.test(toolPin)) {
      throw new InvalidRequest('toolPin must be a SHA-256 in base64url (43 characters)');
    }
    call.toolPin = toolPin;
  }
  return call;
}

/**
 * Checks a tool name and normalizes it (docs/api.md, docs/permits.md and docs/dev-pdp.md).
 * @throws InvalidRequest when it is not a string, is longer than 256 characters, or normalizes to nothing
 */
export function checkToolName(tool: unknown): string {
  if (typeof tool !== 'string' || !tool.isWellFormed()) throw new InvalidRequest('tool must be a string');
  if (tool.length > DEFAULTS.maxToolNameLength) {
    throw new InvalidRequest(`tool name longer than ${DEFAULTS.maxToolNameLength} characters`);
  }
  try {
    return normalizeToolName(tool);
  } catch {
    throw new InvalidRequest('tool name normalizes to nothing');
  }
}

/** Checks text content. @throws InvalidRequest */
function checkContent(content: unknown): string {
  if (typeof content !== 'string') throw new InvalidRequest('content must be a string');
  if (!content.isWellFormed()) throw new InvalidRequest('content contains a lone surrogate');
  return content;
}

/** One call turned into what is sent (`req`) and what the answer is checked against (`sent`). */
export interface Prepared {
  readonly req: AuthorizeRequest;
  readonly sent: SentRequest;
  readonly call: CallContext;
  /** Set when an interceptor's `proceedWith` replaced the running args or content. */
  replaced?: true;
  /** Set when an interceptor routed the action to a sandbox (docs/interceptors.md). */
  route?: SandboxRoute;
  /**
   * Set when the args snapshot is the client's own (taken by {@link prepare}, not handed in by a guard
   * helper, whose tool runs with it): nothing outside the client ever holds it, so the `before` chain
   * may freeze it in place and show it to the interceptors rather than a frozen copy.
   */
  ownArgs?: true;
}

/**
 * Builds the request of one stage call. Args are read once: a snapshot `guardTool` already took (or
 * failed to take) is used as it is.
 * @throws InvalidRequest when the call cannot become a request
 */
export function prepare(
  stage: Stage,
  payload: Payload,
  call: CallContext,
  agentId: string,
  requestId: string,
  snapshot?: Snapshot,
): Prepared {
  const req: AuthorizeRequest = { agentId, session: call.session, stage, requestId };
  const sent: SentRequest = { stage, requestId, agentId, session: call.session, simulated: false };
  if ('content' in payload) {
    req.content = checkContent(payload.content);
    if (call.tool !== undefined) {
      sent.tool = checkToolName(call.tool);
      req.tool = call.tool;
    }
  } else {
    const normalized = checkToolName(payload.tool);
    const taken = snapshot ?? takeSnapshot(payload.args);
    if (!taken.ok) throw new InvalidRequest(argsMessage(taken.error));
    req.tool = payload.tool as string;
    req.args = taken.args;
    sent.tool = normalized;
    sent.args = taken.args;
    sent.argsJson = canonicalSnapshotJson(taken.args);
  }
  if (call.simulated) req.simulated = sent.simulated = true;
  if (call.purpose !== undefined) req.purpose = call.purpose;
  if (call.visibilityBatch !== undefined) req.visibilityBatch = call.visibilityBatch;
  if (call.intent !== undefined) req.intent = call.intent;
  if (call.toolPin !== undefined) req.toolPin = call.toolPin;
  return snapshot === undefined && sent.args !== undefined ? { req, sent, call, ownArgs: true } : { req, sent, call };
}

/**
 * Puts an interceptor's `proceedWith` value in place of the running args or content (docs/interceptors.md): it must be valid input, as the caller's own would be.
 * @throws InvalidRequest when it is not
 */
export function replaceRunningValue(p: Prepared, value: { args?: Snapshot | undefined; content?: unknown }): void {
  p.replaced = true;
  if (p.sent.stage === 'action') {
    const taken = value.args ?? { ok: false, error: new NotJsonError('args must be a plain object') };
    if (!taken.ok) throw new InvalidRequest(`an interceptor's replacement ${argsMessage(taken.error)}`);
    // A copy of the frozen snapshot the later interceptors saw (ours: reading it again reads the same),
    // so that the args a tool runs with are not frozen.
    const args = snapshotJsonObject(taken.args);
    p.req.args = p.sent.args = args;
    p.sent.argsJson = canonicalSnapshotJson(args);
  } else {
    p.req.content = checkContent(value.content);
  }
}

/** The headers every request of one client carries but `x-request-id`. */
export function baseHeaders(userAgent: string, apiKey: string | undefined): Readonly<Record<string, string>> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json',
    'user-agent': userAgent,
  };
  if (apiKey !== undefined) headers.authorization = `Bearer ${apiKey}`;
  return Object.freeze(headers);
}

/** Per-call options as given, for the guard helpers (already validated by the decision). */
export type { CallOptions };
