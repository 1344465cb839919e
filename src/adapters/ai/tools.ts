/**
 * `guardTools` and `pepToolApproval` for the Vercel AI SDK (`ai` 6.x and 7.x): each tool body runs only
 * inside `pep.guardTool`, and ESCALATE goes through the SDK's tool approval (docs/adapters.md).
 * Structural types only: no value is imported from `ai`, so one adapter serves both majors.
 * @internal
 */
import type { PolicyDecision } from '../../decision.js';
import { PolicyBlockedError, PolicyEnforcementError, toolMessage } from '../../errors.js';
import { deepStrictEqual as isDeepStrictEqual } from '../../internal/equal.js';
import type { CallOptions } from '../../options/pep.js';
import type { Pep, ToolExecutionContext } from '../../pep.js';
import { type Enforcement, enforcementOf, MAX_HELD, RULES, readOptions, TextMemory } from '../kit.js';
import { registerHideBlocked } from './visible.js';

/** Options of {@link guardTools}. */
export interface GuardToolsOptions {
  /**
   * The session sent with every decision of these tools (the AI SDK has no conversation id of its own).
   * @defaultValue the client's `session`
   */
  session?: string;
  /**
   * Check each tool result at `context_egress` (with the tool's name) before the model sees it, as
   * `guardTool`'s `checkResult` does: WARN replaces the result with the PDP's text, BLOCK or ESCALATE
   * withhold it. @defaultValue false
   */
  checkResult?: boolean;
  /**
   * Map ESCALATE to the SDK's tool approval: each tool gets a `needsApproval` that asks the PDP with
   * `{ simulated: true }` first (so every call is decided twice: that check, then the real one). With
   * `false` there is one decision per call and an ESCALATE is a hold the model is told about (the
   * `is held for human review` text); the tool's own `needsApproval` still applies. @defaultValue true
   */
  approval?: boolean;
  /**
   * Offer the model only the tools the policy shows (docs/visibility.md): pass `pepPrepareStep(tools)`
   * as `prepareStep`, which asks `pep.visibleTools` once per step and sets `activeTools`. A hidden tool
   * called anyway is still decided per call. @defaultValue false
   */
  hideBlocked?: boolean;
}

/** Options of {@link pepToolApproval}. */
export interface PepToolApprovalOptions {
  /** The session of the approval checks; give the same one as to {@link guardTools}. @defaultValue the client's */
  session?: string;
}

/**
 * What a guarded tool body finds in its second argument besides the SDK's own options: the verified
 * permit to present to the side-effecting service, and the decision (ALLOW or WARN).
 */
export interface PermitContext {
  /** The verified permit (a compact JWS), `undefined` only with `permits: false`. */
  permitId: string | undefined;
  /** The PDP's ALLOW or WARN. */
  decision: PolicyDecision;
}

/** The answer of a 7.x `toolApproval` function (a subset of the SDK's `ToolApprovalStatus`). */
export type PepToolApprovalStatus = 'not-applicable' | 'user-approval' | { type: 'denied'; reason: string };

/** What a 7.x generic `toolApproval` function receives (the fields this adapter reads). */
export interface PepToolApprovalRequest {
  toolCall: { toolName: string; toolCallId: string; input: unknown };
  tools?: Record<string, unknown> | undefined;
  messages?: readonly unknown[] | undefined;
}

type NeedsApproval = boolean | ((input: unknown, options: ApprovalOptions) => boolean | PromiseLike<boolean>);
interface ApprovalOptions {
  toolCallId: string;
  messages: readonly unknown[];
  [key: string]: unknown;
}
interface ToolLike {
  execute?: (input: unknown, options: Record<string, unknown>) => unknown;
  needsApproval?: NeedsApproval;
  [key: string]: unknown;
}

/** The guarded tool objects, with the name and session they decide under (for {@link pepToolApproval}). */
const GUARDED = new WeakMap<
  object,
  { name: string; session: string | undefined; original: ToolLike; held: TextMemory<HeldCall> }
>();

