/**
 * How the LangChain adapter reads and rewrites LangChain messages (docs/adapters.md "LangChain"): the
 * stage a message is checked at, its text, its reasoning, and the same message with other content.
 * @internal
 */
import {
  AIMessage,
  type BaseMessage,
  ChatMessage,
  FunctionMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
} from '@langchain/core/messages';

/** Roles of a generic `ChatMessage` that are the developer's or the model's (not checked), and tool results. */
const UNCHECKED_ROLES = new Set(['system', 'developer', 'ai', 'assistant', 'model']);
const TOOL_ROLES = new Set(['tool', 'function']);

/**
 * `additional_kwargs.lc_source` values of messages LangChain writes from earlier messages, tool
 * results included: `summarizationMiddleware`'s summary (a `HumanMessage`, docs/adapters.md "Text made
 * from tool output"). Such a message is checked at context egress, never at input.
 */
const DERIVED_SOURCES: ReadonlySet<string> = new Set(['summarization']);

/** Whether LangChain made this message from earlier ones (a summary), rather than a user writing it. */
export function isDerived(message: BaseMessage): boolean {
  const source = (message as { additional_kwargs?: { lc_source?: unknown } }).additional_kwargs?.lc_source;
  return typeof source === 'string' && DERIVED_SOURCES.has(source);
}

/**
 * The stage a message of the prompt is checked at, if any: a message LangChain made from earlier ones
 * ({@link isDerived}: a summary) at context egress; tool results (a `ToolMessage`, a legacy
 * `FunctionMessage`, a `ChatMessage` with a tool role) at context egress; system and AI messages not at
 * all; everything else (a `HumanMessage`, a `ChatMessage` with role `user`, a type this adapter does not
 * know) at input, so that no other message class carries user text to the model unchecked.
 */
export function stageOf(message: BaseMessage): 'input' | 'context_egress' | undefined {
  // Text made from tool output is not the user's words, whatever class carries it (issue 43).
  if (isDerived(message)) return 'context_egress';
  if (HumanMessage.isInstance(message)) return 'input';
  if (ToolMessage.isInstance(message) || FunctionMessage.isInstance(message)) return 'context_egress';
  if (AIMessage.isInstance(message) || SystemMessage.isInstance(message)) return undefined;
  if (ChatMessage.isInstance(message)) {
    const role = String(message.role).toLowerCase();
    if (UNCHECKED_ROLES.has(role)) return undefined;
    return TOOL_ROLES.has(role) ? 'context_egress' : 'input';
  }
  const type = message.getType();
  if (type === 'ai' || type === 'system' || type === 'developer' || type === 'remove') return undefined;
  return 'input';
}

/** The tool name of a tool result message (undefined when it has none). */
export function toolNameOf(message: BaseMessage): string | undefined {
  return stageOf(message) === 'context_egress' && typeof message.name === 'string' ? message.name : undefined;
}

/**
 * The text of a message: its string content, or its text blocks joined. When a block of another type
 * carries text (`input_text`, `output_text`: a provider's own formats, which it may send as they are),
 * every block with a string `text` counts, in order, so no text reaches the model unchecked.
 */
export function textOf(message: BaseMessage): string {
  const content: unknown = message.content;
  if (Array.isArray(content)) {
    const carriesText = (b: unknown): b is { type?: unknown; text: string } =>
      typeof b === 'object' && b !== null && typeof (b as { text?: unknown }).text === 'string';
    if (content.some((b) => carriesText(b) && b.type !== 'text')) {
      return content.map((b) => (typeof b === 'string' ? b : carriesText(b) ? b.text : '')).join('');
    }
  }
  const t = message.text;
  return typeof t === 'string' ? t : '';
}

/** What stands for reasoning a provider sent opaque (`redacted_thinking`): never checkable, so never kept. */
export const WITHHELD_REASONING = '[reasoning that cannot be read]';

/** Block types and `additional_kwargs` members that carry a model's reasoning or thinking. */
const REASONING_BLOCKS: Record<string, string> = { reasoning: 'reasoning', thinking: 'thinking' };
const OPAQUE_REASONING = new Set(['redacted_thinking', 'redacted_reasoning']);

/**
 * The reasoning or thinking a message carries, as one text (blocks `reasoning`/`thinking`, the
 * `additional_kwargs.reasoning_content` some providers use, and OpenAI's reasoning summaries), or
 * undefined when it carries none. Opaque reasoning (`redacted_thinking`) reads as a marker that never
 * passes unchanged, so it is withheld.
 */
export function reasoningOf(message: BaseMessage): string | undefined {
  const texts: string[] = [];
  const content: unknown = message.content;
  if (Array.isArray(content)) {
    for (const b of content) {
      const type = (b as { type?: unknown } | null)?.type;
      if (typeof type !== 'string') continue;
      const field = REASONING_BLOCKS[type];
      const value = field === undefined ? undefined : (b as Record<string, unknown>)[field];
      if (typeof value === 'string') texts.push(value);
      else if (OPAQUE_REASONING.has(type) || field !== undefined) texts.push(WITHHELD_REASONING);
    }
  }
  const kwargs = (message as { additional_kwargs?: Record<string, unknown> }).additional_kwargs ?? {};
  if (typeof kwargs.reasoning_content === 'string') texts.push(kwargs.reasoning_content);
  const summary = (kwargs.reasoning as { summary?: unknown } | undefined)?.summary;
  if (Array.isArray(summary)) {
    for (const s of summary)
      if (typeof (s as { text?: unknown })?.text === 'string') texts.push((s as { text: string }).text);
  }
  return texts.length > 0 ? texts.join('\n') : undefined;
}

/** The same message with other content (a WARN's transformed text, or a denial in a later request). */
export function withContent(message: BaseMessage, content: string): BaseMessage {
  if (ChatMessage.isInstance(message)) {
    const fields: ConstructorParameters<typeof ChatMessage>[0] = { content, role: message.role };
    if (message.id !== undefined) fields.id = message.id;
    if (message.name !== undefined) fields.name = message.name;
    return new ChatMessage(fields);
  }
  if (FunctionMessage.isInstance(message)) {
    const fields: ConstructorParameters<typeof FunctionMessage>[0] = { content, name: message.name };
    if (message.id !== undefined) fields.id = message.id;
    return new FunctionMessage(fields);
  }
  if (ToolMessage.isInstance(message)) {
    const fields: ConstructorParameters<typeof ToolMessage>[0] = { content, tool_call_id: message.tool_call_id };
    if (message.id !== undefined) fields.id = message.id;
    if (message.name !== undefined) fields.name = message.name;
    if (message.status !== undefined) fields.status = message.status;
    return new ToolMessage(fields);
  }
  if (AIMessage.isInstance(message)) {
    const fields: ConstructorParameters<typeof AIMessage>[0] = { content };
    if (message.id !== undefined) fields.id = message.id;
    if (message.name !== undefined) fields.name = message.name;
    if (message.tool_calls !== undefined && message.tool_calls.length > 0) fields.tool_calls = message.tool_calls;
    return new AIMessage(fields);
  }
  const fields: ConstructorParameters<typeof HumanMessage>[0] = { content };
  if (message.id !== undefined) fields.id = message.id;
  if (message.name !== undefined) fields.name = message.name;
  // A summary stays marked as one, so a later run (in this process or another) checks it at context egress.
  if (isDerived(message)) fields.additional_kwargs = { lc_source: message.additional_kwargs.lc_source };
  return new HumanMessage(fields);
}
