/**
 * Observers: every decision (PDP, synthesized, interceptor, guard refusals) is shown to `onDecision`
 * redacted (no permit, no transformed args or content, no substitute result) and contained (a throw
 * or a rejection cannot change the outcome). docs/api.md and docs/interceptors.md.
 * @internal
 */

import type { PolicyDecision } from '../decision.js';
import type { DecisionEvent } from '../options/pep.js';
import type { Outcome } from './exchange.js';

/** The decision an observer may see: without `permitId`, `transformedArgs`, `transformedContent` and `substitute`. */
export function redactForObserver(d: PolicyDecision): DecisionEvent['decision'] {
  const { permitId: _p, transformedArgs: _a, transformedContent: _c, substitute: _s, ...rest } = d;
  if (rest.synthesized) rest.synthesized = { ...rest.synthesized };
  if (rest.latches) rest.latches = [...rest.latches];
  return rest;
}

/** Calls the observer (if any) for one outcome; returns the decision unchanged. */
export function observe(
  observer: ((event: DecisionEvent) => void) | undefined,
  outcome: Outcome,
  started: number,
  tool: string | undefined,
): PolicyDecision {
  const { decision } = outcome;
  if (observer) {
    try {
      const event: DecisionEvent = {
        stage: decision.stage,
        requestId: decision.requestId,
        decision: redactForObserver(decision),
        latencyMs: performance.now() - started,
        attempts: outcome.attempts,
      };
      if (tool !== undefined) event.tool = tool;
      if (decision.interceptor !== undefined) event.interceptor = decision.interceptor;
      const r = observer(event) as unknown;
      if (r && typeof (r as Promise<unknown>).then === 'function') (r as Promise<unknown>).then(undefined, () => {});
    } catch {
      // An observer cannot change the outcome.
    }
  }
  return decision;
}
