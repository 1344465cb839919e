/**
 * The enforcement rules as pure functions (docs/api.md, docs/interceptors.md), for the kernel and for
 * the hook's wire, which maps a decision it is handed: what a decision lets go on, and with what.
 * @internal
 */
import type { PolicyDecision } from '../decision.js';

/** What a decision lets go on: `go` with the value that continues, `refuse` (BLOCK or ESCALATE) or `simulated`. */
export type Rule<T> = { kind: 'go'; value: T } | { kind: 'refuse' } | { kind: 'simulated' };

function verdictRule(decision: PolicyDecision): Rule<never> | undefined {
  if (decision.verdict === 'BLOCK' || decision.verdict === 'ESCALATE') return { kind: 'refuse' };
  // A simulated decision can never be enforced (docs/api.md, code `simulated`).
  if (decision.simulated) return { kind: 'simulated' };
  return undefined;
}

/** The args that run: the decision's `transformedArgs`, else those sent (after interceptors). */
export function actionRule(decision: PolicyDecision, sent: Record<string, unknown>): Rule<Record<string, unknown>> {
  return verdictRule(decision) ?? { kind: 'go', value: decision.transformedArgs ?? sent };
}

/** The text that continues: the decision's `transformedContent` (a PDP WARN, an interceptor's replacement), else the original. */
export function textRule(decision: PolicyDecision, original: string): Rule<string> {
  return verdictRule(decision) ?? { kind: 'go', value: decision.transformedContent ?? original };
}

/** Why a simulated decision was refused (the synthesized BLOCK's message). */
export const SIMULATED_MESSAGE = 'a simulated decision can never be enforced';
