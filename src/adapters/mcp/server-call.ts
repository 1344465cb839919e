/**
 * One guarded `tools/call` of a guarded `McpServer` (docs/adapters.md): decided by `pep.guardTool`, or
 * with a verifier, run only after the client's permit verified. Internal to `agent-pep/mcp`.
 * @internal
 */
import { isDeepStrictEqual } from 'node:util';
import { PolicyEnforcementError } from '../../errors.js';
import { isPlainObject } from '../../internal/guards.js';
import { withoutUndefinedMembers } from '../../internal/json.js';
import type { CallOptions } from '../../options/pep.js';
import type { Pep } from '../../pep.js';
import type { PermitVerifier } from '../../permit/verifier.js';
import {
  asToolResult,
  failedClosed,
  isObject,
  noSession,
  PERMIT_META_KEY,
  refusal,
  requestSession,
  type SessionOfRequest,
  type ToolResult,
} from './common.js';
import {
  approvalRequest,
  CLIENT_CAPABILITIES_META,
  declaresElicitation,
  isModernRevision,
  PROTOCOL_VERSION_META,
} from './escalation.js';
import { argsHashOf, isGuardState, type RequestStates, type StateClaims } from './request-state.js';

/** What a `tools/call` request carried, as the server received it. */
export interface Received {
  name: unknown;
  arguments: unknown;
  _meta: unknown;
}

export type Callback = (...args: unknown[]) => unknown;

/** Thrown inside the guarded execute when the args to run do not fit the tool's input schema. */
class SchemaRefusal extends Error {}

/**
 * A registered tool as the guard reads it: a 1.x `RegisteredTool` or a 2.x handle (structurally, so
 * that neither SDK's types are needed).
 */
export interface RegisteredTool {
  readonly inputSchema?: unknown;
}

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

/** A call on a server with a verifier: what it carried, and what the callback would get. */
interface VerifiedCall {
  pep: Pep;
  verifier: PermitVerifier;
  name: string;
  meta: unknown;
  wire: unknown;
  parsed: unknown;
  hasSchema: boolean;
  /** The pin of the tool's definition as the server lists it now, when the server knows it. */
  pin: string | undefined;
}

/**
 * With a verifier: the callback runs only after the permit in `_meta` verified against the tool name
 * as registered and the arguments as received (docs/permits.md), never falling back to the PDP.
 */
async function runVerified(c: VerifiedCall, invoke: () => unknown): Promise<unknown> {
  // The permit binds the arguments as received; the callback gets them as the schema parses them.
  // A schema may drop unknown members, never add one (a default the client did not send) or change
  // a value (a coercion, a transform): the callback would run args the permit does not bind.
  const refused = await permitRefusal(
    c.pep,
    c.verifier,
    c.name,
    c.wire,
    c.meta,
    () =>
      c.hasSchema && !onlyDropsMembers(c.wire, withoutUndefinedMembers(c.parsed))
        ? 'the input schema changes the arguments the permit binds'
        : undefined,
    c.pin,
  );
  return refused ?? (await invoke());
}

/**
 * The refusal of a call whose permit (in `_meta`) does not verify against `name` and `args` as received
 * (docs/permits.md; its `jti` claimed when it does), or whose `shapeCheck` names a reason, or that names
 * the pin of another definition of the tool than `pin` (its `tool_pin` claim, CONTRACT section 16); else
 * undefined.
 */
