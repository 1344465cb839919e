/**
 * `guardTools` for Mastra (`@mastra/core` 1.x): each tool body runs only inside `pep.guardTool`, and an
 * ESCALATE goes through Mastra's own tool-call approval (docs/adapters.md). Structural types only: no
 * value is imported from `@mastra/core`; a guarded tool is made with the constructor of the tool it
 * guards, so it belongs to the same copy of Mastra as the agent that runs it.
 * @internal
 */
import { isDeepStrictEqual } from 'node:util';
import type { PolicyDecision } from '../../decision.js';
import { PolicyBlockedError, PolicyEnforcementError, PolicyEscalatedError } from '../../errors.js';
import { sessionOf } from '../../internal/session.js';
import type { CallOptions } from '../../options/pep.js';
import type { Pep, ToolExecutionContext } from '../../pep.js';
import { fitsInputSchema } from '../ai/tools.js';
import { type Enforcement, enforcementOf, MAX_HELD, RULES, readOptions, TextMemory } from '../kit.js';

/** Options of {@link guardTools}. */
export interface GuardToolsOptions {
  /**
   * The session of a call made outside a memory thread (a run without `memory: { thread }`, or a tool
   * executed directly). Inside a thread, the session is always the thread id.
   * @defaultValue the client's `session`
   */
  session?: string;
  /**
   * Check each tool result at `context_egress` (with the tool's name) before the agent (its model,
   * memory and messages) gets it: WARN replaces the result with the PDP's text, BLOCK or ESCALATE
   * withhold it (the model reads the `toolMessage` as the tool's error). @defaultValue true
   */
  checkResult?: boolean;
  /**
   * Map ESCALATE to Mastra's tool-call approval: the run suspends with a `tool-call-approval` (as for a
   * tool with `requireApproval`), and `agent.approveToolCall`/`approveToolCallGenerate` resumes it, after
   * which the PDP is asked again. With `false`, ESCALATE is a hold the model is told about (the
   * `is held for human review` text). @defaultValue true
   */
  approval?: boolean;
}

/** What a guarded tool body finds in its context besides Mastra's own: the verified permit and the decision. */
export interface PermitContext {
  /** The verified permit (a compact JWS), `undefined` only with `permits: false`. */
  permitId: string | undefined;
  /** The PDP's ALLOW or WARN. */
  decision: PolicyDecision;
}

/** The agent part of the context Mastra gives a tool's `execute` (the fields this adapter reads). */
interface AgentContext {
  toolCallId?: unknown;
  threadId?: unknown;
  suspend?: (payload: unknown, options?: Record<string, unknown>) => Promise<unknown>;
}

interface ExecuteContext {
  agent?: AgentContext;
  abortSignal?: unknown;
  [key: string]: unknown;
}

/** A Mastra tool (from `createTool` or `new Tool`), as far as this adapter reads it. */
interface MastraTool {
  id?: unknown;
  execute?: (input: unknown, context: unknown) => Promise<unknown>;
  inputSchema?: unknown;
  needsApprovalFn?: unknown;
  [key: string]: unknown;
}

/** The marker Mastra puts on its tools (`MASTRA_TOOL_MARKER`, a registered symbol so copies agree). */
const MASTRA_TOOL = Symbol.for('mastra.core.tool.Tool');

/** A call a guarded tool suspended for approval: when it runs again, its ESCALATE is a hold. */
interface HeldCall {
  name: string;
  input: unknown;
}

/** The calls each client's tools suspended (a tool set made again for the resumed run shares them). */
const HELD = new WeakMap<object, TextMemory<HeldCall>>();

