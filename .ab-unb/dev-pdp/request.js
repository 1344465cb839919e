/**
 * One decision request, whichever protocol carried it: the checks both the native protocol
 * (docs/fail-closed.md) and AuthZEN (section 9) apply before a decision.
 * @packageDocumentation
 */
import { isTextStage, STAGES } from '../decision.js';
import { snapshotJsonObject } from '../internal/json.js';
import { referenceActionHash } from '../permit/hash.js';
import { normalizeToolName } from '../permit/normalize.js';
import { DEV_PDP_DEFAULTS } from './defaults.js';
import { badRequest, HttpError, REQUEST_ID } from './http.js';
import { randomId } from './signing.js';
/**
 * Normalizes a tool name: at most 256 characters as sent, and something left after normalizing.
 * @throws HttpError 400 `bad_request`
 * @internal
 */
export function checkTool(tool) {
    if (typeof tool !== 'string')
        throw badRequest('tool must be a string');
    if (tool.length > DEV_PDP_DEFAULTS.maxToolNameLength) {
        throw badRequest(`tool names are at most ${DEV_PDP_DEFAULTS.maxToolNameLength} characters`);
    }
    try {
        return normalizeToolName(tool);
    }
    catch {
        throw badRequest('tool normalizes to nothing');
    }
}
/**
 * Checks the fields of one decision, in the protocol-independent way: agent listed by the policy,
 * session, stage, request id (and its agreement with `x-request-id`), `content` on text stages, `tool`
 * on the action stage (and optionally on context_egress), `args` a plain object of JSON values.
 * @throws HttpError 400 `bad_request`, 404 `unknown_agent`
 * @internal
 */
export function checkRequest(fields, policy, headerId, where = '', sessionOptional = false) {
    const { agentId, stage, requestId, simulated, content, tool, args } = fields;
    const at = (name) => `${where}${name}`;
    if (typeof agentId !== 'string' || agentId.length === 0)
        throw badRequest(`${at('agentId')} must be a non-empty string`);
    const stateless = sessionOptional && fields.session === undefined;
    const session = stateless ? '' : fields.session;
    if (!stateless && (typeof session !== 'string' || session.length === 0))
        throw badRequest(`${at('session')} must be a non-empty string`);
    if (typeof stage !== 'string' || !STAGES.includes(stage))
        throw badRequest(`${at('stage')} is not a stage`);
    if (requestId !== undefined && (typeof requestId !== 'string' || !REQUEST_ID.test(requestId))) {
        throw badRequest(`${at('requestId')} must be 1-200 visible ASCII characters`);
    }
    if (requestId !== undefined && headerId !== undefined && requestId !== headerId) {
        throw badRequest(`${at('requestId')} differs from the x-request-id header`);
    }
    if (simulated !== undefined && typeof simulated !== 'boolean')
        throw badRequest(`${at('simulated')} must be a boolean`);
    const out = {
        agentId,
        session: session,
        ...(stateless ? { stateless: true } : {}),
        stage: stage,
        requestId: requestId ?? headerId ?? randomId('req_'),
        simulated: simulated === true,
    };
    if (isTextStage(stage)) {
        if (typeof content !== 'string')
            throw badRequest(`${at('content')} must be a string on a text stage`);
        if (args !== undefined)
            throw badRequest(`${at('args')} belongs to the action stage`);
        if (tool !== undefined && stage !== 'context_egress')
            throw badRequest(`${at('tool')} belongs to the action stage and context_egress`);
        if (fields.purpose !== undefined || fields.visibilityBatch !== undefined)
            throw badRequest(`${at('purpose')} belongs to the action stage`);
        out.content = content;
        if (tool !== undefined)
            out.tool = checkTool(tool);
        return listed(out, policy);
    }
    if (content !== undefined)
        throw badRequest(`${at('content')} belongs to the text stages`);
    out.tool = checkTool(tool);
    if (typeof args !== 'object' || args === null || Array.isArray(args))
        throw badRequest(`${at('args')} must be a JSON object`);
    try {
        out.args = snapshotJsonObject(args);
    }
    catch {
        throw badRequest(`${at('args')} must be a plain object of JSON values`);
    }
    out.actHash = referenceActionHash(out.tool, out.args);
    readPurpose(fields, out, at);
    return listed(out, policy);
}
/** Most requests one visibility batch may declare. */
const MAX_VISIBILITY_BATCH = 10_000;
/**
 * `purpose` and `visibilityBatch` of an action request: `purpose` absent or `'visibility'`, the batch
 * only with it, `{ id: 1-200 visible ASCII characters, size: 1-10000 }`.
 * @throws HttpError 400 `bad_request`
 */
function readPurpose(fields, out, at) {
    const { purpose, visibilityBatch: batch } = fields;
    if (purpose === undefined) {
        if (batch !== undefined)
            throw badRequest(`${at('visibilityBatch')} belongs to a visibility request`);
        return;
    }
    if (purpose !== 'visibility')
        throw badRequest(`${at('purpose')} must be "visibility" when given`);
    out.purpose = purpose;
    if (batch === undefined)
        return;
    const b = batch;
    if (typeof b !== 'object' ||
        b === null ||
        Array.isArray(b) ||
        typeof b.id !== 'string' ||
        !REQUEST_ID.test(b.id) ||
        !Number.isSafeInteger(b.size) ||
        b.size < 1 ||
        b.size > MAX_VISIBILITY_BATCH) {
        throw badRequest(`${at('visibilityBatch')} must be { id, size } (size 1-${MAX_VISIBILITY_BATCH})`);
    }
    out.visibilityBatch = { id: b.id, size: b.size };
}
/** A well-formed request from an agent the policy does not list is a 404 `unknown_agent`. */
function listed(request, policy) {
    if (!policy.agents.has(request.agentId))
        throw new HttpError(404, 'unknown_agent', 'the policy does not list this agent');
    return request;
}
