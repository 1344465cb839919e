import { visibleNames } from '../visible-tools.js';
const REGISTERED = new WeakMap();
/** With `hideBlocked`, records that `tools` (made by `guardTools`) hide what the policy blocks; returns `tools`. @internal */
export function registerHideBlocked(tools, pep, session, on) {
    if (on)
        REGISTERED.set(tools, { pep, session });
    return tools;
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
export function pepPrepareStep(tools, opts) {
    const registered = typeof tools === 'object' && tools !== null ? REGISTERED.get(tools) : undefined;
    if (registered === undefined) {
        throw new TypeError('pepPrepareStep: tools must be the object guardTools(..., { hideBlocked: true }) returned');
    }
    const names = [...(opts?.activeTools ?? Object.keys(tools))];
    return async (step) => {
        const given = typeof step === 'object' && step !== null ? step.abortSignal : undefined;
        const signal = given instanceof AbortSignal ? given : undefined;
        const visible = await visibleNames(registered.pep, names, registered.session, signal);
        return { activeTools: names.filter((n) => visible.has(n)) };
    };
}
