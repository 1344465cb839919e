/**
 * What a guarded MCP `Client` offers the model (docs/visibility.md): `tools/list` answers filtered by
 * the pins (a changed or unpinned tool is hidden) and by `pep.visibleTools` (a tool the policy blocks
 * is hidden), and the pin check of each `tools/call` (a `tool_changed` refusal). Internal to `agent-pep/mcp`.
 * @internal
 */
import { ListToolsResultSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { synthesizeBlock } from '../../decision.js';
import { kernelOf } from '../../enforce/registry.js';
import { toolMessage } from '../../errors.js';
import { isObject, refusal, sessionOf } from './common.js';
import { PinBook, toolChangedMessage } from './pins.js';
/** Most pages one re-check reads (a server that pages forever is refused). */
const MAX_PAGES = 100;
/** A `tool_changed` refusal, observed by the Pep's `onDecision` and telemetry like any synthesized BLOCK. */
function toolChanged(pep, name, message) {
    const kernel = kernelOf(pep);
    if (kernel !== undefined)
        return refusal(kernel.refuse({ stage: 'action', tool: name }, 'tool_changed', message).toolMessage);
    // not a client from createPep (a wrapper): nobody to observe the refusal
    const decision = synthesizeBlock('action', globalThis.crypto.randomUUID(), 'tool_changed', message, 0);
    return refusal(toolMessage(decision, name));
}
/** The session of the client's transport, else the Pep's. */
function callOptions(client, options) {
    const out = {};
    const session = sessionOf(client.transport?.sessionId);
    if (session !== undefined)
        out.session = session;
    if (isObject(options) && options.signal instanceof AbortSignal)
        out.signal = options.signal;
    return out;
}
/** The listed tools of a `tools/list` result (objects with a string name), or undefined for anything else. */
function toolsOf(result) {
    if (!isObject(result) || !Array.isArray(result.tools))
        return undefined;
    return result.tools.filter((t) => isObject(t) && typeof t.name === 'string');
}
/** Makes the tool surface of a guarded client; installs the `list_changed` re-check when pinning. */
export function makeToolSurface(deps) {
    const { scope, pep, client, request, hideBlocked, allowNew } = deps;
    const book = deps.pin === undefined ? undefined : new PinBook(deps.pin === true ? undefined : deps.pin, allowNew);
    const serverOf = () => typeof client.getServerVersion === 'function'
        ? client.getServerVersion.call(client)
        : undefined;
    if (book) {
        book.checkServer(scope, serverOf());
        watchListChanged(client, () => {
            book.invalidate();
            // The re-check now; a call before it ends waits for its own (refresh is shared).
            refresh(undefined).catch(() => undefined);
        });
    }
    let refreshing;
    /** Reads the whole list (every page) through the SDK's own request and checks it against the pins. */
    function refresh(options) {
        refreshing ??= (async () => {
            try {
                let cursor;
                for (let page = 0; page < MAX_PAGES; page++) {
                    const params = typeof cursor === 'string' ? { cursor } : undefined;
                    const result = await request.call(client, { method: 'tools/list', params }, ListToolsResultSchema, options);
                    checkPage(result, page > 0);
                    cursor = isObject(result) ? result.nextCursor : undefined;
                    if (typeof cursor !== 'string')
                        return;
                }
                book?.invalidate();
            }
            finally {
                refreshing = undefined;
            }
        })();
        return refreshing;
    }
    const checkPage = (result, continuing) => book?.checkServer(scope, serverOf()) ?? book?.check(toolsOf(result) ?? [], continuing);
    return {
        async list(req, resultSchema, options) {
            const result = await request.call(client, req, resultSchema, options);
            let tools = toolsOf(result);
            if (tools === undefined || !isObject(result))
                return result;
            if (book) {
                const params = isObject(req.params) ? req.params : {};
                checkPage(result, typeof params.cursor === 'string');
                tools = tools.filter((t) => book.statusOf(t.name).kind === 'ok');
            }
            if (hideBlocked && tools.length > 0) {
                const visible = new Set(await pep.visibleTools(tools.map((t) => t.name), callOptions(client, options)));
                tools = tools.filter((t) => visible.has(t.name));
            }
            return { ...result, tools };
        },
        async refuseCall(name, options) {
            if (!book)
                return undefined;
            if (!book.current) {
                try {
                    await refresh(options);
                }
                catch (err) {
                    if (err instanceof TypeError && err.option === 'pin')
                        throw err;
                    return toolChanged(pep, name, 'the tool list could not be read to check the pins');
                }
            }
            const status = book.statusOf(name);
            return status.kind === 'ok' ? undefined : toolChanged(pep, name, toolChangedMessage(name, status));
        },
        pins: () => book?.toJSON(),
    };
}
/**
 * Calls `onChange` on every `notifications/tools/list_changed`, beside any handler the host (or the
 * SDK's `listChanged` option) sets for it later, through the client's public `setNotificationHandler`.
 */
function watchListChanged(client, onChange) {
    const set = client.setNotificationHandler;
    if (typeof set !== 'function')
        return;
    const isListChanged = (schema) => {
        if (schema === ToolListChangedNotificationSchema)
            return true;
        const method = schema?.shape?.method?.value;
        return method === 'notifications/tools/list_changed';
    };
    const compose = (handler) => (...args) => {
        onChange();
        return handler?.(...args);
    };
    set.call(client, ToolListChangedNotificationSchema, compose(undefined));
    Object.defineProperty(client, 'setNotificationHandler', {
        value: (schema, handler) => set.call(client, schema, isListChanged(schema) ? compose(handler) : handler),
        writable: false,
        configurable: false,
    });
}
