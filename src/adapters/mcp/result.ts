/**
 * The text of an MCP tool result that `guardMcpClient` checks at `context_egress`, and the result a
 * WARN makes of it. Pure; internal to `agent-pep/mcp`.
 * @internal
 */
import { isObject } from './common.js';

/** The text of a tool result the PDP checks: text items, embedded resource texts, structured content. */
export function resultText(result: unknown): string {
  if (!isObject(result) || !Array.isArray(result.content)) return JSON.stringify(result) ?? '';
  const parts: string[] = [];
  for (const item of result.content as unknown[]) {
    if (!isObject(item)) continue;
    if (item.type === 'text' && typeof item.text === 'string') parts.push(item.text);
    else if (item.type === 'resource' && isObject(item.resource) && typeof item.resource.text === 'string') {
      parts.push(item.resource.text);
    }
  }
  if (result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent) ?? '');
  return parts.join('\n');
}

/** A tool result whose text is the PDP's: one text item, the other items kept, structured content dropped. */
export function withText(result: unknown, text: string): unknown {
  const rest = isObject(result) && Array.isArray(result.content) ? (result.content as unknown[]) : [];
  const kept = rest.filter(
    (item) =>
      isObject(item) &&
      item.type !== 'text' &&
      !(item.type === 'resource' && isObject(item.resource) && typeof item.resource.text === 'string'),
  );
  const out: Record<string, unknown> = isObject(result) && Array.isArray(result.content) ? { ...result } : {};
  delete out.structuredContent;
  delete out.toolResult;
  out.content = [{ type: 'text', text }, ...kept];
  return out;
}