/**
 * The error a guarded tool throws instead of running its body: its message (and `toString()`, which
 * `ai` 7 shows) is exactly the `toolMessage`, so the model reads the `toolMessage` text as the tool error.
 */
function forModel(err: PolicyEnforcementError): PolicyEnforcementError {
  const text = err.toolMessage;
  Object.defineProperty(err, 'message', { value: text, configurable: true, writable: true });
  Object.defineProperty(err, 'toString', { value: () => text, configurable: true, writable: true });
  return err;
}

/** A refusal of the adapter itself (the body has not run): observed like any synthesized BLOCK. */
function adapterRefusal(enforcement: Enforcement, name: string, why: string, cause?: unknown): PolicyEnforcementError {
  const r = enforcement.refuse({ stage: 'action', tool: name }, 'invalid_request', why, cause);
  return forModel(new PolicyBlockedError(r.decision, name, cause !== undefined ? { cause } : undefined));
}

/**
 * True when `value` fits the tool's input schema as the SDK reads it (a Standard Schema such as zod, a
 * zod 3 schema, or the SDK's own `jsonSchema()`/`zodSchema()` object with a validator). A schema with no
 * validator (a bare `jsonSchema()`) is not checked here either, as the SDK does not check it; a
 * validator that throws means "does not fit".
 * @internal
 */
export async function fitsInputSchema(schema: unknown, value: unknown): Promise<boolean> {
  if ((typeof schema !== 'object' && typeof schema !== 'function') || schema === null) return true;
  try {
    const standard = (schema as { '~standard'?: { validate?: unknown } })['~standard'];
    if (typeof standard?.validate === 'function') {
      const result = (await standard.validate(value)) as { issues?: unknown } | null;
      return typeof result === 'object' && result !== null && result.issues === undefined;
    }
    const safeParse = (schema as { safeParse?: unknown }).safeParse;
    if (typeof safeParse === 'function') {
      return (safeParse.call(schema, value) as { success?: unknown } | null)?.success === true;
    }
    const validate = (schema as { validate?: unknown }).validate;
    if (typeof validate === 'function') {
      return ((await validate.call(schema, value)) as { success?: unknown } | null)?.success === true;
    }
    return true;
  } catch {
    return false;
  }
}

function isAsyncIterable(v: unknown): v is AsyncIterable<unknown> {
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
  );
}

/**
 * True when `messages` hold a human approval request for this tool call: the run is resuming after the
 * SDK asked a person (an automatic 7.x approval does not count).
 * @internal
 */
export function wasSentForApproval(messages: unknown, toolCallId: unknown): boolean {
  if (!Array.isArray(messages) || typeof toolCallId !== 'string') return false;
  for (const message of messages) {
    const m = message as { role?: unknown; content?: unknown } | null;
    if (m?.role !== 'assistant' || !Array.isArray(m.content)) continue;
    const content: unknown[] = m.content;
    for (const part of content) {
      const p = part as { type?: unknown; toolCallId?: unknown; isAutomatic?: unknown } | null;
      if (p?.type === 'tool-approval-request' && p.toolCallId === toolCallId && p.isAutomatic !== true) return true;
    }
  }
  return false;
}

/** The tool's own `needsApproval`, as the SDK reads it. */
async function ownApproval(tool: ToolLike, input: unknown, options: ApprovalOptions): Promise<boolean> {
  const own = tool.needsApproval;
  if (typeof own === 'function') return (await own.call(tool, input, options)) === true;
  return own === true;
}

/** Sets an own property (a key such as `__proto__` stays a key, never the prototype). */
function define(target: Record<string, object>, key: string, value: object): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function callOptions(session: string | undefined, signal: unknown, simulated?: true): CallOptions {
  const o: CallOptions = {};
  if (session !== undefined) o.session = session;
  if (signal instanceof AbortSignal) o.signal = signal;
  if (simulated) o.simulated = true;
  return o;
}

