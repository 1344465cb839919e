/**
 * The transport route of `guardMcpServer` (docs/adapters.md): for a server that had tools before it was
 * guarded, each JSON-RPC `tools/call` to such a tool is decided as it arrives on the server's transport
 * (`Transport.onmessage` and `Transport.send`, the SDK's public transport interface), before the server
 * sees it; `tools/list` answers are filtered on the way out. Internal to `agent-pep/mcp`.
 * @internal
 */
import { PolicyEnforcementError } from '../../errors.js';
import { normalizeToolName } from '../../permit/normalize.js';
import { asToolResult, failedClosed, isObject, refusal, sessionOf } from './common.js';
import { permitRefusal } from './server-call.js';
/** Thrown inside the guarded execute when the server answered with a JSON-RPC error. */
class ErrorAnswer extends Error {
    response;
    constructor(response) {
        super('the server answered an error');
        this.response = response;
    }
}
const guardedTransports = new WeakSet();
/**
 * Puts the guard between `transport` and the server: `onmessage` becomes an accessor whose value is
 * always the guarded form of what the server (or anyone) sets, and `send` sees each answer first.
 * @throws TypeError when the transport's `onmessage` or `send` cannot be redefined
 */
export function guardTransport(transport, deps, scope) {
    if (guardedTransports.has(transport))
        return;
    const guard = new TransportGuard(transport, deps);
    try {
        Object.defineProperty(transport, 'onmessage', {
            get: () => guard.onmessage(),
            set: (value) => {
                guard.inner = value;
            },
            enumerable: true,
            configurable: false,
        });
        const send = (message, options) => guard.send(message, options);
        Object.defineProperty(transport, 'send', { value: send, writable: false, enumerable: true, configurable: false });
    }
    catch (cause) {
        throw new TypeError(`${scope}: the server's transport cannot be guarded (onmessage or send is fixed)`, { cause });
    }
    guardedTransports.add(transport);
}
/** One guarded transport: what arrives, what was forwarded, and what waits for the server's answer. */
class TransportGuard {
    transport;
    deps;
    /** The handler the server set (`Protocol.connect`), which the guarded one forwards to. */
    inner;
    forwarded = new WeakSet();
    pending = new Map();
    lists = new Set();
    /** The calls being decided, by request id: a `notifications/cancelled` aborts the decision. */
    deciding = new Map();
    rawSend;
    guarded;
    constructor(transport, deps) {
        this.transport = transport;
        this.deps = deps;
        this.inner = transport.onmessage;
        this.rawSend = transport.send.bind(transport);
        this.guarded = (message, extra) => this.receive(message, extra);
    }
    onmessage() {
        return this.inner === undefined ? undefined : this.guarded;
    }
    answer(id, result) {
        return this.rawSend({ jsonrpc: '2.0', id, result });
    }
    /** Each message the transport receives: a tools/call is decided first, the rest go on as they came. */
    receive(message, extra) {
        const handler = this.inner;
        if (handler === undefined)
            return;
        if (!isObject(message) || this.forwarded.has(message) || !('id' in message)) {
            if (isObject(message) && message.method === 'notifications/cancelled')
                this.cancel(message);
            handler(message, extra);
            return;
        }
        if (message.method === 'tools/list' && this.deps.filterList !== undefined)
            this.lists.add(message.id);
        if (message.method !== 'tools/call') {
            handler(message, extra);
            return;
        }
        const params = isObject(message.params) ? message.params : {};
        void this.decide(message, params, (m) => {
            this.forwarded.add(m);
            handler(m, extra);
        });
    }
    cancel(message) {
        const id = isObject(message.params) ? message.params.requestId : undefined;
        this.deciding.get(id)?.abort();
        this.pending.get(id)?.settle(undefined);
    }
    /** Delivers `message` and waits for the server's answer to it (undefined when cancelled). */
    exchange(message, deliver) {
        return new Promise((resolve) => {
            this.pending.set(message.id, {
                settle: (response) => {
                    this.pending.delete(message.id);
                    resolve(response);
                },
            });
            deliver(message);
        });
    }
    /** Forwards the call with `args`; the server's result, or an ErrorAnswer. */
    async forward(message, params, args, deliver) {
        const response = await this.exchange({ ...message, params: { ...params, arguments: args } }, deliver);
        if (response === undefined)
            throw new ErrorAnswer({});
        if ('error' in response)
            throw new ErrorAnswer(response);
        return response.result;
    }
    /** Whether another tool of the server has a name that normalizes like `name`: a permit cannot tell them apart. */
    async hasLookalike(name, deliver) {
        const norm = normalized(name);
        if (norm === undefined)
            return false;
        // A tools/list of the guard's own (never answered to the client).
        const id = `agent-pep/${globalThis.crypto.randomUUID()}`;
        const response = await this.exchange({ jsonrpc: '2.0', id, method: 'tools/list', params: {} }, deliver);
        const tools = isObject(response) && isObject(response.result) ? response.result.tools : undefined;
        if (!Array.isArray(tools))
            throw new Error('no tool list');
        return tools.some((t) => isObject(t) && t.name !== name && typeof t.name === 'string' && normalized(t.name) === norm);
    }
    /** One tools/call: refused (answered here), or forwarded as decided and its answer sent. */
    async decide(message, params, deliver) {
        const name = typeof params.name === 'string' ? params.name : 'unknown';
        const args = params.arguments ?? {};
        const refuse = (why) => this.answer(message.id, failedClosed(name, 'invalid_request', why));
        const run = (a) => {
            if (controller.signal.aborted)
                throw new ErrorAnswer({});
            return this.forward(message, params, a, deliver);
        };
        const controller = new AbortController();
        try {
            if (this.deciding.has(message.id) || this.pending.has(message.id)) {
                return await refuse('a request with this id is in flight');
            }
            this.deciding.set(message.id, controller);
            if (typeof params.name !== 'string')
                return await refuse('no tool name');
            if (await this.hasLookalike(name, deliver))
                return await refuse('another tool has the same normalized name');
            // A tool registered after guarding: its wrapped callback decides (with the schema in view).
            if (this.deps.wrapped(name))
                return deliver(message);
            if (this.deps.verifier !== undefined) {
                const refused = await permitRefusal(this.deps.verifier, name, args, params._meta);
                return await this.answer(message.id, refused ?? (await run(args)));
            }
            if (!isObject(args))
                return await refuse('arguments are not an object');
            const callOpts = {};
            const session = sessionOf(this.transport.sessionId);
            if (session !== undefined)
                callOpts.session = session;
            callOpts.signal = controller.signal;
            const out = await this.deps.pep.guardTool(name, run)(args, callOpts);
            return await this.answer(message.id, asToolResult(out));
        }
        catch (err) {
            if (err instanceof ErrorAnswer) {
                if ('error' in err.response)
                    await this.rawSend(err.response).catch(() => undefined);
                return;
            }
            const result = err instanceof PolicyEnforcementError
                ? refusal(err.toolMessage)
                : failedClosed(name, 'invalid_request', 'the adapter failed');
            if (!controller.signal.aborted)
                await this.answer(message.id, result).catch(() => undefined);
        }
        finally {
            if (this.deciding.get(message.id) === controller)
                this.deciding.delete(message.id);
        }
    }
    /** Each message the server sends: an answer the guard waits for is kept, a tools/list answer filtered. */
    async send(message, options) {
        if (isObject(message) && !('method' in message) && 'id' in message) {
            const waiting = this.pending.get(message.id);
            if (waiting !== undefined)
                return waiting.settle(message);
            if (this.lists.delete(message.id) && this.deps.filterList !== undefined && 'result' in message) {
                let result;
                try {
                    result = await this.deps.filterList(message.result, sessionOf(this.transport.sessionId));
                }
                catch {
                    result = { tools: [] };
                }
                return this.rawSend({ ...message, result }, options);
            }
        }
        return this.rawSend(message, options);
    }
}
/** The normalized form of a tool name, or undefined for one that normalizes to nothing. */
function normalized(name) {
    try {
        return normalizeToolName(name);
    }
    catch {
        return undefined;
    }
}
