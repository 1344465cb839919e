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
import { StructuredTool, Tool } from '@langchain/core/tools';
import { interopParseAsync, isInteropZodSchema } from '@langchain/core/utils/types';
import { getConfig, interrupt, isCommand, isGraphInterrupt } from '@langchain/langgraph';
import { PolicyEnforcementError, PolicyEscalatedError } from '../../errors.js';
import { isPlainObject, withoutUndefinedMembers } from '../../internal/json.js';
import { resultText } from '../kit.js';
import { interruptValue, isReviewResume, readReviewAnswer, reviewRefusalText, } from './review.js';
import { SeenMessages } from './seen.js';
/** Where the tool finds its permit: `config.toolCall['agent-pep/permit']`. */
export const PERMIT_KEY = 'agent-pep/permit';
/** Most held calls remembered in this process while their graph waits for a resume. */
const MAX_HELD = 1000;
/** A tool's own failure, kept apart from the adapter's so the framework handles it as it would without us. */
class ToolFailure {
    error;
    constructor(error) {
        this.error = error;
    }
}
/** Thrown in the guarded execute when the tool's schema would change the args decided: not run. */
class SchemaChanges {
}
/** The text of a result that replaced the tool's output (an interceptor's `proceedWith` or `substitute`). */
function resultContent(result) {
    return resultText(result);
}
/** The LangGraph scratchpad of the running task, read only (undefined outside a graph or in another version). */
function scratchpad() {
    try {
        const conf = getConfig()?.configurable;
        const pad = conf?.__pregel_scratchpad;
        return typeof pad === 'object' && pad !== null ? pad : undefined;
    }
    catch {
        return undefined;
    }
}
/** True when interrupts can work here: inside a graph run with a checkpointer. */
function canInterrupt() {
    try {
        const conf = getConfig()?.configurable;
        return conf?.__pregel_checkpointer !== undefined && conf.__pregel_checkpointer !== null;
    }
    catch {
        return false;
    }
}
/**
 * True when the next `interrupt()` of this task will return a review resume (`{ decisions }`) instead
 * of throwing: the task is being resumed. Read without consuming anything.
 */
function reviewResumePending() {
    const pad = scratchpad();
    if (!pad)
        return false;
    const next = typeof pad.interruptCounter === 'number' ? pad.interruptCounter + 1 : 0;
    const resume = Array.isArray(pad.resume) ? pad.resume : [];
    const value = next < resume.length ? resume[next] : pad.nullResume;
    return isReviewResume(value);
}
/**
 * Builds the `wrapToolCall` hook.
 * @internal
 */
function isObject(v) {
    return typeof v === 'object' && v !== null;
}
/** Whether a tool object is a LangChain `StructuredTool` (it parses with `this.schema`, then `_call`). */
function isStructuredTool(tool) {
    return tool instanceof StructuredTool;
}
/**
 * `schema`'s parse of `args`, as JSON has it, when it is a plain object and a second parse gives the same:
 * the tool parses the args once more before its body runs, and a schema that parses them differently
 * each time (a counter, a default made per parse such as a fresh id) would run args the permit does
 * not bind. Undefined otherwise.
 * @param first - the first parse, when the caller already made it
 * @throws what the first parse throws (the args do not fit)
 */
