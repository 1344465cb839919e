/**
 * The refusals an adapter makes itself (a `tool_changed` call, docs/visibility.md): synthesized BLOCKs
 * shown to the client's observers and telemetry like any other decision. `createPep` registers each
 * client it makes; an adapter reports through the `Pep` it was given.
 * @internal
 */
import { type FailClosedCode, type PolicyDecision, synthesizeBlock } from '../decision.js';

type Observer = (decision: PolicyDecision, tool: string | undefined) => PolicyDecision;

const OBSERVERS = new WeakMap<object, Observer>();

/** Registers how a client observes a decision it did not ask the PDP for. @internal */
export function registerRefusalObserver(pep: object, observer: Observer): void {
  OBSERVERS.set(pep, observer);
}

/**
 * A synthesized action BLOCK for `tool`, observed by the client's `onDecision` and telemetry when the
 * client was made by `createPep` (else only returned).
 * @internal
 */
export function observedRefusal(
  pep: unknown,
  tool: string | undefined,
  code: FailClosedCode,
  message: string,
): PolicyDecision {
  const decision = synthesizeBlock('action', globalThis.crypto.randomUUID(), code, message, 0);
  const observer = typeof pep === 'object' && pep !== null ? OBSERVERS.get(pep) : undefined;
  if (observer === undefined) return decision;
  try {
    return observer(decision, tool);
  } catch {
    return decision;
  }
}
