/**
 * A tool's result as the text a model reads (docs/adapters.md, "What each host shows the model"): the
 * text every result check (`checkResult`, the adapters' context_egress checks, the hook's PostToolUse)
 * sends to the PDP.
 * @internal
 */
/** Most string leaves visited in one result (a result with more is checked as its JSON only past them). */
const MAX_LEAVES = 10_000;
function isTextPart(p) {
    return (typeof p === 'object' &&
        p !== null &&
        p.type === 'text' &&
        typeof p.text === 'string');
}
/** The text parts of an MCP-shaped result (`{ content: [{ type: 'text', text }] }`), or undefined. */
function contentText(result) {
    const content = result.content;
    if (!Array.isArray(content) || content.length === 0 || !content.every(isTextPart))
        return undefined;
    return content.map((p) => p.text).join('\n');
}
/** Every string leaf of `value` that holds a line break, depth first, in order. */
function multilineLeaves(value, out, seen, depth = 0) {
    if (seen.n >= MAX_LEAVES || depth > 64)
        return;
    if (typeof value === 'string') {
        seen.n++;
        if (/[\r\n\u2028\u2029]/.test(value))
            out.push(value);
        return;
    }
    if (typeof value !== 'object' || value === null)
        return;
    for (const v of Array.isArray(value) ? value : Object.values(value))
        multilineLeaves(v, out, seen, depth + 1);
}
/**
 * The text of a tool result as a model reads it: a string as is; an MCP-shaped result of text parts,
 * the parts joined by line breaks; anything else its JSON (what the hosts send the model), followed by
 * every string inside it that holds a line break, on lines of its own, since a model reads those with
 * real line breaks (a PEM block, a `(?m)^` pattern) while JSON escapes them.
 * @throws TypeError when the result cannot be written as JSON (a cycle, a BigInt)
 */
export function resultText(result) {
    if (typeof result === 'string')
        return result;
    if (typeof result === 'object' && result !== null) {
        const parts = contentText(result);
        if (parts !== undefined)
            return parts;
    }
    const json = JSON.stringify(result);
    if (json === undefined)
        return '';
    const leaves = [];
    multilineLeaves(result, leaves, { n: 0 });
    return leaves.length === 0 ? json : [json, ...leaves].join('\n');
}
