import { getLiteralValue } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { optionError, refuseUnknownKeys } from '../../options/kit.js';
import { normalizeToolName } from '../../permit/normalize.js';
import { assertGuardable, assertPep, isObject, refusals, sessionOf } from './common.js';
import { makeRunner } from './server-call.js';
import { guardTransport } from './transport.js';
const SERVER_OPTIONS = new Set(['verifier', 'hideBlocked']);
const guardedServers = new WeakSet();
/** The method a request schema is for (`tools/call`, ...), or undefined. */
function methodOf(schema) {
    if (schema === CallToolRequestSchema)
        return 'tools/call';
    if (schema === ListToolsRequestSchema)
        return 'tools/list';
    try {
        const shape = schema?.shape;
        return shape?.method === undefined ? undefined : getLiteralValue(shape.method);
    }
    catch {
        return undefined;
    }
}
/** The normalized form of a tool name, or undefined for one that normalizes to nothing (refused when called). */
function normalized(key) {
    if (typeof key !== 'string')
        return undefined;
    try {
        return normalizeToolName(key);
    }
    catch {
        return undefined;
    }
}
/** Whether the low-level server has a handler for `method` (public `assertCanSetRequestHandler` throws then). */
function hasHandler(low, method) {
    try {
        low.assertCanSetRequestHandler(method);
        return false;
    }
    catch {
        return true;
    }
}
/** The checked options and server. @throws TypeError */
function checkArguments(pep, server, opts) {
    const scope = 'guardMcpServer';
    assertPep(pep, scope);
    const rawOpts = opts;
    if (rawOpts !== undefined && !isObject(rawOpts))
        optionError(scope, 'opts', 'expected an object');
    if (rawOpts !== undefined)
        refuseUnknownKeys(scope, rawOpts, SERVER_OPTIONS);
    const verifier = opts?.verifier;
    const given = verifier;
    if (given !== undefined && !(isObject(given) && typeof given.verify === 'function')) {
        optionError(scope, 'verifier', 'expected a PermitVerifier (createPermitVerifier)');
    }
    const hideBlocked = opts?.hideBlocked ?? true;
    if (typeof hideBlocked !== 'boolean')
        optionError(scope, 'hideBlocked', 'expected a boolean');
    const s = server;
    const low = isObject(server) ? s.server : undefined;
    if (!isObject(server) ||
        typeof s.registerTool !== 'function' ||
        typeof s.tool !== 'function' ||
        !isObject(low) ||
        typeof low.setRequestHandler !== 'function' ||
        typeof low.assertCanSetRequestHandler !== 'function') {
        throw new TypeError(`${scope}: server must be an McpServer of @modelcontextprotocol/sdk 1.x`);
    }
    if (guardedServers.has(server))
        throw new TypeError(`${scope}: this server is already guarded`);
    // Tools registered before this call: the SDK's tools/list and tools/call handlers are there, and their
    // callbacks are out of the public API's reach, so their calls are decided on the transport. A tools/call
    // handler without the SDK's tools/list beside it was set on the low-level server: code the guard cannot see.
    const preexisting = hasHandler(low, 'tools/call');
    if (preexisting && !hasHandler(low, 'tools/list')) {
        throw new TypeError(`${scope}: the low-level server has a tools/call handler of its own, which the guard cannot see`);
    }
    if (verifier === undefined)
        assertGuardable(pep, scope);
    return { scope, verifier, hideBlocked: hideBlocked, low, preexisting };
}
/**
 * Guards every tool of an `McpServer` (`@modelcontextprotocol/sdk` 1.x): those registered after this call
 * (`registerTool`, the older `tool()` overloads, the experimental task tools), including a callback
 * swapped in later with `RegisteredTool.update({ callback })` or assigned to `handler`, and a tool
 * renamed with `update({ name })` (it is decided under its new name), and those registered before it.
 * It uses the SDK's public API only (docs/adapters.md names the SDK line tested): the tools registered
 * before it are guarded on the server's transport (the public `Transport` interface, now if connected,
 * else at `connect`): each `tools/call` to them is decided, or its permit verified, on the arguments as
 * received before the server sees it (the guard cannot see their input schema: guard first where a
 * schema defaults, coerces or transforms; docs/adapters.md), and look-alike names among them are
 * refused when called. The rules below on parsed args are those of tools registered after it.
 *
 * Without a verifier, each `tools/call` goes through `pep.guardTool` with the tool name as registered
 * and the arguments as the tool's input schema parsed them (coercions and defaults applied: what the
 * callback gets): the PDP decides, the permit is verified, interceptors apply (a `substitute` answers
 * without running the tool, `after` interceptors see the result), and the callback runs with the PDP's
 * `transformedArgs` on WARN (parsed by the tool's input schema first; args it would change are refused).
 * With `{ verifier }`, the server does not ask the PDP: it verifies the permit the client's PEP put in
 * `params._meta['agent-pep/permit']` against the tool name as registered and the arguments as
 * received, claims its `jti` (so a replayed request is refused), and only then runs the callback (a
 * schema whose parse adds a member, such as a default, or changes a value sent, such as a coercion, is
 * refused: the permit binds the arguments sent). `tools/list` answers only the tools
 * `pep.visibleTools` shows for the session, unless `{ hideBlocked: false }` (docs/visibility.md).
 *
 * @param pep - the client that decides (`createPep`); it must be able to guard tools (`permits`
 *   configured, or `permits: false`) unless `opts.verifier` is given. Session: the MCP session id
 *   (`extra.sessionId`) where the transport has one, else the Pep's.
 * @param server - an `McpServer` of `@modelcontextprotocol/sdk` 1.x, before or after `connect`, with or without tools
 * @param opts - `{ verifier?, hideBlocked? }` (see {@link GuardMcpServerOptions})
 * @returns the same server
 * @throws TypeError when `pep` is not a Pep or cannot guard tools, `server` is not an `McpServer` 1.x,
 *   the server is already guarded, its low-level `server.server` has a `tools/call` handler of its own
 *   (without the SDK's `tools/list` beside it), its transport's `onmessage` or `send` cannot be
 *   redefined (also at a later `connect`, rejected), or `opts` has an unknown or bad key (`err.option`
 *   names it); later,
 *   `server.server.setRequestHandler` for `tools/call` (that handler would answer every call without the
 *   guard) and registering or renaming a tool to a name that normalizes like another's (`refundPayment`,
 *   `refund_payment`: a permit names the normalized tool) throw `TypeError` too
 * @remarks Fails closed: a blocked or held call, a PDP that is down or slow, a permit that is missing
 * or fails any check, and any error of the adapter itself answer `{ isError: true, content: [{ type:
 * 'text', text: toolMessage }] }` and the callback does not run. ESCALATE is a hold the model is told
 * about: MCP 1.x has no human-approval flow for `tools/call`. An error thrown by the callback itself is
 * the SDK's usual tool error. With a verifier, refusals are not sent to the PDP, so its evidence does
 * not show them; the Pep's interceptors do not run on the server (the client's did). A PDP that fails
 * during `tools/list` hides every tool.
 * @example
 * ```ts
 * const server = new McpServer({ name: 'payments', version: '1.0.0' });
 * guardMcpServer(pep, server, {
 *   verifier: createPermitVerifier({ keys: jwksUrl, issuer, audience: 'payments-mcp' }),
 * });
 * server.registerTool('refund_payment', { inputSchema: { orderId: z.string(), amount: z.number() } },
 *   async ({ orderId, amount }) => ({ content: [{ type: 'text', text: `refunded ${amount} on ${orderId}` }] }));
 * ```
 */
