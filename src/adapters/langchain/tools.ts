/**
 * The action stage of the LangChain adapter: `wrapToolCall` runs the real tool only inside
 * `pep.guardTool` (ALLOW or WARN whose permit verifies, with the effective args), answers a blocked
 * call with an error `ToolMessage` carrying the denial text, and turns ESCALATE into a graph interrupt
 * whose resume asks the PDP again (docs/adapters.md "LangChain"). The args decided are planned in
 * `args.ts`.
 * @internal
 */
import { isDeepStrictEqual } from 'node:util';
import { ToolMessage } from '@langchain/core/messages';
import type { StructuredTool } from '@langchain/core/tools';
import { type Command, getConfig, interrupt, isCommand, isGraphInterrupt } from '@langchain/langgraph';
import type { ToolCallHandler, ToolCallRequest } from 'langchain';
import { PolicyEnforcementError, PolicyEscalatedError } from '../../errors.js';
import { randomUUID } from '../../internal/runtime.js';
import type { CallOptions } from '../../options/pep.js';
import type { Pep } from '../../pep.js';
import { type Enforcement, MAX_HELD, PERMIT_META_KEY, resultText, TextMemory } from '../kit.js';
import { type ArgsPlan, planArgs, SchemaChanges, toolArgsFor } from './args.js';
import {
  interruptValue,
  isReviewResume,
  type PepInterruptValue,
  readReviewAnswer,
  reviewRefusalText,
} from './review.js';
import { SeenMessages } from './seen.js';

/** The tool call a guarded tool receives as `config.toolCall`: LangChain's, plus the verified permit. */
export type PepToolCall = ToolCallRequest['toolCall'] & { 'agent-pep/permit'?: string | undefined };

/** What the tool side needs from the middleware. */
export interface ToolSide {
  pep: Pep;
  enforcement: Enforcement;
  seen: SeenMessages;
  session(configurable: unknown): string | undefined;
}

/** A tool's own failure, kept apart from the adapter's so the framework handles it as it would without us. */
class ToolFailure {
  constructor(readonly error: unknown) {}
}

