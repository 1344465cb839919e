/**
 * The text of an MCP tool result that `guardMcpClient` checks at `context_egress`, and the result a
 * WARN makes of it. Pure; internal to `agent-pep/mcp`.
 * @internal
 */
import { isObject } from './common.js';

/** The strings of a resource link the model may be shown. */
const LINK_TEXTS = ['name', 'title', 'description', 'uri'] as const;

/** A media type whose bytes are text (`text/*`, JSON, XML, YAML, JavaScript, CSV), parameters ignored. */
const TEXT_MEDIA =
  /^(text\/[^;]+|application\/([\w.-]+\+)?(json|xml|yaml|x-yaml|javascript|ecmascript|csv))\s*(;.*)?$/i;

/** The UTF-8 text of base64 `data`, or the string itself when it is not base64 (checked rather than skipped). */
function decoded(data: string): string {
  try {
    return new TextDecoder().decode(Uint8Array.from(atob(data), (c) => c.charCodeAt(0)));
  } catch {
    return data;
  }
}

/**
 * The texts of an embedded resource: its `text`, or the decoded `blob` of a text media type (a host may hand
 * it to the model as a text file); none for other binary resources.
 */
function resourceTexts(resource: unknown): string[] {
  if (!isObject(resource)) return [];
  if (typeof resource.text === 'string') return [resource.text];
  const textual = typeof resource.mimeType === 'string' && TEXT_MEDIA.test(resource.mimeType);
  return textual && typeof resource.blob === 'string' ? [decoded(resource.blob)] : [];
}

/** The members of a tool result MCP defines (any other may reach the model when a host passes the result whole). */
const RESULT_KEYS: ReadonlySet<string> = new Set([
  'content',
  'structuredContent',
  'isError',
  '_meta',
  'toolResult',
  'resultType',
]);

/** Whether a `_meta` key is MCP's own (`io.modelcontextprotocol/...`): protocol data, not text for the model. */
const isProtocolKey = (key: string): boolean => key.startsWith('io.modelcontextprotocol/');

/** The JSON of a `_meta`'s members other than MCP's own, or undefined when it has none. */
function metaText(meta: unknown): string | undefined {
  if (!isObject(meta)) return undefined;
  const other = Object.entries(meta).filter(([k]) => !isProtocolKey(k));
  return other.length > 0 ? JSON.stringify(Object.fromEntries(other)) : undefined;
}

/** The texts one content item shows, and the JSON of its `_meta` (protocol keys aside). */
function itemTexts(item: unknown): string[] {
  const shown = shownTexts(item);
  const meta = isObject(item) ? metaText(item._meta) : undefined;
  return meta === undefined ? shown : [...shown, meta];
}

/**
 * The texts one content item shows: a text item's text, an embedded resource's text (or text-typed blob), a resource link's
 * name, title, description and URI; none for images, audio and binary resources; an item of a type this
 * adapter does not know, as JSON (it is checked whole rather than passed unchecked).
 */
function shownTexts(item: unknown): string[] {
  if (!isObject(item)) return [];
  switch (item.type) {
    case 'text':
      return typeof item.text === 'string' ? [item.text] : [];
    case 'resource':
      return resourceTexts(item.resource);
    case 'resource_link':
      return LINK_TEXTS.flatMap((k) => (typeof item[k] === 'string' ? [item[k] as string] : []));
    case 'image':
    case 'audio':
      return [];
    default:
      return [JSON.stringify(item) ?? ''];
  }
}

/** The JSON of a value, or a string as it is. */
function asText(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
}

/**
 * The text of a tool result the PDP checks: text items, embedded resource texts, resource links,
 * structured content and a legacy `toolResult`, and the JSON of what a host may pass to the model beside
 * them (`_meta` other than MCP's own keys, members MCP does not define); a string (an `after` interceptor's
 * replacement) as it is.
 */
export function resultText(result: unknown): string {
  if (typeof result === 'string') return result;
  if (!isObject(result) || !Array.isArray(result.content)) return JSON.stringify(result) ?? '';
  const parts: string[] = (result.content as unknown[]).flatMap(itemTexts);
  if (result.structuredContent !== undefined) parts.push(asText(result.structuredContent));
  if (result.toolResult !== undefined) parts.push(asText(result.toolResult));
  const meta = metaText(result._meta);
  if (meta !== undefined) parts.push(meta);
  const others = Object.entries(result).filter(([k]) => !RESULT_KEYS.has(k));
  if (others.length > 0) parts.push(JSON.stringify(Object.fromEntries(others)));
  return parts.join('\n');
}

/**
 * A tool result whose text is the PDP's: one text item, the items that show no text kept (images,
 * audio, binary resources), structured content, `toolResult`, members MCP does not define and `_meta` other
 * than MCP's own keys dropped.
 */
export function withText(result: unknown, text: string): unknown {
  const rest = isObject(result) && Array.isArray(result.content) ? (result.content as unknown[]) : [];
  const kept = rest.filter((item) => isObject(item) && itemTexts(item).length === 0);
  const out: Record<string, unknown> = isObject(result) && Array.isArray(result.content) ? { ...result } : {};
  delete out.structuredContent;
  delete out.toolResult;
  for (const key of Object.keys(out)) if (!RESULT_KEYS.has(key)) delete out[key];
  const meta = isObject(out._meta) ? Object.entries(out._meta).filter(([k]) => isProtocolKey(k)) : [];
  if (meta.length > 0) out._meta = Object.fromEntries(meta);
  else delete out._meta;
  out.content = [{ type: 'text', text }, ...kept];
  return out;
}