export async function permitRefusal(
  pep: Pep,
  verifier: PermitVerifier,
  name: string,
  args: unknown,
  meta: unknown,
  shapeCheck?: () => string | undefined,
  pin?: string | undefined,
): Promise<ToolResult | undefined> {
  const permit = isObject(meta) ? meta[PERMIT_META_KEY] : undefined;
  if (typeof permit !== 'string' || permit === '') {
    return failedClosed(pep, name, 'permit_invalid', 'no permit in params._meta');
  }
  if (!isObject(args)) return failedClosed(pep, name, 'permit_invalid', 'arguments are not an object');
  const why = shapeCheck?.();
  if (why !== undefined) return failedClosed(pep, name, 'permit_invalid', why);
  try {
    const claims = await verifier.verify(permit, { tool: name, args });
    const named = claims.tool_pin;
    if (pin !== undefined && typeof named === 'string' && named !== pin) {
      return failedClosed(pep, name, 'permit_invalid', 'the permit was decided against another definition of the tool');
    }
    return undefined;
  } catch (err) {
    const code = isObject(err) && typeof err.code === 'string' ? err.code : 'error';
    return failedClosed(pep, name, 'permit_invalid', `permit failed verification (${code})`);
  }
}

/** What a guarded call needs. */
export interface RunnerDeps {
  pep: Pep;
  verifier: PermitVerifier | undefined;
  /** The server's `session` option, else undefined (`params._meta['agent-pep/session']`). */
  session: SessionOfRequest | undefined;
  /** The pin of a tool's definition as the server lists it now (checked against a permit's `tool_pin`). */
  pinOf?: ((tool: RegisteredTool, name: string) => string | undefined) | undefined;
  /** The args as the tool's input schema parses them (the SDK's own parse), throwing when they do not fit. */
  parse(tool: RegisteredTool, args: unknown): Promise<unknown>;
  /**
   * Signs and checks the `requestState` of the `InputRequiredResult` an ESCALATE is answered with, to a client
   * at revision 2026-07-28 that declared elicitation (2.x); undefined: ESCALATE is a hold.
   */
  states?: RequestStates | undefined;
}

/** The answers of the runner for a retry whose `requestState` of the guard's failed verification. */
const invalidStateAnswers = new WeakSet<object>();

/** Whether `answer` is the runner's refusal of a `requestState` (the caller answers -32602). */
export function isInvalidStateAnswer(answer: unknown): boolean {
  return isObject(answer) && invalidStateAnswers.has(answer);
}

/** What the 2.x SDK tells of a request at revision 2026-07-28: its raw `requestState` and whether to ask. */
export function roundOf(extra: unknown): { state: unknown; asks: boolean } {
  const req = isObject(extra) && isObject(extra.mcpReq) ? extra.mcpReq : undefined;
  if (req === undefined) return { state: undefined, asks: false };
  let state: unknown;
  try {
    state = typeof req.requestState === 'function' ? (req.requestState as () => unknown)() : undefined;
  } catch {
    state = undefined;
  }
  const envelope = isObject(req.envelope) ? req.envelope : {};
  const asks =
    isModernRevision(envelope[PROTOCOL_VERSION_META]) && declaresElicitation(envelope[CLIENT_CAPABILITIES_META]);
  return { state, asks };
}

/** A retry whose `requestState` of the guard's failed verification: observed, and marked for a -32602. */
export function invalidState(pep: Pep, name: string): Record<string, unknown> {
  const answer = failedClosed(
    pep,
    name,
    'invalid_request',
    'the requestState failed verification (tampered, expired, or for another call)',
  );
  invalidStateAnswers.add(answer);
  return answer;
}

/** One `tools/call` the guard serves: the tool, the name it was called by, and what the request carried. */
export interface ToolCall {
  tool: RegisteredTool;
  /** The tool's name as called (the key of the `tools` record it was found under). */
  name: string;
  /** The tool's callback (`handler`), called as the SDK calls it. */
  callback: Callback;
  /** The args as the input schema parsed them (undefined without a schema). */
  parsed: unknown;
  /** The SDK's `extra` / `ctx` of the request, handed to the callback. */
  extra: unknown;
  /** What the request carried. */
  received: Received;
}

/** What an ESCALATE of a call can be answered with: the states that sign, and what they bind. */
interface Approval {
  states: RequestStates;
  bound: Omit<StateClaims, 'escalationId'>;
}

