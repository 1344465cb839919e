/**
 * The text of an MCP tool result that `guardMcpClient` checks at `context_egress`, and the result a
 * WARN makes of it. Pure; internal to `agent-pep/mcp`.
 * @internal
 */
import { isObject } from './common.js';
/** The strings of a resource link the model may be shown. */
const LINK_TEXTS = ['name', 'title', 'description', 'uri'];
/**
 * The texts one content item shows: a text item's text, an embedded resource's text, a resource link's
 * name, title, description and URI; none for images, audio and binary resources; an item of a type this
 * adapter does not know, as JSON (it is checked whole rather than passed unchecked).
 */
function itemTexts(item) {
    if (!isObject(item))
        return [];
    switch (item.type) {
        case 'text':
            return typeof item.text === 'string' ? [item.text] : [];
        case 'resource':
            return isObject(item.resource) && typeof item.resource.text === 'string' ? [item.resource.text] : [];
        case 'resource_link':
            return LINK_TEXTS.flatMap((k) => (typeof item[k] === 'string' ? [item[k]] : []));
        case 'image':
        case 'audio':
            return [];
        default:
            return [JSON.stringify(item) ?? ''];
    }
}
/** The JSON of a value, or a string as it is. */
function asText(value) {
    return typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
}
/**
 * The text of a tool result the PDP checks: text items, embedded resource texts, resource links,
 * structured content and a legacy `toolResult`; a string (an `after` interceptor's replacement) as it is.
 */
export function resultText(result) {
    if (typeof result === 'string')
        return result;
    if (!isObject(result) || !Array.isArray(result.content))
        return JSON.stringify(result) ?? '';
    const parts = result.content.flatMap(itemTexts);
    if (result.structuredContent !== undefined)
        parts.push(asText(result.structuredContent));
    if (result.toolResult !== undefined)
        parts.push(asText(result.toolResult));
    return parts.join('\n');
}
/**
 * A tool result whose text is the PDP's: one text item, the items that show no text kept (images,
 * audio, binary resources), structured content and `toolResult` dropped.
 */
export function withText(result, text) {
    const rest = isObject(result) && Array.isArray(result.content) ? result.content : [];
    const kept = rest.filter((item) => isObject(item) && itemTexts(item).length === 0);
    const out = isObject(result) && Array.isArray(result.content) ? { ...result } : {};
    delete out.structuredContent;
    delete out.toolResult;
    out.content = [{ type: 'text', text }, ...kept];
    return out;
}
