/**
 * `hideBlocked` for the Vercel AI SDK (docs/visibility.md): the SDK offers the model the tools a step's
 * `activeTools` names, and `prepareStep` sets them before each step, so `pepPrepareStep(tools)` asks
 * `pep.visibleTools` once per step for the tools `guardTools(..., { hideBlocked: true })` made.
 * @internal
 */
import type { Pep } from '../../pep.js';
import { visibleNames } from '../visible-tools.js';

/** What `guardTools` with `hideBlocked: true` registers for its tools object. */
interface Registered {
  pep: Pep;
  session: string | undefined;
}

const REGISTERED = new WeakMap<object, Registered>();

/** With `hideBlocked`, records that `tools` (made by `guardTools`) hide what the policy blocks; returns `tools`. @internal */
export function registerHideBlocked<T extends object>(tools: T, pep: Pep, session: string | undefined, on: boolean): T {
  if (on) REGISTERED.set(tools, { pep, session });
  return tools;
}

/** What `pepPrepareStep`'s function resolves with: the SDK's `prepareStep` result. */
export interface PepPrepareStepResult<NAME extends string = string> {
  /** The names of the tools the model is offered in this step. */
  activeTools: NAME[];
}

/**
 * A `prepareStep` for `generateText` / `streamText` that offers the model only the tools the policy
 * shows (docs/visibility.md): one `pep.visibleTools` batch per step, for the tools `guardTools(pep,
 * tools, { hideBlocked: true })` returned. A hidden tool called anyway is still decided per call.
 * @param tools - the object `guardTools(..., { hideBlocked: true })` returned
 * @param opts - `{ activeTools? }`: the names to start from (default: every tool of `tools`)
 * @returns `({ abortSignal? }) => Promise<{ activeTools }>`; a PDP failure offers no tool (fail closed)
 * @throws TypeError when `tools` was not made by `guardTools` with `hideBlocked: true`
 * @example
 * ```ts
 * const tools = guardTools(pep, { lookupOrder, refundPayment }, { hideBlocked: true });
 * await generateText({ model, tools, prepareStep: pepPrepareStep(tools), stopWhen: stepCountIs(5), prompt });
 * ```
 */
export function pepPrepareStep<TOOLS extends object>(
  tools: TOOLS,
  opts?: { activeTools?: readonly Extract<keyof TOOLS, string>[] },
): (step?: unknown) => Promise<PepPrepareStepResult<Extract<keyof TOOLS, string>>> {
  const registered = typeof tools === 'object' && tools !== null ? REGISTERED.get(tools) : undefined;
  if (registered === undefined) {
    throw new TypeError('pepPrepareStep: tools must be the object guardTools(..., { hideBlocked: true }) returned');
  }
  const names = [...(opts?.activeTools ?? (Object.keys(tools) as Extract<keyof TOOLS, string>[]))];
  return async (step) => {
    const given =
      typeof step === 'object' && step !== null ? (step as { abortSignal?: unknown }).abortSignal : undefined;
    const signal = given instanceof AbortSignal ? given : undefined;
    const visible = await visibleNames(registered.pep, names, registered.session, signal);
    return { activeTools: names.filter((n) => visible.has(n)) };
  };
}