export function guardMcpServer(pep, server, opts) {
    const { scope, verifier, hideBlocked, low, preexisting } = checkArguments(pep, server, opts);
    /** Each guarded tool and the name it is registered under now. */
    const names = new Map();
    const received = new WeakMap();
    const run = makeRunner({ pep, verifier, received, nameOf: (tool) => names.get(tool) });
    /** Refuses `name` when another guarded tool's name normalizes alike: a permit could not tell them apart. */
    function refuseLookalike(name, self) {
        const norm = normalized(name);
        if (norm === undefined)
            return;
        for (const [tool, other] of names) {
            if (tool !== self && other !== name && normalized(other) === norm) {
                throw new TypeError(`${scope}: tools ${JSON.stringify(other.slice(0, 64))} and ${JSON.stringify(String(name).slice(0, 64))} have the same normalized name; a permit cannot tell them apart`);
            }
        }
    }
    const adopt = adopter(run, names, refuseLookalike);
    let installing = false;
    /** A registration method that guards the tool it makes. */
    const registering = (register, self) => (...args) => {
        refuseLookalike(args[0], undefined);
        installing = true;
        let tool;
        try {
            tool = register.apply(self, args);
        }
        finally {
            installing = false;
        }
        if (isObject(tool) && typeof args[0] === 'string')
            adopt(tool, args[0]);
        return tool;
    };
    const s = server;
    for (const method of ['registerTool', 'tool']) {
        define(server, method, registering(s[method], server));
    }
    const tasks = experimentalTasks(server);
    if (tasks)
        define(tasks, 'registerToolTask', registering(tasks.registerToolTask, tasks));
    guardLowLevel(low, scope, {
        installing: () => installing,
        onCall: (handler) => recording(handler, received),
        onList: (handler) => (hideBlocked ? listing(pep, handler) : handler),
    });
    if (preexisting) {
        const wrapped = (name) => [...names.values()].includes(name);
        const filterList = hideBlocked
            ? (result, session) => visibleOnly(pep, result, { ...(session ? { session } : {}) })
            : undefined;
        onTransport(low, scope, (transport) => guardTransport(transport, { pep, verifier, wrapped, filterList }, scope));
    }
    guardedServers.add(server);
    return server;
}
/** Defines a method that cannot be replaced. */
function define(target, key, value) {
    Object.defineProperty(target, key, { value, writable: false, configurable: false });
}
/** `server.experimental.tasks` where the SDK has it (a public, experimental getter), else undefined. */
function experimentalTasks(server) {
    try {
        const tasks = server.experimental?.tasks;
        return isObject(tasks) && typeof tasks.registerToolTask === 'function' ? tasks : undefined;
    }
    catch {
        return undefined;
    }
}
/**
 * How a registered tool is guarded: its `handler` becomes an accessor that always yields the guarded
 * form (whatever `update({ callback })` or an assignment puts there), and its `update` keeps the name
 * it is decided under (and refuses a look-alike rename).
 */
