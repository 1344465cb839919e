/**
 * The action stage of the LangChain adapter: `wrapToolCall` runs the real tool only inside
 * `pep.guardTool` (ALLOW or WARN whose permit verifies, with the effective args), answers a blocked
 * call with an error `ToolMessage` carrying the section-5 text, and turns ESCALATE into a graph
 * interrupt whose resume asks the PDP again (docs/adapters.md).
 * @internal
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { ToolMessage } from '@langchain/core/messages';
import { interopParseAsync, isInteropZodSchema } from '@langchain/core/utils/types';
import { type Command, getConfig, interrupt, isCommand, isGraphInterrupt } from '@langchain/langgraph';
import type { ToolCallHandler, ToolCallRequest } from 'langchain';
import type { Pep } from '../../client.js';
import { synthesizeBlock } from '../../decision.js';
import { PolicyEnforcementError, PolicyEscalatedError, toolMessage } from '../../errors.js';
import { withoutUndefinedMembers } from '../../internal/json.js';
import type { CallOptions } from '../../options.js';
import {
  interruptValue,
  isReviewResume,
  type PepInterruptValue,
  readReviewAnswer,
  reviewRefusalText,
} from './review.js';
import { SeenMessages } from './seen.js';

/** Where the tool finds its permit: `config.toolCall['agent-pep/permit']`. */
export const PERMIT_KEY = 'agent-pep/permit';

/** The tool call a guarded tool receives as `config.toolCall`: LangChain's, plus the verified permit. */
export type PepToolCall = ToolCallRequest['toolCall'] & { 'agent-pep/permit'?: string | undefined };

/** Most held calls remembered in this process while their graph waits for a resume. */
const MAX_HELD = 1000;

/** What the tool side needs from the middleware. */
export interface ToolSide {
  pep: Pep;
  seen: SeenMessages;
  session(configurable: unknown): string | undefined;
}

/** A tool's own failure, kept apart from the adapter's so the framework handles it as it would without us. */
class ToolFailure {
  constructor(readonly error: unknown) {}
}

/** Thrown in the guarded execute when the tool's schema would change the args decided: not run. */
class SchemaChanges {}

