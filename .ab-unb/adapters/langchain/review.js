/** Builds the interrupt value for a held call. */
export function interruptValue(name, args, toolCallId, decision, description) {
    const value = {
        actionRequests: [{ name, args, description }],
        reviewConfigs: [{ actionName: name, allowedDecisions: ['approve', 'reject'] }],
        requestId: decision.requestId,
        toolCallId,
        agentPep: true,
    };
    if (decision.escalationId !== undefined)
        value.escalationId = decision.escalationId;
    if (decision.decisionId !== undefined)
        value.decisionId = decision.decisionId;
    return value;
}
/** Own data property `key` of `obj`, without running getters or proxies' traps beyond one read. */
function own(obj, key) {
    const d = Object.getOwnPropertyDescriptor(obj, key);
    return d && 'value' in d ? d.value : undefined;
}
/** True for a value shaped like a `humanInTheLoopMiddleware` resume (`{ decisions: [...] }`). */
export function isReviewResume(value) {
    try {
        return typeof value === 'object' && value !== null && Array.isArray(own(value, 'decisions'));
    }
    catch {
        return false;
    }
}
/**
 * Reads a resume value: exactly one decision, `{ type: 'approve' }` or `{ type: 'reject', message? }`
 * with a string message. Anything else (an `edit`, several decisions, a getter that throws) is `invalid`,
 * which the adapter treats as "not approved".
 */
export function readReviewAnswer(value) {
    try {
        if (typeof value !== 'object' || value === null)
            return { kind: 'invalid' };
        const decisions = own(value, 'decisions');
        if (!Array.isArray(decisions) || decisions.length !== 1)
            return { kind: 'invalid' };
        const first = decisions[0];
        if (typeof first !== 'object' || first === null)
            return { kind: 'invalid' };
        const type = own(first, 'type');
        if (type === 'approve')
            return { kind: 'approve' };
        if (type === 'reject') {
            const message = own(first, 'message');
            if (message !== undefined && typeof message !== 'string')
                return { kind: 'invalid' };
            return { kind: 'reject', message };
        }
        return { kind: 'invalid' };
    }
    catch {
        return { kind: 'invalid' };
    }
}
/** Longest reviewer message passed on to the model, in characters. */
const MAX_REVIEW_MESSAGE = 2000;
/** The tool result the model sees for a call a reviewer rejected (or answered with anything but an approval). */
export function reviewRefusalText(tool, answer) {
    if (answer.kind === 'reject') {
        const message = answer.message?.slice(0, MAX_REVIEW_MESSAGE);
        return message
            ? `ERROR: Tool '${tool}' was not run: rejected by a reviewer: ${message}`
            : `ERROR: Tool '${tool}' was not run: rejected by a reviewer`;
    }
    return `ERROR: Tool '${tool}' was not run: the review answer was not an approval`;
}