function adopter(run, names, refuseLookalike) {
    return (tool, name) => {
        names.set(tool, name);
        let guarded = guardedHandler(tool, tool.handler, run);
        Object.defineProperty(tool, 'handler', {
            get: () => guarded,
            set: (value) => {
                guarded = guardedHandler(tool, value, run);
            },
            enumerable: true,
            configurable: false,
        });
        const update = tool.update;
        define(tool, 'update', (updates) => {
            const rename = isObject(updates) && 'name' in updates ? updates.name : undefined;
            if (typeof rename === 'string')
                refuseLookalike(rename, tool);
            update.call(tool, updates);
            if (typeof rename === 'string')
                names.set(tool, rename);
            else if (isObject(updates) && 'name' in updates && updates.name === null)
                names.delete(tool);
        });
    };
}
/** The guarded form of a tool's callback or task handler (per tool: one callback may serve several). */
function guardedHandler(tool, handler, run) {
    if (typeof handler === 'function') {
        return (...callArgs) => run(tool, handler, callArgs);
    }
    if (isObject(handler) && typeof handler.createTask === 'function') {
        // A task tool: a refusal is thrown, so that the SDK answers it as the tool error with that text.
        const createTask = handler.createTask;
        const guardedCreate = async (...callArgs) => {
            const out = await run(tool, createTask.bind(handler), callArgs);
            if (isObject(out) && refusals.has(out))
                throw new Error(out.content[0]?.text);
            return out;
        };
        return { ...handler, createTask: guardedCreate };
    }
    // Neither: the SDK cannot call it either (it answers a tool error); nothing to guard.
    return handler;
}
/** The SDK's tools/call handler, recording what each request carried before it runs. */
function recording(handler, received) {
    return (request, extra) => {
        const params = isObject(request) && isObject(request.params) ? request.params : {};
        if (isObject(extra))
            received.set(extra, { name: params.name, arguments: params.arguments, _meta: params._meta });
        return handler(request, extra);
    };
}
/** A tools/list handler whose answer keeps only the tools `pep.visibleTools` shows for the session. */
function listing(pep, handler) {
    return async (request, extra) => {
        const result = (await handler(request, extra));
        const o = {};
        const session = isObject(extra) ? sessionOf(extra.sessionId) : undefined;
        if (session !== undefined)
            o.session = session;
        if (isObject(extra) && extra.signal instanceof AbortSignal)
            o.signal = extra.signal;
        return await visibleOnly(pep, result, o);
    };
}
/** A tools/list result with only the tools `pep.visibleTools` shows. */
async function visibleOnly(pep, result, o) {
    if (!isObject(result) || !Array.isArray(result.tools))
        return result;
    const listed = result.tools;
    const names = listed.map((t) => (isObject(t) && typeof t.name === 'string' ? t.name : undefined));
    const visible = new Set(await pep.visibleTools(names.filter((n) => n !== undefined), o));
    return { ...result, tools: listed.filter((_, i) => names[i] !== undefined && visible.has(names[i])) };
}
/**
 * Runs `install` on the low-level server's transport: now if it is connected (the public `transport`
 * getter), and on each transport `connect` is given later, before it starts (so that no message the
 * transport had queued reaches the server unguarded).
 * @throws TypeError when the transport is not an MCP `Transport`
 */
