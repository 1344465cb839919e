/** A session with nothing in it: no labels, no history. @internal */
export const EMPTY_SESSION = Object.freeze({
    labels: Object.freeze(new Set()),
    history: Object.freeze([]),
});
/** The labels after an update, sorted (code-unit order). @internal */
export function labelsAfter(view, added) {
    const all = new Set(view.labels);
    for (const label of added)
        all.add(label);
    return [...all].sort();
}