/** The LangGraph scratchpad of the running task, read only (undefined outside a graph or in another version). */
function scratchpad(): { interruptCounter?: unknown; resume?: unknown; nullResume?: unknown } | undefined {
  try {
    const conf = getConfig()?.configurable as Record<string, unknown> | undefined;
    const pad = conf?.__pregel_scratchpad;
    return typeof pad === 'object' && pad !== null ? (pad as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** True when interrupts can work here: inside a graph run with a checkpointer. */
function canInterrupt(): boolean {
  try {
    const conf = getConfig()?.configurable as Record<string, unknown> | undefined;
    return conf?.__pregel_checkpointer !== undefined && conf.__pregel_checkpointer !== null;
  } catch {
    return false;
  }
}

/**
 * True when the next `interrupt()` of this task will return a review resume (`{ decisions }`) instead
 * of throwing: the task is being resumed. Read without consuming anything.
 */
function reviewResumePending(): boolean {
  const pad = scratchpad();
  if (!pad) return false;
  const next = typeof pad.interruptCounter === 'number' ? pad.interruptCounter + 1 : 0;
  const resume = Array.isArray(pad.resume) ? pad.resume : [];
  const value = next < resume.length ? resume[next] : pad.nullResume;
  return isReviewResume(value);
}

/**
 * Builds the `wrapToolCall` hook.
 * @internal
 */
export function makeWrapToolCall(side: ToolSide) {
  /** Held calls of this process, by session and tool call id, with the value they interrupted with. */
  const held = new TextMemory<PepInterruptValue>(MAX_HELD);
  return (request: ToolCallRequest, handler: ToolCallHandler): Promise<ToolMessage | Command> =>
    wrapToolCall(toolCallOf(side, held, request, handler));
}

/** One tool call as the hook sees it: what it needs to decide, run and answer it. */
interface ToolCall {
  side: ToolSide;
  held: TextMemory<PepInterruptValue>;
  request: ToolCallRequest;
  handler: ToolCallHandler;
  call: ToolCallRequest['toolCall'];
  name: string;
  toolCallId: string;
  sessionKey: string;
  /** The key of this call among the held ones: session and tool call id. */
  heldKey: string;
  opts: CallOptions;
}

function toolCallOf(
  side: ToolSide,
  held: TextMemory<PepInterruptValue>,
  request: ToolCallRequest,
  handler: ToolCallHandler,
): ToolCall {
  const call = request.toolCall;
  const toolCallId = typeof call?.id === 'string' ? call.id : '';
  const session = side.session(request.runtime?.configurable);
  const opts: CallOptions = {};
  if (session !== undefined) opts.session = session;
  const signal = request.runtime?.signal;
  if (signal !== undefined) opts.signal = signal;
  return {
    side,
    held,
    request,
    handler,
    call,
    name: typeof call?.name === 'string' ? call.name : '',
    toolCallId,
    sessionKey: session ?? '',
    heldKey: `${session ?? ''}\u0000${toolCallId}`,
    opts,
  };
}

/** An error `ToolMessage` the adapter wrote (so the egress check does not send our own text out). */
function denial(tc: ToolCall, content: string, own = true): ToolMessage {
  const id = randomUUID();
  // Text the adapter wrote is not sent out again; text that carries a reviewer's own words is (own: false).
  if (own) tc.side.seen.set(SeenMessages.key(tc.sessionKey, id), { kind: 'pass', text: SeenMessages.digest(content) });
  return new ToolMessage({ id, content, tool_call_id: tc.toolCallId, name: tc.name, status: 'error' });
}

/** A call the adapter refuses itself: not run, the `was not run` text with `invalid_request` (observed). */
function refused(tc: ToolCall, why: string): ToolMessage {
  const site = { stage: 'action' as const, tool: tc.name || 'unknown' };
  return denial(tc, tc.side.enforcement.refuse(site, 'invalid_request', why).toolMessage);
}

async function wrapToolCall(tc: ToolCall): Promise<ToolMessage | Command> {
  try {
    const resumed = resumeHeld(tc);
    if (resumed.kind === 'answered') return resumed.message;
    const plan = await planArgs(tc.request.tool, tc.call.args);
    if (plan.kind === 'refused') return refused(tc, plan.why);
    if (plan.kind === 'unfit') return await runUnfit(tc, plan.tool);
    return await runGuarded(tc, plan, resumed.kind === 'approved');
  } catch (err) {
    if (err instanceof ToolFailure) throw err.error; // the tool's own error: the framework's to handle
    if (isGraphInterrupt(err)) throw err;
    // Any error of the adapter itself: the tool did not run (or its output is withheld).
    return refused(tc, 'adapter error');
  }
}

/**
 * A call resumed after a hold: the reviewer's answer comes back from `interrupt()` (which throws again
 * without one). `approved` asks the PDP again; a rejection or an unreadable answer is the call's
 * denial; `new` is a call that was not held.
 */
function resumeHeld(tc: ToolCall): { kind: 'new' } | { kind: 'approved' } | { kind: 'answered'; message: ToolMessage } {
  const { held, heldKey, call, name, toolCallId } = tc;
  // A held value describes one call: a later call that reuses the id (with other args) is a new call.
  const remembered = held.get(heldKey);
  const request0 = remembered?.actionRequests[0];
  const waiting =
    remembered !== undefined && request0?.name === name && isDeepStrictEqual(request0.args, call.args)
      ? remembered
      : undefined;
  if (remembered !== undefined && waiting === undefined) held.delete(heldKey);
  if (toolCallId === '' || (waiting === undefined && !reviewResumePending())) return { kind: 'new' };
  const answer = readReviewAnswer(interrupt(waiting ?? { agentPep: true, toolCallId }));
  held.delete(heldKey);
  if (answer.kind === 'approve') return { kind: 'approved' };
  const withMessage = answer.kind === 'reject' && answer.message !== undefined && answer.message !== '';
  return { kind: 'answered', message: denial(tc, reviewRefusalText(name, answer), !withMessage) };
}

/**
 * The model's args do not fit: the tool refuses them with its own error (the model can retry). Its body
 * is swapped out, so that a parse that passes this time runs nothing undecided.
 */
async function runUnfit(tc: ToolCall, refusing: StructuredTool): Promise<ToolMessage | Command> {
  try {
    return await tc.handler({ ...tc.request, tool: refusing as typeof tc.request.tool });
  } catch (error) {
    if (error instanceof SchemaChanges) return refused(tc, 'schema changes args');
    throw new ToolFailure(error); // the tool's own error: the framework's to handle
  }
}

/**
 * The call decided and run through `pep.guardTool`: the tool runs (reading its permit at
 * `config.toolCall['agent-pep/permit']`) only on an ALLOW or WARN whose permit verifies. ESCALATE, when
 * the graph can be interrupted, holds the call for a reviewer; any other refusal is the call's denial.
 */
async function runGuarded(
  tc: ToolCall,
  plan: Exclude<ArgsPlan, { kind: 'refused' | 'unfit' }>,
  approved: boolean,
): Promise<ToolMessage | Command> {
  const decided = plan.kind === 'parsed' ? plan.decided : tc.call.args;
  const run: { ran: boolean; produced?: ToolMessage | Command } = { ran: false };
  const guarded = tc.side.pep.guardTool(tc.name, async (args, ctx) => {
    const toolArgs = await toolArgsFor(plan, decided, tc.call.args, args);
    run.ran = true;
    const toolCall = { ...tc.call, args: toolArgs, [PERMIT_META_KEY]: ctx.permitId } as PepToolCall;
    let out: ToolMessage | Command;
    try {
      out = await tc.handler({ ...tc.request, toolCall });
    } catch (error) {
      throw new ToolFailure(error);
    }
    run.produced = out;
    return ToolMessage.isInstance(out) ? out.content : out;
  });
  let result: unknown;
  try {
    result = await guarded(decided as Record<string, unknown>, tc.opts);
  } catch (err) {
    if (err instanceof ToolFailure) throw err;
    if (err instanceof SchemaChanges) return refused(tc, 'schema changes args');
    if (err instanceof PolicyEscalatedError && !approved && tc.toolCallId !== '' && canInterrupt()) hold(tc, err);
    if (err instanceof PolicyEnforcementError) return denial(tc, err.toolMessage);
    throw err;
  }
  return answerOf(tc, result, run.ran, run.produced);
}

/** Holds an escalated call for a reviewer: remembered, then `interrupt()` throws `GraphInterrupt`. */
function hold(tc: ToolCall, err: PolicyEscalatedError): void {
  const args = tc.call.args as Record<string, unknown>;
  const value = interruptValue(tc.name, args, tc.toolCallId, err.decision, err.toolMessage);
  tc.held.set(tc.heldKey, value);
  interrupt(value); // throws GraphInterrupt: the graph waits for a reviewer
}

/**
 * The hook's answer for a call that was guarded: an interceptor's substitute (the tool did not run) or
 * an `after` interceptor's replacement as a `ToolMessage` of its own; the tool's own message or
 * `Command` when the result is unchanged.
 */
function answerOf(
  tc: ToolCall,
  result: unknown,
  ran: boolean,
  produced: ToolMessage | Command | undefined,
): ToolMessage | Command {
  if (!ran) {
    // An interceptor's substitute: its result stands in for the tool's; the tool did not run.
    return new ToolMessage({ content: resultText(result), tool_call_id: tc.toolCallId, name: tc.name });
  }
  if (produced !== undefined && isCommand(produced)) {
    return isCommand(result)
      ? result
      : new ToolMessage({ content: resultText(result), tool_call_id: tc.toolCallId, name: tc.name });
  }
  const message = produced as ToolMessage;
  if (result === message.content) return message;
  // An `after` interceptor replaced the result.
  const replaced: ConstructorParameters<typeof ToolMessage>[0] = {
    content: resultText(result),
    tool_call_id: message.tool_call_id,
  };
  if (message.name !== undefined) replaced.name = message.name;
  if (message.status !== undefined) replaced.status = message.status;
  return new ToolMessage(replaced);
}
