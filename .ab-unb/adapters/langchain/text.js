/**
 * The text stages of the LangChain adapter: in `wrapModelCall`, new user text (input) and new tool
 * results (context egress, with the tool's name) are checked once each before the model sees them,
 * and the model's message (output) before it is returned; in `afterAgent`, the final message
 * (delivery). WARN replaces the text; BLOCK, ESCALATE or a failure of the adapter stop the step with
 * an `AIMessage` carrying the section-5 text (docs/api.md and docs/adapters.md).
 * @internal
 */
import { randomUUID } from 'node:crypto';
import { AIMessage, ChatMessage, FunctionMessage, HumanMessage, SystemMessage, ToolMessage, } from '@langchain/core/messages';
import { toolMessage } from '../../errors.js';
import { callOptions as kitCallOptions } from '../kit.js';
import { SeenMessages } from './seen.js';
/** Roles of a generic `ChatMessage` that are the developer's or the model's (not checked), and tool results. */
const UNCHECKED_ROLES = new Set(['system', 'developer', 'ai', 'assistant', 'model']);
const TOOL_ROLES = new Set(['tool', 'function']);
/**
 * The stage a message of the prompt is checked at, if any: tool results (a `ToolMessage`, a legacy
 * `FunctionMessage`, a `ChatMessage` with a tool role) at context egress; system and AI messages not at
 * all; everything else (a `HumanMessage`, a `ChatMessage` with role `user`, a type this adapter does not
 * know) at input, so that no other message class carries user text to the model unchecked.
 */
function stageOf(message) {
    if (HumanMessage.isInstance(message))
        return 'input';
    if (ToolMessage.isInstance(message) || FunctionMessage.isInstance(message))
        return 'context_egress';
    if (AIMessage.isInstance(message) || SystemMessage.isInstance(message))
        return undefined;
    if (ChatMessage.isInstance(message)) {
        const role = String(message.role).toLowerCase();
        if (UNCHECKED_ROLES.has(role))
            return undefined;
        return TOOL_ROLES.has(role) ? 'context_egress' : 'input';
    }
    const type = message.getType();
    if (type === 'ai' || type === 'system' || type === 'developer' || type === 'remove')
        return undefined;
    return 'input';
}
/** The tool name of a tool result message (undefined when it has none). */
function toolNameOf(message) {
    return stageOf(message) === 'context_egress' && typeof message.name === 'string' ? message.name : undefined;
}
/**
 * The text of a message: its string content, or its text blocks joined. When a block of another type
 * carries text (`input_text`, `output_text`: a provider's own formats, which it may send as they are),
 * every block with a string `text` counts, in order, so no text reaches the model unchecked.
 */
function textOf(message) {
    const content = message.content;
    if (Array.isArray(content)) {
        const carriesText = (b) => typeof b === 'object' && b !== null && typeof b.text === 'string';
        if (content.some((b) => carriesText(b) && b.type !== 'text')) {
            return content.map((b) => (typeof b === 'string' ? b : carriesText(b) ? b.text : '')).join('');
        }
    }
    const t = message.text;
    return typeof t === 'string' ? t : '';
}
/** What stands for reasoning a provider sent opaque (`redacted_thinking`): never checkable, so never kept. */
const WITHHELD_REASONING = '[reasoning that cannot be read]';
/** Block types and `additional_kwargs` members that carry a model's reasoning or thinking. */
const REASONING_BLOCKS = { reasoning: 'reasoning', thinking: 'thinking' };
const OPAQUE_REASONING = new Set(['redacted_thinking', 'redacted_reasoning']);
/**
 * The reasoning or thinking a message carries, as one text (blocks `reasoning`/`thinking`, the
 * `additional_kwargs.reasoning_content` some providers use, and OpenAI's reasoning summaries), or
 * undefined when it carries none. Opaque reasoning (`redacted_thinking`) reads as a marker that never
 * passes unchanged, so it is withheld.
 */
