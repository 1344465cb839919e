function reasonOf(decision) {
    return decision.reason ?? decision.synthesized?.message ?? `verdict ${decision.verdict}`;
}
/**
 * The text a model (and a person) should see for a step that did not run (docs/api.md).
 * The three cases read differently, so a policy denial, an outage and a hold can be told apart:
 * - PDP or interceptor BLOCK: `ERROR: Tool '<name>' denied by policy: <reason>` / `ERROR: <stage> blocked by policy: <reason>`
 * - synthesized BLOCK: `ERROR: Tool '<name>' was not run: the policy check failed (<code>)` /
 *   `ERROR: <stage> was not checked: the policy check failed (<code>)`
 * - ESCALATE: `ERROR: Tool '<name>' is held for human review: <reason>` / `ERROR: <stage> is held for human review: <reason>`
 *
 * @param decision - a BLOCK or ESCALATE decision (an ALLOW or WARN reads as a denial with its reason)
 * @param tool - the tool name as the framework knows it, for actions; omit for text stages
 * @returns one line, never containing content, args, a permit or an API key (only the PDP's reason and a code)
 */
export function toolMessage(decision, tool) {
    const code = decision.synthesized?.code;
    if (code !== undefined) {
        return tool !== undefined
            ? `ERROR: Tool '${tool}' was not run: the policy check failed (${code})`
            : `ERROR: ${decision.stage} was not checked: the policy check failed (${code})`;
    }
    const reason = reasonOf(decision);
    if (decision.verdict === 'ESCALATE') {
        return tool !== undefined
            ? `ERROR: Tool '${tool}' is held for human review: ${reason}`
            : `ERROR: ${decision.stage} is held for human review: ${reason}`;
    }
    return tool !== undefined
        ? `ERROR: Tool '${tool}' denied by policy: ${reason}`
        : `ERROR: ${decision.stage} blocked by policy: ${reason}`;
}
/**
 * The base of the errors the guard helpers throw when a step must not run. Catch this to handle
 * a denial, an outage and a hold alike; read `code` to tell them apart.
 */
export class PolicyEnforcementError extends Error {
    /** The decision that stopped the step. */
    decision;
    /** The text a model should see as the tool's result or the stage's outcome (see {@link toolMessage}). */
    toolMessage;
    /** The tool name for an action, else undefined. */
    tool;
    /** The stage that was stopped. */
    stage;
    /** The request id of the decision, for support and the PDP's evidence feed. */
    requestId;
    /** The interceptor that decided, when a local interceptor did (docs/interceptors.md). */
    interceptor;
    constructor(decision, tool, options) {
        const message = toolMessage(decision, tool);
        super(`${message.slice('ERROR: '.length)} (request ${decision.requestId})`, options);
        this.decision = decision;
        this.tool = tool;
        this.stage = decision.stage;
        this.requestId = decision.requestId;
        this.toolMessage = message;
        this.interceptor = decision.interceptor;
    }
}
/**
 * Thrown by `guardTool`/`guardText` when the step must not run: a PDP BLOCK, an interceptor's deny,
 * a synthesized (fail-closed) BLOCK, a simulated decision, or a permit that failed verification.
 */
export class PolicyBlockedError extends PolicyEnforcementError {
    name = 'PolicyBlockedError';
    /** `'blocked'` for a PDP or interceptor BLOCK, else the synthesized {@link FailClosedCode}. */
    code;
    /**
     * @param decision - the decision that blocked the step
     * @param tool - the tool name, for actions
     * @param options - `cause`: the underlying error, if any
     */
    constructor(decision, tool, options) {
        super(decision, tool, options);
        this.code = decision.synthesized?.code ?? 'blocked';
    }
}
/** Thrown by `guardTool`/`guardText` on ESCALATE: the step is held for a human review. */
export class PolicyEscalatedError extends PolicyEnforcementError {
    name = 'PolicyEscalatedError';
    /** Always `'escalated'`. */
    code = 'escalated';
    /** The review the step is held for, when the PDP gave one. */
    escalationId;
    /**
     * @param decision - the ESCALATE decision
     * @param tool - the tool name, for actions
     */
    constructor(decision, tool) {
        super(decision, tool);
        this.escalationId = decision.escalationId;
    }
}
/**
 * Thrown (as a rejection) by `PermitVerifier.verify` when a permit must not be honoured.
 * The message names the failed check, never the permit itself.
 */
export class PermitVerificationError extends Error {
    name = 'PermitVerificationError';
    /** Which check failed. */
    code;
    /**
     * @param code - which check failed
     * @param message - a description without the permit, args or keys
     * @param options - `cause`: the underlying error (e.g. from jose)
     */
    constructor(code, message, options) {
        super(message, options);
        this.code = code;
    }
}