function heldCalls(pep: Pep): TextMemory<HeldCall> {
  let held = HELD.get(pep);
  if (held === undefined) {
    held = new TextMemory<HeldCall>(MAX_HELD);
    HELD.set(pep, held);
  }
  return held;
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

/** The error a guarded tool throws: its message is the `toolMessage`, which Mastra gives the model as the tool's error. */
function forModel(err: PolicyEnforcementError): PolicyEnforcementError {
  Object.defineProperty(err, 'message', { value: err.toolMessage, configurable: true, writable: true });
  return err;
}

/** A refusal of the adapter itself (the body has not run): observed like any synthesized BLOCK. */
function adapterRefusal(enforcement: Enforcement, name: string, why: string, cause?: unknown): PolicyEnforcementError {
  const r = enforcement.refuse({ stage: 'action', tool: name }, 'invalid_request', why, cause);
  return forModel(new PolicyBlockedError(r.decision, name, cause !== undefined ? { cause } : undefined));
}

function isMastraTool(tool: unknown): tool is MastraTool {
  return typeof tool === 'object' && tool !== null && (tool as Record<symbol, unknown>)[MASTRA_TOOL] === true;
}

function callOptions(session: string | undefined, signal: unknown): CallOptions {
  const o: CallOptions = {};
  if (session !== undefined) o.session = session;
  if (signal instanceof AbortSignal) o.signal = signal;
  return o;
}

/** Sets an own property (a key such as `__proto__` stays a key, never the prototype). */
function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * Wraps every tool of a Mastra tool set so that its body runs only after an ALLOW or WARN whose permit
 * verifies, and an ESCALATE suspends the run for Mastra's tool-call approval.
 *
 * Each tool's `execute` runs through `pep.guardTool` under its key in the set (the name the model
 * calls), with the input as Mastra parsed it against the tool's `inputSchema` (defaults filled in,
 * coercions made), so the PDP decides on what runs; interceptors, permit verification, `after`
 * interceptors and the result check at `context_egress` all apply, and WARN runs the body with the
 * PDP's `transformedArgs` (refused when they do not fit the tool's schema). The session of each call is
 * the agent's memory thread id (`memory: { thread }`), else `opts.session`, else the client's. The body
 * gets Mastra's context plus `permitId` and `decision` ({@link PermitContext}).
 *
 * ESCALATE suspends the run through the tool's own `suspend` with `{ requireToolApproval }`, so Mastra
 * emits a `tool-call-approval` and `generate` ends with `finishReason: 'suspended'`; resume with
 * `agent.approveToolCall({ runId, toolCallId })` (or `approveToolCallGenerate`), or decline with
 * `declineToolCall`. An approval never bypasses the PDP: the resumed call is decided again, and the body
 * runs only on an ALLOW whose permit verifies (the dev PDP grants it once its escalation was approved);
 * an ESCALATE again is a hold the model is told about. A tool's own `requireApproval` still applies
 * before any of this.
 *
 * @param pep - the client that decides (made with `permits` configured, or `permits: false` explicitly)
 * @param tools - the tools as given to `new Agent({ tools })`: `{ name: createTool({...}) }`
 * @param opts - `{ session?, checkResult?, approval? }` ({@link GuardToolsOptions})
 * @returns a new tool set with the same keys; tools without `execute` are kept as they are
 * @throws TypeError when `tools` is not an object, a value is not a Mastra tool (a Vercel AI SDK tool
 *   is guarded with `agent-pep/ai`), an option is unknown or bad (`err.option` names it), a key is not a
 *   valid tool name, or `pep` has no `permits` configured (unless `permits: false`)
 * @remarks Fails closed: on BLOCK, ESCALATE, a permit that fails, a PDP that is down, slow or unclear, or
 * any error of the adapter, the body does not run; the tool throws an error whose message is the
 * `toolMessage`, which Mastra gives the model as the tool's error result
 * (`ERROR: Tool '<name>' denied by policy: ...`). The calls sent for approval are remembered per client
 * (up to 10,000); a call resumed after the process restarted is sent for approval once more.
 * @example
 * ```ts
 * const agent = new Agent({ id: 'support', name: 'support', instructions, model, tools: guardTools(pep, { refund_payment }) });
 * const out = await agent.generate('Refund order 1842', { memory: { thread: 'th-1', resource: 'user-7' } });
 * if (out.finishReason === 'suspended') await agent.approveToolCallGenerate({ runId: out.runId, toolCallId });
 * ```
 */
export function guardTools<TOOLS extends Record<string, unknown>>(
  pep: Pep,
  tools: TOOLS,
  opts: GuardToolsOptions = {},
): TOOLS {
  const enforcement = enforcementOf(pep, 'guardTools');
  if (typeof tools !== 'object' || tools === null || Array.isArray(tools)) {
    throw new TypeError('guardTools: tools must be an object of Mastra tools');
  }
  const o = readOptions<GuardToolsOptions>('guardTools', opts, {
    session: RULES.session,
    checkResult: RULES.boolean,
    approval: RULES.boolean,
  });
  const set: ToolSet = {
    pep,
    enforcement,
    session: o.session,
    approval: o.approval ?? true,
    guardOptions: o.checkResult === false ? {} : { checkResult: true as const },
    held: heldCalls(pep),
  };
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(tools)) {
    const tool = tools[name];
    if (!isMastraTool(tool)) {
      throw new TypeError(`guardTools: '${name}' is not a Mastra tool (guard AI SDK tools with agent-pep/ai)`);
    }
    if (typeof tool.execute !== 'function') {
      define(out, name, tool);
      continue;
    }
    // Made once now so that a bad name or a client without permits is a TypeError here, not at first call.
    pep.guardTool(name, () => undefined, set.guardOptions);
    define(out, name, guardedTool(set, name, tool));
  }
  return out as TOOLS;
}