/**
 * The approval round of a call at revision 2026-07-28 (2.x): `'invalid'` when the request echoes a state of
 * the guard's that fails verification (tampered, expired, or for another tool, args or session); else what
 * an ESCALATE is answered with when the client can be asked (it declared elicitation), or undefined (a hold).
 */
function approvalRound(
  deps: RunnerDeps,
  extra: unknown,
  call: { tool: string; args: unknown; session: string },
): Approval | 'invalid' | undefined {
  const states = deps.states;
  if (states === undefined) return undefined;
  const round = roundOf(extra);
  const bound = { tool: call.tool, argsHash: argsHashOf(call.args), session: call.session };
  if (isGuardState(round.state) && !states.verify(round.state, bound)) return 'invalid';
  return round.asks ? { states, bound } : undefined;
}

/** Makes the guarded call of a server's tools. */
export function makeRunner(deps: RunnerDeps): (call: ToolCall) => Promise<unknown> {
  const { pep, verifier, parse } = deps;
  /** One guarded call of the tool's callback. */
  return async function run(call: ToolCall): Promise<unknown> {
    const { tool, name, callback, parsed, extra, received } = call;
    const hasSchema = Boolean(tool.inputSchema);
    let bodyRan = false;
    // Set once the call is decided on a request that can be asked for an approval (2026-07-28, elicitation).
    let held: Approval | undefined;
    try {
      // The arguments as received (what the client's PDP decided on).
      const wire = received.arguments ?? {};
      const meta = received._meta;
      // The SDK calls `callback(parsedArgs, extra)` with an input schema, `callback(extra)` without one.
      const invoke = (args: unknown): unknown => {
        bodyRan = true;
        return hasSchema ? callback(args, extra) : callback(extra);
      };

      if (verifier !== undefined) {
        const pin = deps.pinOf?.(tool, name);
        return await runVerified({ pep, verifier, name, meta, wire, parsed, hasSchema, pin }, () => invoke(parsed));
      }

      // The application's session (CONTRACT section 16): from the request, never the transport's id.
      const session = requestSession(deps.session, 'tools/call', { name, arguments: wire, _meta: meta }, extra);
      if (session === undefined) {
        return noSession(pep, name, 'extra');
      }
      const callOpts: CallOptions = { session };
      const signal = signalOf(extra);
      if (signal !== undefined) callOpts.signal = signal;
      // The PDP decides on the args the callback would get: as the input schema parsed them (its
      // coercions and defaults applied, its `undefined` members left out as JSON does), not as sent.
      // A schema that makes something other than an object of the arguments: nothing a permit can bind.
      if (hasSchema && !(isObject(parsed) && isPlainObject(parsed))) {
        return failedClosed(pep, name, 'invalid_request', 'the input schema does not make an object of the arguments');
      }
      const decided = hasSchema && isObject(parsed) ? withoutUndefinedMembers(parsed) : wire;
      const approval = approvalRound(deps, extra, { tool: name, args: decided, session });
      if (approval === 'invalid') return invalidState(pep, name);
      held = approval;
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
              args = await parse(tool, effective);
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
      if (err instanceof PolicyEnforcementError) {
        return (held && approvalRequest(err, held.states, held.bound)) ?? refusal(err.toolMessage);
      }
      if (err instanceof SchemaRefusal) {
        return failedClosed(pep, name, 'invalid_request', 'the arguments to run do not fit the input schema');
      }
      if (bodyRan) throw err;
      return failedClosed(pep, name, 'invalid_request', 'the adapter failed');
    }
  };
}

/** The abort signal of a request's `extra` (1.x `extra.signal`, 2.x `ctx.mcpReq.signal`), else undefined. */
function signalOf(extra: unknown): AbortSignal | undefined {
  if (!isObject(extra)) return undefined;
  const signal = isObject(extra.mcpReq) ? extra.mcpReq.signal : extra.signal;
  return signal instanceof AbortSignal ? signal : undefined;
}
