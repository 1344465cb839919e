/**
 * Reading an evidence log's JSON Lines (docs/dev-pdp.md), for `agent-pep evidence verify` and the
 * dev PDP's console.
 * @packageDocumentation
 */
import { hasDuplicateMemberNames } from './json.js';
/**
 * The records of a JSON Lines log; a line that is not JSON, or not I-JSON (a member named twice reads
 * one way to a first-wins parser and another to `JSON.parse`), is kept as its text (then `malformed`).
 */
export function parseJsonLines(text) {
    const lines = text.split('\n');
    if (lines.at(-1) === '')
        lines.pop();
    return lines.map((line) => {
        const l = line.endsWith('\r') ? line.slice(0, -1) : line;
        try {
            const value = JSON.parse(l);
            return hasDuplicateMemberNames(l) ? l : value;
        }
        catch {
            return l;
        }
    });
}
