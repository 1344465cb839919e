function verdictRule(decision) {
    if (decision.verdict === 'BLOCK' || decision.verdict === 'ESCALATE')
        return { kind: 'refuse' };
    // A simulated decision can never be enforced (docs/api.md, code `simulated`).
    if (decision.simulated)
        return { kind: 'simulated' };
    return undefined;
}
/** The args that run: the decision's `transformedArgs`, else those sent (after interceptors). */
export function actionRule(decision, sent) {
    return verdictRule(decision) ?? { kind: 'go', value: decision.transformedArgs ?? sent };
}
/** The text that continues: the decision's `transformedContent` (a PDP WARN, an interceptor's replacement), else the original. */
export function textRule(decision, original) {
    return verdictRule(decision) ?? { kind: 'go', value: decision.transformedContent ?? original };
}
/** Why a simulated decision was refused (the synthesized BLOCK's message). */
export const SIMULATED_MESSAGE = 'a simulated decision can never be enforced';