/**
 * Wraps every tool of an AI SDK tool set so that its body runs only after an ALLOW or WARN whose permit
 * verifies, and an ESCALATE goes through the SDK's tool approval.
 *
 * Each tool's `execute` is run through `pep.guardTool` under its key in the set (the name the model
 * calls), so interceptors (a `substitute` included), permit verification, `after` interceptors and the
 * optional result check all apply; WARN runs the body with the PDP's `transformedArgs`. The body gets the
 * SDK's options plus `permitId` and `decision` ({@link PermitContext}), and the SDK's `abortSignal` ends
 * the decision. Each tool also gets a `needsApproval` that asks the PDP with `{ simulated: true }` (no
 * permit minted, no approval used up) and answers true on ESCALATE, so the SDK pauses with a
 * `tool-approval-request`; when the run resumes approved, `execute` asks the PDP again for the identical
 * call and runs the body only on an ALLOW whose permit verifies.
 *
 * The same kind of thing as `agent-pep/openai-agents`' `guardTools`, for the AI SDK's tool set (an
 * object keyed by tool name) rather than an array (docs/adapters.md "Names two entries share").
 *
 * @param pep - the client that decides (made with `permits` configured, or `permits: false` explicitly)
 * @param tools - the tool set as passed to `generateText`/`streamText` (`{ name: tool({...}) }`)
 * @param opts - `{ session?, checkResult?, approval?, hideBlocked? }` ({@link GuardToolsOptions})
 * @returns a new tool set with the same keys and types; tools without `execute` are kept as they are
 * @throws TypeError when `tools` is not an object, an option is unknown or bad (`err.option` names it),
 *   a key is not a valid tool name, or `pep` has no `permits` configured (unless `permits: false`)
 * @remarks Fails closed: on BLOCK, ESCALATE, a permit that fails, a PDP that is down, slow or unclear,
 * or any error of the adapter, the body does not run; the tool throws a {@link PolicyEnforcementError}
 * whose message is the `toolMessage` (docs/adapters.md), which the model receives as the tool's error result
 * (`ERROR: Tool '<name>' denied by policy: ...`, `... was not run: ...`, `... is held for human review: ...`).
 * An approval in the host never bypasses the PDP. A tool result that is an async iterable (preliminary
 * results) is read to its end and only its last value is returned, after the checks.
 * @example
 * ```ts
 * const tools = guardTools(pep, {
 *   refund_payment: tool({ inputSchema: z.object({ amount: z.number() }), execute: async ({ amount }) => refund(amount) }),
 * });
 * const result = await generateText({ model, tools, prompt: 'Refund order 1842', stopWhen: stepCountIs(5) });
 * ```
 */
export function guardTools<TOOLS extends Record<string, object>>(
  pep: Pep,
  tools: TOOLS,
  opts: GuardToolsOptions = {},
): TOOLS {
  const enforcement = enforcementOf(pep, 'guardTools');
  if (typeof tools !== 'object' || tools === null || Array.isArray(tools)) {
    throw new TypeError('guardTools: tools must be an object of tools');
  }
  const o = readOptions<GuardToolsOptions>('guardTools', opts, {
    session: RULES.session,
    checkResult: RULES.boolean,
    approval: RULES.boolean,
    hideBlocked: RULES.boolean,
  });
  const set: ToolSet = {
    pep,
    enforcement,
    session: o.session,
    approval: o.approval ?? true,
    guardOptions: o.checkResult ? { checkResult: true as const } : {},
    held: heldCalls(pep),
  };
  const out: Record<string, object> = {};
  for (const name of Object.keys(tools)) {
    const tool = tools[name] as ToolLike;
    if (typeof tool !== 'object' || tool === null || typeof tool.execute !== 'function') {
      define(out, name, tool as object);
      continue;
    }
    // Made once now so that a bad name or a client without permits is a TypeError here, not at first call.
    pep.guardTool(name, () => undefined, set.guardOptions);
    const guardedTool = {
      ...tool,
      execute: guardedExecute(set, name, tool),
      needsApproval: approvalCheck(set, name, tool),
    };
    GUARDED.set(guardedTool, { name, session: set.session, original: tool, held: set.held });
    define(out, name, guardedTool);
  }
  return registerHideBlocked(out, pep, set.session, o.hideBlocked === true) as TOOLS;
}

