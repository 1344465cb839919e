/**
 * Verdicts, stages and the decision shape every stage method resolves with (docs/api.md).
 * @packageDocumentation
 */
/** The four verdicts a PDP may return, least to most restrictive but for ESCALATE (a hold). Case-sensitive on the wire. */
export const VERDICTS = Object.freeze(['ALLOW', 'WARN', 'BLOCK', 'ESCALATE']);
/** The text stages, in the order an agent usually crosses them. */
export const TEXT_STAGES = Object.freeze(['input', 'context_egress', 'output', 'delivery']);
/** Every stage: the text stages, then `action` (a proposed tool call). The one list every schema uses. */
export const STAGES = Object.freeze([...TEXT_STAGES, 'action']);
/** Every {@link FailClosedCode}, for validation and documentation. */
export const FAIL_CLOSED_CODES = Object.freeze([
    'pdp_unreachable',
    'pdp_timeout',
    'pdp_status',
    'invalid_response',
    'ambiguous_decision',
    'invalid_request',
    'aborted',
    'permit_invalid',
    'simulated',
    'interceptor_failed',
    'tool_changed',
]);
/**
 * Builds a fail-closed BLOCK. Internal helper shared by the client and the guard helpers.
 * @internal
 */
export function synthesizeBlock(stage, requestId, code, message, attempts, status) {
    const synthesized = { code, message, attempts };
    if (status !== undefined)
        synthesized.status = status;
    return { verdict: 'BLOCK', stage, requestId, reason: message, synthesized };
}
/** True for a text stage. */
export function isTextStage(stage) {
    return stage === 'input' || stage === 'context_egress' || stage === 'output' || stage === 'delivery';
}
/** True for one of the five {@link STAGES}. */
export function isStage(stage) {
    return stage === 'action' || isTextStage(stage);
}
