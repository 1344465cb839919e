/**
 * `pepMiddleware` for the Vercel AI SDK (`ai` 6.x and 7.x): a language-model middleware that checks new
 * user text (`input`) and new tool results (`context_egress`) once each before the model is called, and
 * the generated text (`output`) before it is returned, a stream included (docs/adapters.md).
 * @internal
 */
import { createHash } from 'node:crypto';
import { PolicyBlockedError } from '../../errors.js';
import { enforcementOf, RULES, readOptions, TextMemory } from '../kit.js';
const DEFAULT_REMEMBERED = 10_000;
/**
 * A prompt this middleware cannot read (not the SDK's list of messages and parts): refused with a
 * synthesized BLOCK `invalid_request`, so the model is never called with text nobody checked.
 */
function refusal(enforcement, stage) {
    const message = 'the prompt could not be read to be checked';
    return new PolicyBlockedError(enforcement.refuse({ stage }, 'invalid_request', message).decision);
}
/** The text of a tool result the model is about to see (a denial's reason included), or undefined for none. */
function outputText(output) {
    const o = output;
    switch (o?.type) {
        case 'text':
        case 'error-text':
            return typeof o.value === 'string' ? o.value : JSON.stringify(o.value ?? null);
        case 'json':
        case 'error-json':
            return JSON.stringify(o.value ?? null);
        case 'content':
            return Array.isArray(o.value)
                ? o.value
                    .filter((p) => p?.type === 'text')
                    .map((p) => String(p.text))
                    .join('\n')
                : '';
        case 'execution-denied': {
            // the reason is text the model reads (a person may have typed it when denying the call)
            const reason = o.reason;
            return typeof reason === 'string' && reason !== '' ? reason : undefined;
        }
        default:
            // an output type this adapter does not know is checked as JSON, never passed unchecked
            return JSON.stringify(o ?? null);
    }
}
/**
 * A language-model middleware for `wrapLanguageModel` that puts the PEP's text stages around every model
 * call.
 *
 * Before the model is called (`transformParams`), the text of each user message (its text parts joined) is checked at
 * `input` and each tool result at `context_egress` (with the tool's name), once each: a text already
 * checked in an earlier step of the same session is not sent again, its WARN replacement is reapplied.
 * WARN replaces the text in the prompt with the PDP's `transformedContent`; BLOCK or ESCALATE rejects,
 * so the model is never called. After the model answered, its generated text is checked at `output`
 * (all text parts of one response as one text): WARN replaces it, BLOCK or ESCALATE rejects. A stream is
 * held whole and released only after its text passed the check.
 *
 * @param pep - the client that decides
 * @param opts - `{ session?, maxRemembered? }` ({@link PepMiddlewareOptions})
 * @returns a `LanguageModelMiddleware` for `wrapLanguageModel({ model, middleware })` (6.x and 7.x)
 * @throws TypeError on an unknown or bad option (`err.option` names it)
 * @remarks Fails closed: a PDP that is down, slow or unclear is a synthesized BLOCK, which rejects the
 * call (`generateText` rejects with the {@link PolicyEnforcementError}; a stream ends with it as its
 * error and releases no text). The SDK's `abortSignal` ends a pending check. File and image parts are
 * not text and are not checked; a tool result's media parts are dropped when a WARN replaces its text.
 * @example
 * ```ts
 * const model = wrapLanguageModel({ model: baseModel, middleware: pepMiddleware(pep) });
 * const { text } = await generateText({ model, prompt: 'Where is my order?' });
 * ```
 */
