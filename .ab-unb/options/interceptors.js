/**
 * The `interceptors` option (docs/interceptors.md): what an interceptor is, what it sees and answers,
 * and its validation at `createPep` (a `TypeError` with `err.option`). Running the chain is core's
 * (`core/interceptors.ts`).
 * @packageDocumentation
 */
import { isStage } from '../decision.js';
const KNOWN_KEYS = new Set(['name', 'stages', 'before', 'after']);
/**
 * Validates the `interceptors` option. `fail(path, problem)` throws the option `TypeError`.
 * @returns a frozen list of compiled interceptors (empty when the option is absent)
 * @internal
 */
export function validateInterceptors(raw, fail) {
    if (raw === undefined)
        return Object.freeze([]);
    if (!Array.isArray(raw))
        fail('interceptors', 'expected an array of interceptors');
    const names = new Set();
    const out = [];
    raw.forEach((item, i) => {
        const at = `interceptors.${i}`;
        if (typeof item !== 'object' || item === null || Array.isArray(item))
            fail(at, 'expected an interceptor object');
        for (const key of Object.keys(item)) {
            if (!KNOWN_KEYS.has(key))
                fail(`${at}.${key.slice(0, 40)}`, 'unknown interceptor key');
        }
        const it = item;
        if (typeof it.name !== 'string' || it.name.trim() === '' || !it.name.isWellFormed()) {
            fail(`${at}.name`, 'expected a non-empty string');
        }
        if (names.has(it.name))
            fail('interceptors', `duplicate interceptor name ${JSON.stringify(it.name.slice(0, 40))}`);
        names.add(it.name);
        let stages;
        if (it.stages !== undefined) {
            if (!Array.isArray(it.stages) || it.stages.length === 0 || !it.stages.every(isStage)) {
                fail(`${at}.stages`, 'expected a non-empty list of stages');
            }
            stages = new Set(it.stages);
        }
        if (it.before !== undefined && typeof it.before !== 'function')
            fail(`${at}.before`, 'expected a function');
        if (it.after !== undefined && typeof it.after !== 'function')
            fail(`${at}.after`, 'expected a function');
        if (it.before === undefined && it.after === undefined)
            fail(at, 'expected a before or an after function');
        if (it.after !== undefined && stages !== undefined && !stages.has('action')) {
            fail(`${at}.after`, 'after runs on the action stage only; add it to stages');
        }
        out.push(Object.freeze({ name: it.name, stages, before: it.before, after: it.after }));
    });
    return Object.freeze(out);
}