/** A tool like `tool`, made with its own class, whose `execute` is the guarded one. */
function guardedTool(set: ToolSet, name: string, tool: MastraTool): MastraTool {
  const Tool = (tool as object).constructor as new (opts: Record<string, unknown>) => MastraTool;
  const guarded = new Tool({
    ...tool,
    execute: guardedExecute(set, name, tool),
    // The body's output is checked by the tool itself; what the guard returns may be the PDP's text.
    outputSchema: undefined,
    // A suspension for approval carries the adapter's payload, not one of the tool's own schema.
    suspendSchema: undefined,
  });
  if (tool.needsApprovalFn !== undefined) guarded.needsApprovalFn = tool.needsApprovalFn;
  return guarded;
}

/** The key of a call in the held memory: its run and tool call ids (a provider may reuse call ids across runs). */
function heldKey(ctx: ExecuteContext | undefined): string | undefined {
  const id = ctx?.agent?.toolCallId;
  if (typeof id !== 'string') return undefined;
  return typeof ctx?.runId === 'string' ? `${ctx.runId}\u0000${id}` : id;
}

/** True when this call was suspended for approval before (same run, call id, tool and input): it is resuming. */
function wasHeld(held: TextMemory<HeldCall>, key: string | undefined, name: string, input: unknown): boolean {
  const call = held.get(key);
  return call !== undefined && call.name === name && isDeepStrictEqual(call.input, input);
}

/**
 * Suspends the run for Mastra's approval when this ESCALATE may be sent to a person: approval on, an
 * agent run that can suspend, and not a call that already came back approved.
 * @returns true when the run was suspended
 */
async function suspendForApproval(
  set: ToolSet,
  name: string,
  input: unknown,
  ctx: ExecuteContext | undefined,
  err: PolicyEscalatedError,
): Promise<boolean> {
  const agent = ctx?.agent;
  const key = heldKey(ctx);
  if (!set.approval || typeof agent?.suspend !== 'function' || key === undefined) return false;
  if (wasHeld(set.held, key, name, input)) return false;
  set.held.set(key, { name, input });
  const payload = { agentPep: 'escalated', escalationId: err.decision.escalationId ?? null };
  await agent.suspend(payload, { requireToolApproval: { toolName: name, args: input } });
  return true;
}

/** The guarded `execute` of one tool: the body runs only inside `pep.guardTool`. */
function guardedExecute(set: ToolSet, name: string, tool: MastraTool) {
  const body = tool.execute as NonNullable<MastraTool['execute']>;
  const { pep, enforcement } = set;
  return async (input: unknown, ctx: ExecuteContext | undefined): Promise<unknown> => {
    let bodyRan = false;
    try {
      const session = sessionOf({ thread: ctx?.agent?.threadId, adapter: set.session });
      const run = async (args: Record<string, unknown>, pctx: ToolExecutionContext): Promise<unknown> => {
        // Mastra parsed the model's input; args the PDP (WARN) or an interceptor changed must fit too.
        if (!isDeepStrictEqual(args, input) && !(await fitsInputSchema(tool.inputSchema, args))) {
          throw adapterRefusal(enforcement, name, "the args to run do not fit the tool's input schema");
        }
        bodyRan = true;
        return body.call(tool, args, { ...ctx, permitId: pctx.permitId, decision: pctx.decision });
      };
      const guarded = pep.guardTool(name, run, set.guardOptions);
      return await guarded(input as Record<string, unknown>, callOptions(session, ctx?.abortSignal));
    } catch (err) {
      if (err instanceof PolicyEscalatedError) {
        let suspended: boolean;
        try {
          suspended = await suspendForApproval(set, name, input, ctx, err);
        } catch (cause) {
          throw adapterRefusal(enforcement, name, 'the run could not be suspended for approval', cause);
        }
        if (suspended) return undefined;
      }
      if (err instanceof PolicyEnforcementError) throw forModel(err);
      if (bodyRan) throw err; // the tool's own error, as Mastra would show it
      throw adapterRefusal(enforcement, name, 'the adapter failed before the tool could run', err);
    }
  };
}