/** The calls each client's tool sets sent for approval (a tool set made again for the resumed run shares them). */
const HELD = new WeakMap<object, TextMemory<HeldCall>>();

function heldCalls(pep: Pep): TextMemory<HeldCall> {
  let held = HELD.get(pep);
  if (held === undefined) {
    held = new TextMemory<HeldCall>(MAX_HELD);
    HELD.set(pep, held);
  }
  return held;
}

/** A call this tool set sent for approval: the only calls a resumed approval may run. */
interface HeldCall {
  name: string;
  input: unknown;
}

/** What the tools of one `guardTools` set share. */
interface ToolSet {
  pep: Pep;
  enforcement: Enforcement;
  session: string | undefined;
  approval: boolean;
  guardOptions: { checkResult?: true };
  held: TextMemory<HeldCall>;
}

/**
 * True when a resumed approval is for a call this client's tool sets held (same id, tool and input). A call in the chat history that the model did not propose in a
 * step this adapter saw (a client-forged assistant call with an approval) matches nothing.
 */
function wasHeld(held: TextMemory<HeldCall>, toolCallId: unknown, name: string, input: unknown): boolean {
  if (typeof toolCallId !== 'string') return false;
  const call = held.get(toolCallId);
  // Kept after use: resumed again, the PDP decides again (its approval is used once).
  return call !== undefined && call.name === name && isDeepStrictEqual(call.input, input);
}

/** The guarded `execute` of one tool: the body runs only inside `pep.guardTool`. */
function guardedExecute(set: ToolSet, name: string, tool: ToolLike) {
  const body = tool.execute as NonNullable<ToolLike['execute']>;
  const { pep, enforcement } = set;
  return async (input: unknown, options: Record<string, unknown>): Promise<unknown> => {
    let bodyRan = false;
    try {
      // A resumed approval runs only a call this adapter held: never one forged into the history.
      if (
        wasSentForApproval(options?.messages, options?.toolCallId) &&
        !wasHeld(set.held, options?.toolCallId, name, input)
      ) {
        throw adapterRefusal(enforcement, name, 'the approval matches no call this adapter held');
      }
      const run = async (args: Record<string, unknown>, ctx: ToolExecutionContext): Promise<unknown> => {
        // The SDK validated the model's input; args the PDP (WARN) or an interceptor changed must fit too.
        if (!isDeepStrictEqual(args, input) && !(await fitsInputSchema(tool.inputSchema, args))) {
          throw adapterRefusal(enforcement, name, "the args to run do not fit the tool's input schema");
        }
        bodyRan = true;
        const result = await body.call(tool, args, { ...options, permitId: ctx.permitId, decision: ctx.decision });
        if (!isAsyncIterable(result)) return result;
        let last: unknown;
        for await (const value of result) last = value;
        return last;
      };
      const guarded = pep.guardTool(name, run, set.guardOptions);
      return await guarded(input as Record<string, unknown>, callOptions(set.session, options?.abortSignal));
    } catch (err) {
      if (err instanceof PolicyEnforcementError) throw forModel(err);
      if (bodyRan) throw err; // the tool's own error, as the SDK would show it
      throw adapterRefusal(enforcement, name, 'the adapter failed before the tool could run', err);
    }
  };
}

/** The `needsApproval` of one tool: the tool's own rule, then a simulated PDP check (ESCALATE asks a person). */
function approvalCheck(set: ToolSet, name: string, tool: ToolLike) {
  return async (input: unknown, options: ApprovalOptions): Promise<boolean> => {
    // Resuming after a person approved: keep it approved, so that execute asks the PDP for real.
    if (wasSentForApproval(options?.messages, options?.toolCallId)) return true;
    const hold = (): true => {
      if (typeof options?.toolCallId === 'string') set.held.set(options.toolCallId, { name, input });
      return true;
    };
    // The tool's own rule first; its errors are the SDK's to handle (it rejects, nothing runs).
    if (await ownApproval(tool, input, options)) return hold();
    if (!set.approval) return false;
    try {
      const d = await set.pep.authorizeAction(
        name,
        input as Record<string, unknown>,
        callOptions(set.session, undefined, true),
      );
      return d.verdict === 'ESCALATE' ? hold() : false;
    } catch {
      // unreachable (stage methods never reject); execute still decides, and fails closed
      return false;
    }
  };
}

