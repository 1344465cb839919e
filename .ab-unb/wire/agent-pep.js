/**
 * The wire protocol (docs/fail-closed.md): the request body and the response's shape (checked by
 * hand, `shape.ts`: the decision path loads no schema library).
 * @internal
 */
import { VERDICTS } from '../decision.js';
import { AttemptFailure } from '../internal/failure.js';
import { decodeJsonBody } from './json.js';
import { arrayOf, boolean, jsonObject, looseObject, nonEmptyString, oneOf, optional, pathText, string, } from './shape.js';
/**
 * The PDP's answer. Unknown members are ignored (loose); a known member of the wrong type fails.
 * `error` and `errors` are read only to refuse a PDP that reports an error (rule 4).
 */
export const checkAuthorizeResponse = looseObject({
    verdict: oneOf(VERDICTS),
    decisionId: optional(string),
    reason: optional(string),
    latches: optional(arrayOf(string)),
    sessionLabels: optional(arrayOf(string)),
    permitId: optional(nonEmptyString),
    transformedContent: optional(string),
    transformedArgs: optional(jsonObject),
    escalationId: optional(string),
    simulated: optional(boolean),
    requestId: optional(string),
    stage: optional(string),
    obligations: optional(arrayOf()),
});
const everyMemberWritten = true;
void everyMemberWritten;
/**
 * Serializes a request body. `simulated` is sent only when true.
 * @param argsJson - `req.args` as RFC 8785 text, when the caller already wrote it (the client does,
 *   to hash it for rule 5): the body carries that text, the same members with their keys sorted
 */
export function encodeRequest(req, argsJson) {
    if (argsJson === undefined || req.args === undefined || req.content !== undefined)
        return JSON.stringify(req);
    // The members of an action request, in the order JSON.stringify(req) writes them, with the args text.
    let out = `{"agentId":${JSON.stringify(req.agentId)},"session":${JSON.stringify(req.session)},"stage":${JSON.stringify(req.stage)},"requestId":${JSON.stringify(req.requestId)}`;
    if (req.tool !== undefined)
        out += `,"tool":${JSON.stringify(req.tool)}`;
    out += `,"args":${argsJson}`;
    if (req.simulated !== undefined)
        out += `,"simulated":${req.simulated}`;
    if (req.purpose !== undefined)
        out += `,"purpose":${JSON.stringify(req.purpose)}`;
    if (req.visibilityBatch !== undefined)
        out += `,"visibilityBatch":${JSON.stringify(req.visibilityBatch)}`;
    return `${out}}`;
}
/** What each problem of {@link decodeJsonBody} is called in an `invalid_response` message. */
const BODY_PROBLEMS = {
    utf8: 'PDP response is not valid UTF-8',
    json: 'PDP response is not JSON',
    duplicate: 'PDP response is not I-JSON: duplicate member names',
    value: 'PDP response is not I-JSON: unpaired surrogate or non-finite number',
};
/**
 * Decodes a whole response body with the one JSON body decoder ({@link decodeJsonBody}: UTF-8 without
 * a BOM, JSON, I-JSON), and checks it is a JSON object. Shared by both protocols (`authzen.ts`).
 * @throws AttemptFailure `invalid_response`
 */
export function decodeJsonObject(body) {
    const d = decodeJsonBody(body);
    if (!d.ok) {
        // A body that is JSON but not an object is named for that first, as before.
        if (d.problem !== 'utf8' && d.problem !== 'json' && !isObjectText(d.text))
            notAnObject();
        throw new AttemptFailure('invalid_response', BODY_PROBLEMS[d.problem]);
    }
    if (typeof d.value !== 'object' || d.value === null || Array.isArray(d.value))
        notAnObject();
    return d.value;
}
function isObjectText(text) {
    return text?.trimStart().startsWith('{') === true;
}
function notAnObject() {
    throw new AttemptFailure('invalid_response', 'PDP response is not a JSON object');
}
/**
 * Decodes and validates a whole response body ({@link decodeJsonObject}), an object passing
 * {@link checkAuthorizeResponse}.
 * @throws AttemptFailure `invalid_response`
 */
export function parseResponse(body) {
    const parsed = decodeJsonObject(body);
    const failed = checkAuthorizeResponse(parsed);
    if (failed !== undefined) {
        throw new AttemptFailure('invalid_response', `PDP response fails the schema at ${pathText(failed)}`);
    }
    // A copy, as the schema library's output was: what the decision reads is not the raw answer object.
    return { response: { ...parsed }, raw: parsed };
}