function onTransport(low, scope, install) {
    const check = (t) => {
        if (!isObject(t) || typeof t.send !== 'function' || typeof t.start !== 'function') {
            throw new TypeError(`${scope}: the server's transport is not an MCP Transport`);
        }
        return t;
    };
    if (low.transport !== undefined)
        install(check(low.transport));
    const connect = low.connect;
    define(low, 'connect', (transport) => {
        const t = check(transport);
        install(t);
        return connect.call(low, t);
    });
}
/**
 * Through the low-level server's public API: only the SDK's own install (inside a registration) may set
 * the tools/call handler, which is wrapped as it is set, as the tools/list handler is; the
 * `fallbackRequestHandler` never answers tools/call or tools/list (code the guard cannot see).
 */
function guardLowLevel(low, scope, hooks) {
    const set = low.setRequestHandler;
    define(low, 'setRequestHandler', (schema, handler) => {
        const method = methodOf(schema);
        if (method === 'tools/call') {
            if (!hooks.installing()) {
                throw new TypeError(`${scope}: a tools/call handler set on the low-level server would bypass the guard; register tools on the McpServer`);
            }
            return set.call(low, schema, hooks.onCall(handler));
        }
        return set.call(low, schema, method === 'tools/list' ? hooks.onList(handler) : handler);
    });
    let fallback = low.fallbackRequestHandler;
    const refusing = new WeakMap();
    Object.defineProperty(low, 'fallbackRequestHandler', {
        get() {
            if (typeof fallback !== 'function')
                return fallback;
            let wrapped = refusing.get(fallback);
            if (wrapped === undefined) {
                const inner = fallback;
                wrapped = (request, extra) => {
                    const method = isObject(request) ? request.method : undefined;
                    if (method === 'tools/call' || method === 'tools/list') {
                        return Promise.reject(new McpError(ErrorCode.MethodNotFound, 'Method not found'));
                    }
                    return inner(request, extra);
                };
                refusing.set(fallback, wrapped);
            }
            return wrapped;
        },
        set(value) {
            fallback = value;
        },
        enumerable: true,
        configurable: false,
    });
}