function reasoningOf(message) {
    const texts = [];
    const content = message.content;
    if (Array.isArray(content)) {
        for (const b of content) {
            const type = b?.type;
            if (typeof type !== 'string')
                continue;
            const field = REASONING_BLOCKS[type];
            const value = field === undefined ? undefined : b[field];
            if (typeof value === 'string')
                texts.push(value);
            else if (OPAQUE_REASONING.has(type) || field !== undefined)
                texts.push(WITHHELD_REASONING);
        }
    }
    const kwargs = message.additional_kwargs ?? {};
    if (typeof kwargs.reasoning_content === 'string')
        texts.push(kwargs.reasoning_content);
    const summary = kwargs.reasoning?.summary;
    if (Array.isArray(summary)) {
        for (const s of summary)
            if (typeof s?.text === 'string')
                texts.push(s.text);
    }
    return texts.length > 0 ? texts.join('\n') : undefined;
}
/** The same message with other content (a WARN's transformed text, or a denial in a later request). */
function withContent(message, content) {
    if (ChatMessage.isInstance(message)) {
        const fields = { content, role: message.role };
        if (message.id !== undefined)
            fields.id = message.id;
        if (message.name !== undefined)
            fields.name = message.name;
        return new ChatMessage(fields);
    }
    if (FunctionMessage.isInstance(message)) {
        const fields = { content, name: message.name };
        if (message.id !== undefined)
            fields.id = message.id;
        return new FunctionMessage(fields);
    }
    if (ToolMessage.isInstance(message)) {
        const fields = { content, tool_call_id: message.tool_call_id };
        if (message.id !== undefined)
            fields.id = message.id;
        if (message.name !== undefined)
            fields.name = message.name;
        if (message.status !== undefined)
            fields.status = message.status;
        return new ToolMessage(fields);
    }
    if (AIMessage.isInstance(message)) {
        const fields = { content };
        if (message.id !== undefined)
            fields.id = message.id;
        if (message.name !== undefined)
            fields.name = message.name;
        if (message.tool_calls !== undefined && message.tool_calls.length > 0)
            fields.tool_calls = message.tool_calls;
        return new AIMessage(fields);
    }
    const fields = { content };
    if (message.id !== undefined)
        fields.id = message.id;
    if (message.name !== undefined)
        fields.name = message.name;
    return new HumanMessage(fields);
}
/** LangGraph's tag for a run whose tokens must not reach `streamMode: 'messages'`. */
const NO_STREAM = 'langsmith:nostream';
/**
 * The model, tagged so that LangGraph does not stream its tokens: with `streamMode: 'messages'` the
 * message then reaches the stream only when the model node ends, after the output check. A model
 * that cannot be tagged is used as it is (its tokens stream unchecked; `invoke` is unaffected).
 */
// biome-ignore lint/suspicious/noExplicitAny: LangChain's AgentLanguageModelLike
function heldStream(model) {
    try {
        if (typeof model?.withConfig !== 'function')
            return model;
        return model.withConfig({ tags: [NO_STREAM] });
    }
    catch {
        return model;
    }
}
/** The text and metadata of a step the adapter stopped. */
function stopInfo(decision, stage) {
    const info = { stage, verdict: decision.verdict, requestId: decision.requestId };
    const code = decision.synthesized?.code ?? (decision.verdict === 'ESCALATE' ? 'escalated' : 'blocked');
    info.code = code;
    return info;
}
/**
 * Builds `wrapModelCall` and `afterAgent`.
 * @internal
 */
