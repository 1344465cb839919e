import { isAbortSignal, isSessionId } from '../internal/guards.js';
import { NotJsonError, snapshotJsonObject } from '../internal/json.js';
import { DEFAULTS } from '../options/pep.js';
import { canonicalSnapshotJson } from '../permit/hash.js';
import { normalizeToolName } from '../permit/normalize.js';
/** Why a call could not become a request; its message names the problem, never a value. */
export class InvalidRequest extends Error {
    name = 'InvalidRequest';
}
/** Reads `args` once into a deep copy of JSON values, or records why that failed (never re-read). */
export function takeSnapshot(args) {
    try {
        return { ok: true, args: snapshotJsonObject(args) };
    }
    catch (error) {
        return { ok: false, error };
    }
}
/** Names the kind of value that is not JSON; never copies a message the args themselves threw. */
function argsMessage(error) {
    return error instanceof NotJsonError
        ? `args are not a plain object of JSON values: ${error.message}`
        : 'args could not be read as a plain object of JSON values';
}
export { isAbortSignal, isSessionId };
/** The keys of {@link CallOptions}; `checkContextEgress` also takes `tool` (CONTRACT.md section 2). */
const CALL_KEYS = new Set(['signal', 'session', 'simulated']);
const EGRESS_CALL_KEYS = new Set([...CALL_KEYS, 'tool']);
/** Most characters of an unknown key named in a message (the key is the caller's, but may be long). */
const KEY_SHOWN = 64;
/**
 * Refuses a per-call option key that is not known (CONTRACT.md section 2, v3): a misspelt `tool` must
 * never skip the tool's rules. @throws InvalidRequest naming the first unknown key (cut to 64 characters)
 */
function refuseUnknownCallKeys(o, known) {
    for (const key of Object.keys(o)) {
        if (known.has(key))
            continue;
        const shown = key.length > KEY_SHOWN ? `${key.slice(0, KEY_SHOWN)}...` : key;
        throw new InvalidRequest(`unknown call option ${JSON.stringify(shown)}`);
    }
}
/**
 * Reads the per-call options once. Unknown keys are refused.
 * @throws InvalidRequest on a bad option
 */
export function readCallOptions(raw, stage, defaults) {
    if (raw === undefined)
        return { signal: undefined, session: defaults.session, simulated: defaults.simulated, tool: undefined };
    if (typeof raw !== 'object' || raw === null)
        throw new InvalidRequest('call options must be an object');
    const o = raw;
    refuseUnknownCallKeys(o, stage === 'context_egress' ? EGRESS_CALL_KEYS : CALL_KEYS);
    const { signal, session, simulated } = o;
    const tool = stage === 'context_egress' ? o.tool : undefined;
    if (signal !== undefined && !isAbortSignal(signal))
        throw new InvalidRequest('signal must be an AbortSignal');
    if (session !== undefined && !isSessionId(session))
        throw new InvalidRequest('session must be a non-empty string');
    if (simulated !== undefined && typeof simulated !== 'boolean')
        throw new InvalidRequest('simulated must be a boolean');
    return { signal, session: session ?? defaults.session, simulated: simulated ?? defaults.simulated, tool };
}
/**
 * Checks a tool name and normalizes it (docs/api.md, docs/permits.md and docs/dev-pdp.md).
 * @throws InvalidRequest when it is not a string, is longer than 256 characters, or normalizes to nothing
 */
export function checkToolName(tool) {
    if (typeof tool !== 'string' || !tool.isWellFormed())
        throw new InvalidRequest('tool must be a string');
    if (tool.length > DEFAULTS.maxToolNameLength) {
        throw new InvalidRequest(`tool name longer than ${DEFAULTS.maxToolNameLength} characters`);
    }
    try {
        return normalizeToolName(tool);
    }
    catch {
        throw new InvalidRequest('tool name normalizes to nothing');
    }
}
/** Checks text content. @throws InvalidRequest */
function checkContent(content) {
    if (typeof content !== 'string')
        throw new InvalidRequest('content must be a string');
    if (!content.isWellFormed())
        throw new InvalidRequest('content contains a lone surrogate');
    return content;
}
/**
 * Builds the request of one stage call. Args are read once: a snapshot `guardTool` already took (or
 * failed to take) is used as it is.
 * @throws InvalidRequest when the call cannot become a request
 */
export function prepare(stage, payload, call, agentId, requestId, snapshot) {
    const req = { agentId, session: call.session, stage, requestId };
    const sent = { stage, requestId, agentId, session: call.session, simulated: false };
    if ('content' in payload) {
        req.content = checkContent(payload.content);
        if (call.tool !== undefined) {
            sent.tool = checkToolName(call.tool);
            req.tool = call.tool;
        }
    }
    else {
        const normalized = checkToolName(payload.tool);
        const taken = snapshot ?? takeSnapshot(payload.args);
        if (!taken.ok)
            throw new InvalidRequest(argsMessage(taken.error));
        req.tool = payload.tool;
        req.args = taken.args;
        sent.tool = normalized;
        sent.args = taken.args;
        sent.argsJson = canonicalSnapshotJson(taken.args);
    }
    if (call.simulated)
        req.simulated = sent.simulated = true;
    if (call.purpose !== undefined)
        req.purpose = call.purpose;
    if (call.visibilityBatch !== undefined)
        req.visibilityBatch = call.visibilityBatch;
    return { req, sent, call };
}
/**
 * Puts an interceptor's `proceedWith` value in place of the running args or content (docs/interceptors.md): it must be valid input, as the caller's own would be.
 * @throws InvalidRequest when it is not
 */
export function replaceRunningValue(p, value) {
    p.replaced = true;
    if (p.sent.stage === 'action') {
        const taken = value.args ?? { ok: false, error: new NotJsonError('args must be a plain object') };
        if (!taken.ok)
            throw new InvalidRequest(`an interceptor's replacement ${argsMessage(taken.error)}`);
        // A copy of the frozen snapshot the later interceptors saw (ours: reading it again reads the same),
        // so that the args a tool runs with are not frozen.
        const args = snapshotJsonObject(taken.args);
        p.req.args = p.sent.args = args;
        p.sent.argsJson = canonicalSnapshotJson(args);
    }
    else {
        p.req.content = checkContent(value.content);
    }
}
/** The headers every request of one client carries but `x-request-id`. */
export function baseHeaders(userAgent, apiKey) {
    const headers = {
        'content-type': 'application/json',
        accept: 'application/json',
        'user-agent': userAgent,
    };
    if (apiKey !== undefined)
        headers.authorization = `Bearer ${apiKey}`;
    return Object.freeze(headers);
}
