/**
 * `hideBlocked` for the agent-framework adapters (docs/visibility.md): which of a step's tools the model
 * is offered, asked once per step (`pep.visibleTools`, one batch), never once per tool. Visibility is
 * never permission: every call is still decided on its own. Shared by `agent-pep/ai`,
 * `agent-pep/langchain` and `agent-pep/openai-agents`.
 * @internal
 */
import { optionError } from '../options/kit.js';
/** Reads `hideBlocked`: a boolean, default false. @throws TypeError with `err.option` `'hideBlocked'` */
export function readHideBlocked(scope, opts) {
    const value = typeof opts === 'object' && opts !== null ? opts.hideBlocked : undefined;
    if (value !== undefined && typeof value !== 'boolean')
        optionError(scope, 'hideBlocked', 'expected a boolean');
    return value === true;
}
/** The names visible for a session (one batch); `[]` when anything fails (fail closed). */
export async function visibleNames(pep, names, session, signal) {
    const o = {};
    if (session !== undefined)
        o.session = session;
    if (signal !== undefined)
        o.signal = signal;
    try {
        return new Set(await pep.visibleTools(names, o));
    }
    catch {
        return new Set();
    }
}
/**
 * One visibility batch per step for a host that asks each tool separately (OpenAI Agents' `isEnabled`):
 * the first tool asked in a step starts the batch for every tool, the others wait for it. A step is
 * keyed by the host's context object; its answer is dropped once settled and the step's other
 * questions (asked in the same turn of the event loop) have been answered, so the next step asks again.
 */
export function perStepVisibility(pep, names, sessionOf) {
    const pending = new WeakMap();
    return (step) => {
        let answer = pending.get(step);
        if (answer === undefined) {
            const made = visibleNames(pep, names, sessionOf(step));
            answer = made;
            pending.set(step, made);
            void made.then(() => setImmediate(() => pending.get(step) === made && pending.delete(step)));
        }
        return answer;
    };
}
/**
 * The items of one step whose name the policy shows (one batch); an item without a string name (a
 * provider's built-in tool, which no PEP guards) is kept.
 */
export async function keepVisible(pep, items, session, signal) {
    const nameOf = (item) => {
        const name = typeof item === 'object' && item !== null ? item.name : undefined;
        return typeof name === 'string' ? name : undefined;
    };
    const names = items.map(nameOf).filter((n) => n !== undefined);
    if (names.length === 0)
        return [...items];
    const visible = await visibleNames(pep, names, session, signal);
    return items.filter((item) => {
        const name = nameOf(item);
        return name === undefined || visible.has(name);
    });
}
