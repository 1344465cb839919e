/**
 * Observers: every decision (PDP, synthesized, interceptor, guard refusals) is shown to `onDecision`
 * redacted (no permit, no transformed args or content, no substitute result) and contained (a throw
 * or a rejection cannot change the outcome). docs/api.md and docs/interceptors.md.
 * @internal
 */
/** The decision an observer may see: without `permitId`, `transformedArgs`, `transformedContent` and `substitute`. */
export function redactForObserver(d) {
    const { permitId: _p, transformedArgs: _a, transformedContent: _c, substitute: _s, ...rest } = d;
    if (rest.synthesized)
        rest.synthesized = { ...rest.synthesized };
    if (rest.latches)
        rest.latches = [...rest.latches];
    return rest;
}
/** Calls the observer (if any) for one outcome; returns the decision unchanged. */
export function observe(observer, outcome, started, tool) {
    const { decision } = outcome;
    if (observer) {
        try {
            const event = {
                stage: decision.stage,
                requestId: decision.requestId,
                decision: redactForObserver(decision),
                latencyMs: performance.now() - started,
                attempts: outcome.attempts,
            };
            if (tool !== undefined)
                event.tool = tool;
            if (decision.interceptor !== undefined)
                event.interceptor = decision.interceptor;
            const r = observer(event);
            if (r && typeof r.then === 'function')
                r.then(undefined, () => { });
        }
        catch {
            // An observer cannot change the outcome.
        }
    }
    return decision;
}