/**
 * A generic `toolApproval` function for `ai` 7.x `generateText`/`streamText`, so that a BLOCK reaches the
 * model as the SDK's own `execution-denied` result (no person asked) and an ESCALATE as a
 * `tool-approval-request`.
 *
 * For a tool made by {@link guardTools} it asks the PDP with `{ simulated: true }` (no permit minted, no
 * approval used up): ESCALATE gives `'user-approval'`; a BLOCK (PDP, interceptor or synthesized) gives
 * `{ type: 'denied', reason: toolMessage }`; ALLOW, WARN and an interceptor's `substitute` give
 * `'not-applicable'` (the guarded `execute` then decides for real). On a resumed, approved call it
 * answers `'denied'` only on a BLOCK, else lets the guarded `execute` ask the PDP again. A tool that
 * `guardTools` did not make keeps its own `needsApproval`.
 *
 * @param pep - the client that decides (the same as given to {@link guardTools})
 * @param opts - `{ session? }`: the same session as given to {@link guardTools}
 * @returns `({ toolCall, tools, messages }) => Promise<PepToolApprovalStatus>`, to pass as `toolApproval`
 * @throws TypeError on an unknown or bad option (`err.option` names it)
 * @remarks It never approves anything: the guarded `execute` still asks the PDP and verifies the permit
 * before the body runs. Its own errors answer `'user-approval'` for a guarded tool (a person is asked,
 * and the PDP still decides after), never `'not-applicable'`. With 6.x, `guardTools`' `needsApproval`
 * does the approval part and a BLOCK reaches the model as the tool's error result.
 * @example
 * ```ts
 * const tools = guardTools(pep, { refund_payment });
 * await generateText({ model, tools, toolApproval: pepToolApproval(pep), prompt, stopWhen: isStepCount(5) });
 * ```
 */
export function pepToolApproval(
  pep: Pep,
  opts: PepToolApprovalOptions = {},
): (request: PepToolApprovalRequest) => Promise<PepToolApprovalStatus> {
  if (typeof pep?.authorizeAction !== 'function') {
    throw new TypeError('pepToolApproval: pep must be a client from createPep');
  }
  const { session } = readOptions<PepToolApprovalOptions>('pepToolApproval', opts, { session: RULES.session });
  return async (request) => {
    const tool = request?.tools?.[request?.toolCall?.toolName] as ToolLike | undefined;
    const info = typeof tool === 'object' && tool !== null ? GUARDED.get(tool) : undefined;
    const { toolCall, messages } = request;
    const options: ApprovalOptions = { toolCallId: toolCall.toolCallId, messages: messages ?? [] };
    if (info === undefined) {
      // not ours: the tool's own needsApproval, as the SDK would read it (its errors are the SDK's)
      if (typeof tool !== 'object' || tool === null) return 'not-applicable';
      return (await ownApproval(tool, toolCall.input, options)) ? 'user-approval' : 'not-applicable';
    }
    try {
      const resumed = wasSentForApproval(messages, toolCall.toolCallId);
      const hold = (): 'user-approval' => {
        info.held.set(toolCall.toolCallId, { name: info.name, input: toolCall.input });
        return 'user-approval';
      };
      if (!resumed && (await ownApproval(info.original, toolCall.input, options))) return hold();
      const d = await pep.authorizeAction(
        info.name,
        toolCall.input as Record<string, unknown>,
        callOptions(info.session ?? session, undefined, true),
      );
      if (d.verdict === 'BLOCK' && d.substitute === undefined) {
        return { type: 'denied', reason: toolMessage(d, info.name) };
      }
      if (!resumed && d.verdict === 'ESCALATE') return hold();
      return 'not-applicable';
    } catch {
      return 'user-approval';
    }
  };
}