export function pepMiddleware(pep, opts = {}) {
    const enforcement = enforcementOf(pep, 'pepMiddleware');
    const o = readOptions('pepMiddleware', opts, {
        session: RULES.session,
        maxRemembered: RULES.count,
    });
    const session = o.session;
    /** key of a checked text -> the text to use in its place. */
    const remembered = new TextMemory(o.maxRemembered ?? DEFAULT_REMEMBERED);
    const remember = (key, text) => remembered.set(key, text);
    const refused = (stage) => refusal(enforcement, stage);
    function keyOf(parts) {
        return createHash('sha256')
            .update(JSON.stringify([session ?? null, ...parts]))
            .digest('base64url');
    }
    function callOpts(signal, tool) {
        const o = {};
        if (session !== undefined)
            o.session = session;
        if (signal instanceof AbortSignal)
            o.signal = signal;
        if (tool !== undefined)
            o.tool = tool;
        return o;
    }
    /** The text to use: remembered, or checked now (throws on BLOCK or ESCALATE). */
    async function checked(stage, key, text, signal, tool) {
        const known = remembered.get(key);
        if (known !== undefined)
            return known;
        const use = await pep.guardText(stage, text, callOpts(signal, tool));
        remember(key, use);
        return use;
    }
    /** The user text of one message, checked as one text: the text parts joined, as the model reads them. */
    async function userContent(i, content, signal) {
        if (typeof content === 'string') {
            // a prompt built by hand (the SDK always makes a list of parts): checked all the same
            return checked('input', keyOf(['input', i, content]), content, signal);
        }
        if (!Array.isArray(content))
            throw refused('input');
        const texts = content.filter((p) => p?.type === 'text');
        if (texts.some((p) => typeof p.text !== 'string'))
            throw refused('input');
        if (texts.length === 0)
            return content;
        const text = texts.map((p) => p.text).join('');
        const use = await checked('input', keyOf(['input', i, text]), text, signal);
        if (use === text)
            return content;
        // WARN: the whole text goes into the first text part; the other text parts are dropped
        const first = texts[0];
        return content.flatMap((p) => (p === first ? [{ ...p, text: use }] : texts.includes(p) ? [] : [p]));
    }
    async function toolContent(content, signal) {
        if (!Array.isArray(content))
            throw refused('context_egress');
        let partChanged = false;
        const parts = [];
        for (const part of content) {
            if (part?.type === 'tool-result') {
                const text = outputText(part.output);
                if (text !== undefined) {
                    const tool = typeof part.toolName === 'string' ? part.toolName : undefined;
                    const key = keyOf(['context_egress', String(part.toolCallId), tool ?? null, text]);
                    const use = await checked('context_egress', key, text, signal, tool);
                    if (use !== text) {
                        const denied = part.output?.type === 'execution-denied';
                        parts.push({
                            ...part,
                            output: denied ? { ...part.output, reason: use } : { type: 'text', value: use },
                        });
                        partChanged = true;
                        continue;
                    }
                }
            }
            parts.push(part);
        }
        return partChanged ? parts : content;
    }
    async function transformPrompt(params) {
        const prompt = params.prompt;
        if (!Array.isArray(prompt))
            throw refused('input');
        const signal = params.abortSignal;
        let changed = false;
        const next = [];
        for (const [i, message] of prompt.entries()) {
            const role = message?.role;
            if (role !== 'user' && role !== 'tool') {
                next.push(message);
                continue;
            }
            const content = message.content;
            const use = role === 'user' ? await userContent(i, content, signal) : await toolContent(content, signal);
            if (use !== content) {
                next.push({ ...message, content: use });
                changed = true;
            }
            else
                next.push(message);
        }
        return changed ? { ...params, prompt: next } : params;
    }
    /** The generated text to use for `text` (throws on BLOCK or ESCALATE). */
    function checkOutput(text, signal) {
        return pep.guardText('output', text, callOpts(signal));
    }
    const middleware = {
        specificationVersion: 'v3',
        async transformParams({ params }) {
            return transformPrompt(params);
        },
        async wrapGenerate({ doGenerate, params, }) {
            const result = await doGenerate();
            const content = Array.isArray(result.content) ? result.content : [];
            const texts = content.filter((p) => p?.type === 'text' && typeof p.text === 'string');
            if (texts.length === 0)
                return result;
            const text = texts.map((p) => p.text).join('');
            const use = await checkOutput(text, params.abortSignal);
            if (use === text)
                return result;
            // WARN: the whole text goes into the first text part; the other text parts are dropped
            const first = texts[0];
            const next = content.flatMap((p) => (p === first ? [{ ...p, text: use }] : texts.includes(p) ? [] : [p]));
            // The provider's raw response body holds the original text (the SDK shows it in step.response.body).
            const response = result.response;
            if (typeof response === 'object' && response !== null && 'body' in response) {
                const { body: _original, ...kept } = response;
                return { ...result, content: next, response: kept };
            }
            return { ...result, content: next };
        },
        async wrapStream({ doStream, params, }) {
            const result = await doStream();
            const source = result.stream;
            const reader = source.getReader();
            const held = new ReadableStream({
                async start(controller) {
                    const chunks = [];
                    try {
                        for (;;) {
                            const { done, value } = await reader.read();
                            if (done)
                                break;
                            chunks.push(value);
                        }
                        const deltas = chunks.filter((c) => c?.type === 'text-delta' && typeof c.delta === 'string');
                        if (deltas.length === 0) {
                            for (const c of chunks)
                                controller.enqueue(c);
                            controller.close();
                            return;
                        }
                        const text = deltas.map((c) => c.delta).join('');
                        const use = await checkOutput(text, params.abortSignal);
                        const first = deltas[0];
                        for (const c of chunks) {
                            if (use === text)
                                controller.enqueue(c);
                            else if (c === first)
                                controller.enqueue({ ...c, delta: use });
                            // WARN: the provider's raw chunks (includeRawChunks) carry the original text; they are dropped
                            else if (c.type !== 'text-delta' && c.type !== 'raw')
                                controller.enqueue(c);
                        }
                        controller.close();
                    }
                    catch (err) {
                        // nothing held is released: the stream ends with the enforcement error
                        controller.error(err);
                    }
                },
                cancel(reason) {
                    // the consumer went away: stop reading the model's stream
                    return reader.cancel(reason).catch(() => undefined);
                },
            });
            return { ...result, stream: held };
        },
    };
    return middleware;
}
