/**
 * `guardTools` and `pepToolApproval` for the Vercel AI SDK (`ai` 6.x and 7.x): each tool body runs only
 * inside `pep.guardTool`, and ESCALATE goes through the SDK's tool approval (docs/adapters.md).
 * Structural types only: no value is imported from `ai`, so one adapter serves both majors.
 * @internal
 */
import { isDeepStrictEqual } from 'node:util';
import { PolicyBlockedError, PolicyEnforcementError, toolMessage } from '../../errors.js';
import { enforcementOf, RULES, readOptions, TextMemory } from '../kit.js';
import { registerHideBlocked } from './visible.js';
/** The guarded tool objects, with the name and session they decide under (for {@link pepToolApproval}). */
const GUARDED = new WeakMap();
/**
 * The error a guarded tool throws instead of running its body: its message (and `toString()`, which
 * `ai` 7 shows) is exactly the `toolMessage`, so the model reads the section-5 text as the tool error.
 */
function forModel(err) {
    const text = err.toolMessage;
    Object.defineProperty(err, 'message', { value: text, configurable: true, writable: true });
    Object.defineProperty(err, 'toString', { value: () => text, configurable: true, writable: true });
    return err;
}
/** A refusal of the adapter itself (the body has not run): observed like any synthesized BLOCK. */
function adapterRefusal(enforcement, name, why, cause) {
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
export async function fitsInputSchema(schema, value) {
    if ((typeof schema !== 'object' && typeof schema !== 'function') || schema === null)
        return true;
    try {
        const standard = schema['~standard'];
        if (typeof standard?.validate === 'function') {
            const result = (await standard.validate(value));
            return typeof result === 'object' && result !== null && result.issues === undefined;
        }
        const safeParse = schema.safeParse;
        if (typeof safeParse === 'function') {
            return safeParse.call(schema, value)?.success === true;
        }
        const validate = schema.validate;
        if (typeof validate === 'function') {
            return (await validate.call(schema, value))?.success === true;
        }
        return true;
    }
    catch {
        return false;
    }
}
function isAsyncIterable(v) {
    return (typeof v === 'object' &&
        v !== null &&
        typeof v[Symbol.asyncIterator] === 'function');
}
/**
 * True when `messages` hold a human approval request for this tool call: the run is resuming after the
 * SDK asked a person (an automatic 7.x approval does not count).
 * @internal
 */
export function wasSentForApproval(messages, toolCallId) {
    if (!Array.isArray(messages) || typeof toolCallId !== 'string')
        return false;
    for (const message of messages) {
        const m = message;
        if (m?.role !== 'assistant' || !Array.isArray(m.content))
            continue;
        const content = m.content;
        for (const part of content) {
            const p = part;
            if (p?.type === 'tool-approval-request' && p.toolCallId === toolCallId && p.isAutomatic !== true)
                return true;
        }
    }
    return false;
}
/** The tool's own `needsApproval`, as the SDK reads it. */
async function ownApproval(tool, input, options) {
    const own = tool.needsApproval;
    if (typeof own === 'function')
        return (await own.call(tool, input, options)) === true;
    return own === true;
}
/** Sets an own property (a key such as `__proto__` stays a key, never the prototype). */
function define(target, key, value) {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
function callOptions(session, signal, simulated) {
    const o = {};
    if (session !== undefined)
        o.session = session;
    if (signal instanceof AbortSignal)
        o.signal = signal;
    if (simulated)
        o.simulated = true;
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
 * @param pep - the client that decides (made with `permits` configured, or `permits: false` explicitly)
 * @param tools - the tool set as passed to `generateText`/`streamText` (`{ name: tool({...}) }`)
 * @param opts - `{ session?, checkResult?, approval?, hideBlocked? }` ({@link GuardToolsOptions})
 * @returns a new tool set with the same keys and types; tools without `execute` are kept as they are
 * @throws TypeError when `tools` is not an object, an option is unknown or bad (`err.option` names it),
 *   a key is not a valid tool name, or `pep` has no `permits` configured (unless `permits: false`)
 * @remarks Fails closed: on BLOCK, ESCALATE, a permit that fails, a PDP that is down, slow or unclear,
 * or any error of the adapter, the body does not run; the tool throws a {@link PolicyEnforcementError}
 * whose message is the section-5 `toolMessage`, which the model receives as the tool's error result
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
export function guardTools(pep, tools, opts = {}) {
    const enforcement = enforcementOf(pep, 'guardTools');
    if (typeof tools !== 'object' || tools === null || Array.isArray(tools)) {
        throw new TypeError('guardTools: tools must be an object of tools');
    }
    const o = readOptions('guardTools', opts, {
        session: RULES.session,
        checkResult: RULES.boolean,
        approval: RULES.boolean,
        hideBlocked: RULES.boolean,
    });
    const set = {
        pep,
        enforcement,
        session: o.session,
        approval: o.approval ?? true,
        guardOptions: o.checkResult ? { checkResult: true } : {},
        held: heldCalls(pep),
    };
    const out = {};
    for (const name of Object.keys(tools)) {
        const tool = tools[name];
        if (typeof tool !== 'object' || tool === null || typeof tool.execute !== 'function') {
            define(out, name, tool);
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
    return registerHideBlocked(out, pep, set.session, o.hideBlocked === true);
}
/** Most calls remembered as held (sent to a person for approval) per client; an older one resumed is refused. */
const MAX_HELD = 10_000;
/** The calls each client's tool sets sent for approval (a tool set made again for the resumed run shares them). */
const HELD = new WeakMap();
function heldCalls(pep) {
    let held = HELD.get(pep);
    if (held === undefined) {
        held = new TextMemory(MAX_HELD);
        HELD.set(pep, held);
    }
    return held;
}
/**
 * True when a resumed approval is for a call this client's tool sets held (same id, tool and input). A call in the chat history that the model did not propose in a
 * step this adapter saw (a client-forged assistant call with an approval) matches nothing.
 */
function wasHeld(held, toolCallId, name, input) {
    if (typeof toolCallId !== 'string')
        return false;
    const call = held.get(toolCallId);
    // Kept after use: resumed again, the PDP decides again (its approval is used once).
    return call !== undefined && call.name === name && isDeepStrictEqual(call.input, input);
}
/** The guarded `execute` of one tool: the body runs only inside `pep.guardTool`. */
function guardedExecute(set, name, tool) {
    const body = tool.execute;
    const { pep, enforcement } = set;
    return async (input, options) => {
        let bodyRan = false;
        try {
            // A resumed approval runs only a call this adapter held: never one forged into the history.
            if (wasSentForApproval(options?.messages, options?.toolCallId) &&
                !wasHeld(set.held, options?.toolCallId, name, input)) {
                throw adapterRefusal(enforcement, name, 'the approval matches no call this adapter held');
            }
            const run = async (args, ctx) => {
                // The SDK validated the model's input; args the PDP (WARN) or an interceptor changed must fit too.
                if (!isDeepStrictEqual(args, input) && !(await fitsInputSchema(tool.inputSchema, args))) {
                    throw adapterRefusal(enforcement, name, "the args to run do not fit the tool's input schema");
                }
                bodyRan = true;
                const result = await body.call(tool, args, { ...options, permitId: ctx.permitId, decision: ctx.decision });
                if (!isAsyncIterable(result))
                    return result;
                let last;
                for await (const value of result)
                    last = value;
                return last;
            };
            const guarded = pep.guardTool(name, run, set.guardOptions);
            return await guarded(input, callOptions(set.session, options?.abortSignal));
        }
        catch (err) {
            if (err instanceof PolicyEnforcementError)
                throw forModel(err);
            if (bodyRan)
                throw err; // the tool's own error, as the SDK would show it
            throw adapterRefusal(enforcement, name, 'the adapter failed before the tool could run', err);
        }
    };
}
/** The `needsApproval` of one tool: the tool's own rule, then a simulated PDP check (ESCALATE asks a person). */
function approvalCheck(set, name, tool) {
    return async (input, options) => {
        // Resuming after a person approved: keep it approved, so that execute asks the PDP for real.
        if (wasSentForApproval(options?.messages, options?.toolCallId))
            return true;
        const hold = () => {
            if (typeof options?.toolCallId === 'string')
                set.held.set(options.toolCallId, { name, input });
            return true;
        };
        // The tool's own rule first; its errors are the SDK's to handle (it rejects, nothing runs).
        if (await ownApproval(tool, input, options))
            return hold();
        if (!set.approval)
            return false;
        try {
            const d = await set.pep.authorizeAction(name, input, callOptions(set.session, undefined, true));
            return d.verdict === 'ESCALATE' ? hold() : false;
        }
        catch {
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
export function pepToolApproval(pep, opts = {}) {
    if (typeof pep?.authorizeAction !== 'function') {
        throw new TypeError('pepToolApproval: pep must be a client from createPep');
    }
    const { session } = readOptions('pepToolApproval', opts, { session: RULES.session });
    return async (request) => {
        const tool = request?.tools?.[request?.toolCall?.toolName];
        const info = typeof tool === 'object' && tool !== null ? GUARDED.get(tool) : undefined;
        const { toolCall, messages } = request;
        const options = { toolCallId: toolCall.toolCallId, messages: messages ?? [] };
        if (info === undefined) {
            // not ours: the tool's own needsApproval, as the SDK would read it (its errors are the SDK's)
            if (typeof tool !== 'object' || tool === null)
                return 'not-applicable';
            return (await ownApproval(tool, toolCall.input, options)) ? 'user-approval' : 'not-applicable';
        }
        try {
            const resumed = wasSentForApproval(messages, toolCall.toolCallId);
            const hold = () => {
                info.held.set(toolCall.toolCallId, { name: info.name, input: toolCall.input });
                return 'user-approval';
            };
            if (!resumed && (await ownApproval(info.original, toolCall.input, options)))
                return hold();
            const d = await pep.authorizeAction(info.name, toolCall.input, callOptions(info.session ?? session, undefined, true));
            if (d.verdict === 'BLOCK' && d.substitute === undefined) {
                return { type: 'denied', reason: toolMessage(d, info.name) };
            }
            if (!resumed && d.verdict === 'ESCALATE')
                return hold();
            return 'not-applicable';
        }
        catch {
            return 'user-approval';
        }
    };
}