async function stableParse(schema, args, first = undefined) {
    if (first === undefined)
        first = await interopParseAsync(schema, args);
    if (!isObject(first) || Array.isArray(first) || !isPlainObject(first))
        return undefined;
    let second;
    try {
        second = await interopParseAsync(schema, args);
    }
    catch {
        return undefined;
    }
    const decided = withoutUndefinedMembers(first);
    return isObject(second) && isDeepStrictEqual(withoutUndefinedMembers(second), decided)
        ? decided
        : undefined;
}
async function planArgs(tool, args) {
    const schema = isObject(tool) ? tool.schema : undefined;
    if (schema === undefined || !isInteropZodSchema(schema))
        return { kind: 'asWritten' };
    let parsed;
    try {
        parsed = await interopParseAsync(schema, args);
    }
    catch {
        if (!isStructuredTool(tool))
            return { kind: 'refused', why: 'args do not fit the tool schema' };
        // The tool's own parse refuses them; were it to pass, `_call` refuses to run.
        const refusing = Object.create(tool, {
            _call: {
                value: () => {
                    throw new SchemaChanges();
                },
            },
        });
        return { kind: 'unfit', tool: refusing };
    }
    // LangChain's string tools (`DynamicTool`, a schemaless `tool()`) hand on `args.input` as it is.
    if (tool instanceof Tool && typeof parsed === 'string' && isObject(args) && parsed === args.input) {
        return { kind: 'asWritten' };
    }
    const decided = await stableParse(schema, args, parsed).catch(() => undefined);
    if (decided !== undefined)
        return { kind: 'parsed', schema, decided };
    return { kind: 'refused', why: 'the tool schema makes no object of the args, or parses them differently each time' };
}
export function makeWrapToolCall(side) {
    const { pep, seen } = side;
    /** Held calls of this process, by session and tool call id, with the value they interrupted with. */
    const held = new Map();
    function remember(key, value) {
        held.delete(key);
        held.set(key, value);
        while (held.size > MAX_HELD) {
            const oldest = held.keys().next();
            if (oldest.done)
                break;
            held.delete(oldest.value);
        }
    }
    /** An error `ToolMessage` the adapter wrote (so the egress check does not send our own text out). */
    function denial(session, name, toolCallId, content, own = true) {
        const id = randomUUID();
        // Text the adapter wrote is not sent out again; text that carries a reviewer's own words is (own: false).
        if (own)
            seen.set(SeenMessages.key(session, id), { kind: 'pass', text: SeenMessages.digest(content) });
        return new ToolMessage({ id, content, tool_call_id: toolCallId, name, status: 'error' });
    }
    return async function wrapToolCall(request, handler) {
        const call = request.toolCall;
        const name = typeof call?.name === 'string' ? call.name : '';
        const toolCallId = typeof call?.id === 'string' ? call.id : '';
        const session = side.session(request.runtime?.configurable);
        const sessionKey = session ?? '';
        const heldKey = `${sessionKey}\u0000${toolCallId}`;
        const opts = {};
        if (session !== undefined)
            opts.session = session;
        const signal = request.runtime?.signal;
        if (signal !== undefined)
            opts.signal = signal;
        /** A call the adapter refuses itself: not run, the `was not run` text with `invalid_request`. */
        const refused = (why) => denial(sessionKey, name, toolCallId, side.enforcement.refuse({ stage: 'action', tool: name || 'unknown' }, 'invalid_request', why).toolMessage);
        try {
            let approved = false;
            // A held value describes one call: a later call that reuses the id (with other args) is a new call.
            const remembered = held.get(heldKey);
            const request0 = remembered?.actionRequests[0];
            const waiting = remembered !== undefined && request0?.name === name && isDeepStrictEqual(request0.args, call.args)
                ? remembered
                : undefined;
            if (remembered !== undefined && waiting === undefined)
                held.delete(heldKey);
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
            const plan = await planArgs(request.tool, call.args);
            if (plan.kind === 'refused')
                return refused(plan.why);
            if (plan.kind === 'unfit') {
                // The model's args do not fit: the tool refuses them with its own error (the model can retry).
                // Its body is swapped out, so that a parse that passes this time runs nothing undecided.
                try {
                    return await handler({ ...request, tool: plan.tool });
                }
                catch (error) {
                    if (error instanceof SchemaChanges)
                        return refused('schema changes args');
                    throw new ToolFailure(error); // the tool's own error: the framework's to handle
                }
            }
            const decided = plan.kind === 'parsed' ? plan.decided : call.args;
            let ran = false;
            let produced;
            const guarded = pep.guardTool(name, async (args, ctx) => {
                // What the tool is given, which it parses once more before its body runs. The args decided: the
                // call as the model wrote it (seen to parse to them twice). Others (a WARN's transformedArgs, an
                // interceptor's): themselves, which must parse to themselves twice, or the body would run args
                // the permit does not bind (refused).
                let toolArgs = args;
                if (plan.kind === 'parsed') {
                    if (isDeepStrictEqual(args, decided))
                        toolArgs = call.args;
                    else {
                        const again = await stableParse(plan.schema, args).catch(() => undefined);
                        if (again === undefined || !isDeepStrictEqual(again, args))
                            throw new SchemaChanges();
                    }
                }
                ran = true;
                let out;
                // The tool reads its permit (for the side-effecting service) at config.toolCall['agent-pep/permit'].
                const toolCall = { ...call, args: toolArgs, [PERMIT_KEY]: ctx.permitId };
                try {
                    out = await handler({ ...request, toolCall });
                }
                catch (error) {
                    throw new ToolFailure(error);
                }
                produced = out;
                return ToolMessage.isInstance(out) ? out.content : out;
            });
            let result;
            try {
                result = await guarded(decided, opts);
            }
            catch (err) {
                if (err instanceof ToolFailure)
                    throw err;
                if (err instanceof SchemaChanges)
                    return refused('schema changes args');
                if (err instanceof PolicyEscalatedError && !approved && toolCallId !== '' && canInterrupt()) {
                    const value = interruptValue(name, call.args, toolCallId, err.decision, err.toolMessage);
                    remember(heldKey, value);
                    interrupt(value); // throws GraphInterrupt: the graph waits for a reviewer
                }
                if (err instanceof PolicyEnforcementError)
                    return denial(sessionKey, name, toolCallId, err.toolMessage);
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
            const message = produced;
            if (result === message.content)
                return message;
            // An `after` interceptor replaced the result.
            const replaced = {
                content: resultContent(result),
                tool_call_id: message.tool_call_id,
            };
            if (message.name !== undefined)
                replaced.name = message.name;
            if (message.status !== undefined)
                replaced.status = message.status;
            return new ToolMessage(replaced);
        }
        catch (err) {
            if (err instanceof ToolFailure)
                throw err.error; // the tool's own error: the framework's to handle
            if (isGraphInterrupt(err))
                throw err;
            // Any error of the adapter itself: the tool did not run (or its output is withheld).
            return refused('adapter error');
        }
    };
}
