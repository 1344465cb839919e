/**
 * Observers: every decision (PDP, synthesized, interceptor, guard refusals) is shown to `onDecision`
 * redacted through an allow-list (docs/telemetry.md, "What `onDecision` observers see"): only the fields of
 * {@link OBSERVABLE_FIELDS} (and of a synthesized BLOCK, {@link OBSERVABLE_SYNTHESIZED}) are copied;
 * everything else (a permit, transformed args or content, a substitute result, and any field a later
 * version or a bug adds) is dropped. Contained: a throw or a rejection cannot change the outcome.
 * @internal
 */

import type { PolicyDecision, SynthesizedInfo } from '../decision.js';
import type { DecisionEvent, ObservedDecision } from '../options/pep.js';
import type { Outcome } from './exchange.js';

/**
 * THE list of decision fields an observer may see. None carries content, args, a permit or a key:
 * ids, the verdict, the PDP's reason, latch ids, session labels, the escalation id, the interceptor's
 * name, and (separately, as `{ to, profile? }`) the route's sandbox (docs/interceptors.md). A field not listed here never reaches an observer.
 */
export const OBSERVABLE_FIELDS = Object.freeze([
  'verdict',
  'stage',
  'requestId',
  'decisionId',
  'reason',
  'latches',
  'sessionLabels',
  'escalationId',
  'simulated',
  'interceptor',
] as const satisfies readonly (keyof ObservedDecision)[]);

/** The fields of a synthesized BLOCK an observer may see. */
export const OBSERVABLE_SYNTHESIZED = Object.freeze([
  'code',
  'message',
  'attempts',
  'status',
] as const satisfies readonly (keyof SynthesizedInfo)[]);

/** A copy of a string array (an observer cannot change the decision's), or undefined when it is not one. */
function copyStrings(v: unknown): string[] | undefined {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined;
}

/** The decision an observer may see: the fields of {@link OBSERVABLE_FIELDS}, copied; nothing else. */
export function redactForObserver(d: PolicyDecision): ObservedDecision {
  const out: Record<string, unknown> = {};
  for (const key of OBSERVABLE_FIELDS) {
    const v = d[key];
    if (v === undefined) continue;
    out[key] = key === 'latches' || key === 'sessionLabels' ? copyStrings(v) : v;
  }
  if (d.synthesized !== undefined) {
    const s: Record<string, unknown> = {};
    for (const key of OBSERVABLE_SYNTHESIZED) if (d.synthesized[key] !== undefined) s[key] = d.synthesized[key];
    out.synthesized = s;
  }
  if (d.route !== undefined) out.route = d.route.profile === undefined ? { to: d.route.to } : { ...d.route };
  return out as unknown as ObservedDecision;
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