/** The text of a result that replaced the tool's output (an interceptor's `proceedWith` or `substitute`). */
function resultContent(result: unknown): string {
  if (typeof result === 'string') return result;
  const json = JSON.stringify(result);
  return json === undefined ? '' : json;
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
  const { pep, seen } = side;
  /** Held calls of this process, by session and tool call id, with the value they interrupted with. */
  const held = new Map<string, PepInterruptValue>();

  function remember(key: string, value: PepInterruptValue): void {
    held.delete(key);
    held.set(key, value);
    while (held.size > MAX_HELD) {
      const oldest = held.keys().next();
      if (oldest.done) break;
      held.delete(oldest.value);
    }
  }

  /** An error `ToolMessage` the adapter wrote (so the egress check does not send our own text out). */
  function denial(session: string, name: string, toolCallId: string, content: string, own = true): ToolMessage {
    const id = randomUUID();
    // Text the adapter wrote is not sent out again; text that carries a reviewer's own words is (own: false).
    if (own) seen.set(SeenMessages.key(session, id), { kind: 'pass', text: SeenMessages.digest(content) });
    return new ToolMessage({ id, content, tool_call_id: toolCallId, name, status: 'error' });
  }

  return async function wrapToolCall(
    request: ToolCallRequest,
    handler: ToolCallHandler,
  ): Promise<ToolMessage | Command> {
    const call = request.toolCall;
    const name = typeof call?.name === 'string' ? call.name : '';
    const toolCallId = typeof call?.id === 'string' ? call.id : '';
    const session = side.session(request.runtime?.configurable);
    const sessionKey = session ?? '';
    const heldKey = `${sessionKey}\u0000${toolCallId}`;
    const opts: CallOptions = {};
    if (session !== undefined) opts.session = session;
    const signal = request.runtime?.signal;
    if (signal !== undefined) opts.signal = signal;

    try {
      let approved = false;
      // A held value describes one call: a later call that reuses the id (with other args) is a new call.
      const remembered = held.get(heldKey);
      const request0 = remembered?.actionRequests[0];
      const waiting =
        remembered !== undefined && request0?.name === name && isDeepStrictEqual(request0.args, call.args)
          ? remembered
          : undefined;
      if (remembered !== undefined && waiting === undefined) held.delete(heldKey);
      if (toolCallId !== '' && (waiting !== undefined || reviewResumePending())) {
        // Resuming a held call: the answer comes back from interrupt() (it throws again without one).
        const answer = readReviewAnswer(interrupt(waiting ?? { agentPep: true, toolCallId }));
        held.delete(heldKey);
        if (answer.kind !== 'approve') {
          const withMessage = answer.kind === 'reject' && answer.message !== undefined && answer.message !== '';
          return denial(sessionKey, name, toolCallId, reviewRefusalText(name, answer), !withMessage);
        }
        approved = true;
      }

      // The tool parses its args with its zod schema before its body runs (coercions, defaults,
      // transforms): the PDP decides on what the body will get, not on what the model wrote.
      // A tool without an object schema (a `DynamicTool`, a string input) is decided on the args as written.
      const schema = (request.tool as { schema?: unknown } | undefined)?.schema;
      let parse = schema !== undefined && isInteropZodSchema(schema) ? schema : undefined;
      let decided: unknown = call.args;
      if (parse !== undefined) {
        try {
          const parsed = await interopParseAsync(parse, call.args);
          if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
            decided = withoutUndefinedMembers(parsed); // as JSON has it: what a permit can bind
          } else parse = undefined;
        } catch {
          // Args that do not fit: decided as written; the tool refuses them itself, and its body never runs.
          parse = undefined;
        }
      }

      let ran = false;
      let produced: ToolMessage | Command | undefined;
      const guarded = pep.guardTool(name, async (args, ctx) => {
        // What the tool is given, which it parses again before its body runs. The args decided: the call
        // as the model wrote it (its parse makes exactly them). Others (a WARN's transformedArgs, an
        // interceptor's): themselves, which the parse must leave as they are, or the body would run args
        // the permit does not bind (a schema that changes them on every parse is refused); args that do
        // not fit are the tool's to refuse (its own error; the body does not run).
        let toolArgs: unknown = args;
        if (parse !== undefined) {
          if (isDeepStrictEqual(args, decided)) toolArgs = call.args;
          else {
            let again: unknown = args;
            try {
              again = withoutUndefinedMembers(await interopParseAsync(parse, args));
            } catch {
              // refused by the tool itself below
            }
            if (!isDeepStrictEqual(again, args)) throw new SchemaChanges();
          }
        }
        ran = true;
        let out: ToolMessage | Command;
        // The tool reads its permit (for the side-effecting service) at config.toolCall['agent-pep/permit'].
        const toolCall = { ...call, args: toolArgs, [PERMIT_KEY]: ctx.permitId } as PepToolCall;
        try {
          out = await handler({ ...request, toolCall });
        } catch (error) {
          throw new ToolFailure(error);
        }
        produced = out;
        return ToolMessage.isInstance(out) ? out.content : out;
      });

      let result: unknown;
      try {
        result = await guarded(decided as Record<string, unknown>, opts);
      } catch (err) {
        if (err instanceof ToolFailure) throw err;
        if (err instanceof SchemaChanges) {
          const blocked = synthesizeBlock('action', randomUUID(), 'invalid_request', 'schema changes args', 0);
          return denial(sessionKey, name, toolCallId, toolMessage(blocked, name || 'unknown'));
        }
        if (err instanceof PolicyEscalatedError && !approved && toolCallId !== '' && canInterrupt()) {
          const value = interruptValue(
            name,
            call.args as Record<string, unknown>,
            toolCallId,
            err.decision,
            err.toolMessage,
          );
          remember(heldKey, value);
          interrupt(value); // throws GraphInterrupt: the graph waits for a reviewer
        }
        if (err instanceof PolicyEnforcementError) return denial(sessionKey, name, toolCallId, err.toolMessage);
        throw err;
      }

      if (!ran) {
        // An interceptor's substitute: its result stands in for the tool's; the tool did not run.
        return new ToolMessage({ content: resultContent(result), tool_call_id: toolCallId, name });
      }
      if (produced !== undefined && isCommand(produced)) {
        return isCommand(result)
          ? result
          : new ToolMessage({ content: resultContent(result), tool_call_id: toolCallId, name });
      }
      const message = produced as ToolMessage;
      if (result === message.content) return message;
      // An `after` interceptor replaced the result.
      const replaced: ConstructorParameters<typeof ToolMessage>[0] = {
        content: resultContent(result),
        tool_call_id: message.tool_call_id,
      };
      if (message.name !== undefined) replaced.name = message.name;
      if (message.status !== undefined) replaced.status = message.status;
      return new ToolMessage(replaced);
    } catch (err) {
      if (err instanceof ToolFailure) throw err.error; // the tool's own error: the framework's to handle
      if (isGraphInterrupt(err)) throw err;
      // Any error of the adapter itself: the tool did not run (or its output is withheld).
      const blocked = synthesizeBlock('action', randomUUID(), 'invalid_request', 'adapter error', 0);
      return denial(sessionKey, name, toolCallId, toolMessage(blocked, name || 'unknown'));
    }
  };
}
