import { toolMessage } from '../errors.js';
/** The code of a decision that stopped a step. */
export function codeOf(decision) {
    return decision.synthesized?.code ?? (decision.verdict === 'ESCALATE' ? 'escalated' : 'blocked');
}
/** A refusal of `decision` as it is (a PDP or interceptor BLOCK, an ESCALATE, or a synthesized BLOCK already observed). */
export function refusedBy(decision, tool, cause) {
    const r = {
        kind: 'refused',
        decision,
        code: codeOf(decision),
        toolMessage: toolMessage(decision, tool),
        tool,
    };
    if (cause !== undefined)
        r.cause = cause;
    return r;
}