export function makeTextHooks(side) {
    const { seen } = side;
    /** An `AIMessage` the adapter writes in place of a step it stopped; remembered as its own. */
    function stopped(session, decision, stage, id) {
        const messageId = id ?? randomUUID();
        const content = toolMessage(decision, undefined);
        seen.set(SeenMessages.key(session, messageId), { kind: 'pass', text: SeenMessages.digest(content) });
        return new AIMessage({
            id: messageId,
            content,
            response_metadata: { agent_pep: stopInfo(decision, stage) },
        });
    }
    const { enforcement } = side;
    /** One text decision through the enforcement layer (never rejects; the simulated rule applies). */
    function check(stage, text, opts, tool) {
        return enforcement.decideText(stage, text, stage === 'context_egress' ? { ...opts, ...kitCallOptions({ tool }) } : opts);
    }
    /** A refusal of the adapter itself (observed), as the decision a stop message carries. */
    function adapterFailure(stage) {
        return enforcement.refuse({ stage }, 'invalid_request', 'adapter error').decision;
    }
    /** What to remember of a decision: a PDP BLOCK is remembered as its denial text; a failure or a hold is not. */
    function remembered(r, text) {
        if (r.kind === 'passed')
            return r.text === text ? { kind: 'pass' } : { kind: 'replace', content: r.text };
        const d = r.decision;
        if (d.verdict === 'BLOCK' && d.synthesized === undefined)
            return { kind: 'replace', content: r.toolMessage };
        return undefined; // an outage, a hold or a simulated decision: checked again next time
    }
    function callOptions(configurable, signal) {
        const session = side.session(configurable);
        const opts = {};
        if (session !== undefined)
            opts.session = session;
        if (signal instanceof AbortSignal)
            opts.signal = signal;
        return { opts, sessionKey: session ?? '' };
    }
    // biome-ignore lint/suspicious/noExplicitAny: the request and handler are LangChain's generic model-call types
    async function wrapModelCall(request, handler) {
        let sessionKey = '';
        let stage = 'input';
        try {
            const call = callOptions(request.runtime?.configurable, request.runtime?.signal);
            sessionKey = call.sessionKey;
            const messages = Array.isArray(request.messages) ? request.messages : [];
            // Input and context egress: each new message once; earlier ones as decided then.
            const pending = [];
            const out = [...messages];
            messages.forEach((message, index) => {
                const at = stageOf(message);
                if (at === undefined)
                    return;
                const key = SeenMessages.key(sessionKey, message.id);
                const text = textOf(message);
                // Known only for the text it was decided for: an edit under the same id is checked again.
                const known = seen.match(key, text);
                if (known !== undefined) {
                    if (known.kind === 'replace')
                        out[index] = withContent(message, known.content);
                    return;
                }
                if (text === '')
                    return;
                const tool = toolNameOf(message);
                pending.push(check(at, text, call.opts, tool).then((r) => ({ index, r, key, text })));
            });
            const decided = await Promise.all(pending);
            for (const { index, r, key, text } of decided) {
                const message = messages[index];
                const keep = remembered(r, text);
                if (keep !== undefined)
                    seen.set(key, { ...keep, text: SeenMessages.digest(text) });
                if (r.kind === 'passed' && r.text !== text)
                    out[index] = withContent(message, r.text);
            }
            const stop = decided.find((d) => d.r.kind === 'refused');
            if (stop !== undefined)
                return stopped(sessionKey, stop.r.decision, stop.r.decision.stage);
            // The model call itself: its errors are the framework's.
            stage = 'output';
            let response;
            try {
                response = await handler({ ...request, model: heldStream(request.model), messages: out });
            }
            catch (error) {
                throw new ModelFailure(error);
            }
            // Output: the model's message is checked before it is returned.
            if (AIMessage.isInstance(response))
                return await checkMessage('output', response, call.opts, sessionKey);
            // A structured response (responseFormat): its JSON is checked; only an unchanged pass returns it.
            const json = JSON.stringify(response?.structuredResponse ?? response);
            const r = await check('output', json ?? '', call.opts, undefined);
            return r.kind === 'passed' && r.text === json ? response : stopped(sessionKey, r.decision, 'output');
        }
        catch (err) {
            if (err instanceof ModelFailure)
                throw err.error;
            return stopped(sessionKey, adapterFailure(stage), stage);
        }
    }
    /**
     * The model's message checked at `output`: its text, and its reasoning or thinking (checked as text of
     * its own). Unchanged, it is returned as it is; a WARN on either gives the message with the checked
     * text and without its reasoning (a replacement cannot be put back into provider blocks: withheld).
     */
    async function checkMessage(stage, response, opts, sessionKey) {
        const r = await checkWhole(stage, response, opts);
        if (r.kind === 'refused')
            return stopped(sessionKey, r.decision, stage);
        return r.message;
    }
    /** A message's text and reasoning through one stage: the message to use, or the refusal. */
    async function checkWhole(stage, message, opts) {
        const text = textOf(message);
        const thought = reasoningOf(message);
        const [r, t] = await Promise.all([
            text === '' ? undefined : check(stage, text, opts, undefined),
            thought === undefined ? undefined : check(stage, thought, opts, undefined),
        ]);
        if (r?.kind === 'refused')
            return r;
        if (t?.kind === 'refused')
            return t;
        const textChanged = r !== undefined && r.text !== text;
        const thoughtChanged = t !== undefined && (t.text !== thought || thought.includes(WITHHELD_REASONING));
        if (!textChanged && !thoughtChanged)
            return { kind: 'passed', message };
        return { kind: 'passed', message: withContent(message, r?.text ?? text) };
    }
    /** The final message checked at `delivery` (text and reasoning). */
    function checkDelivered(last, opts) {
        return checkWhole('delivery', last, opts);
    }
    /**
     * The prompt messages whose replacement (a WARN's text, a BLOCK's denial) is not in the state yet:
     * written back at the end of the run, so later runs, in this process or another, send the checked
     * text and never the original.
     */
    function writeBack(sessionKey, messages, except) {
        const fixes = [];
        for (const message of messages) {
            if (message === except || stageOf(message) === undefined)
                continue;
            const known = seen.match(SeenMessages.key(sessionKey, message.id), textOf(message));
            if (known?.kind === 'replace' && textOf(message) !== known.content)
                fixes.push(withContent(message, known.content));
        }
        return fixes;
    }
    // biome-ignore lint/suspicious/noExplicitAny: LangChain's agent state and runtime
    async function afterAgent(state, runtime) {
        let sessionKey = '';
        let last;
        let fixes = [];
        const update = (more) => {
            const all = [...fixes, ...more];
            return all.length > 0 ? { messages: all } : undefined;
        };
        try {
            const call = callOptions(runtime?.configurable, runtime?.signal);
            sessionKey = call.sessionKey;
            const messages = Array.isArray(state?.messages) ? state.messages : [];
            last = messages.at(-1);
            if (last === undefined)
                return undefined;
            fixes = writeBack(sessionKey, messages, last);
            const key = SeenMessages.key(sessionKey, last.id);
            const text = textOf(last);
            if (seen.match(key, text)?.kind === 'pass' && AIMessage.isInstance(last) && last.response_metadata?.agent_pep) {
                return update([]); // the adapter's own stop message
            }
            const checked = await checkDelivered(last, call.opts);
            if (checked.kind === 'refused')
                return update([deliveryStop(sessionKey, checked.decision, last)]);
            return update(checked.message === last ? [] : [checked.message]);
        }
        catch {
            if (last === undefined)
                return undefined;
            return update([deliveryStop(sessionKey, adapterFailure('delivery'), last)]);
        }
    }
    /** The final message replaced (same id, same type) by the delivery denial. */
    function deliveryStop(sessionKey, decision, last) {
        if (AIMessage.isInstance(last) || last.id === undefined)
            return stopped(sessionKey, decision, 'delivery', last.id);
        seen.set(SeenMessages.key(sessionKey, last.id), {
            kind: 'replace',
            content: toolMessage(decision, undefined),
            text: SeenMessages.digest(textOf(last)),
        });
        return withContent(last, toolMessage(decision, undefined));
    }
    return { wrapModelCall, afterAgent };
}
/** The model's own failure, kept apart from the adapter's so the framework handles it as it would without us. */
class ModelFailure {
    error;
    constructor(error) {
        this.error = error;
    }
}
