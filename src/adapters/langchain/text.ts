/**
 * The text stages of the LangChain adapter: in `wrapModelCall`, new user text (input) and new tool
 * results (context egress, with the tool's name) are checked once each before the model sees them,
 * and the model's message (output) before it is returned; in `afterAgent`, the final message
 * (delivery). WARN replaces the text; BLOCK, ESCALATE or a failure of the adapter stop the step with
 * an `AIMessage` carrying the section-5 text (docs/api.md and docs/adapters.md).
 * @internal
 */
import { randomUUID } from 'node:crypto';
import {
  AIMessage,
  type BaseMessage,
  ChatMessage,
  FunctionMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
} from '@langchain/core/messages';
import { type PolicyDecision, synthesizeBlock, type TextStage } from '../../decision.js';
import { toolMessage } from '../../errors.js';
import type { CallOptions, EgressCallOptions } from '../../options/pep.js';
import type { Pep } from '../../pep.js';
import { type Seen, SeenMessages } from './seen.js';

/** What the text side needs from the middleware. */
export interface TextSide {
  pep: Pep;
  seen: SeenMessages;
  session(configurable: unknown): string | undefined;
}

/**
 * What a stop message says about the step it replaced, as its `response_metadata.agent_pep`: the stage,
 * the verdict, the request id (for the PDP's evidence feed) and the code (`'blocked'`, `'escalated'` or
 * the fail-closed code). Never the text that was stopped.
 */
export interface PepStopInfo {
  stage: TextStage;
  verdict: PolicyDecision['verdict'];
  requestId: string;
  code?: string;
}

/** Roles of a generic `ChatMessage` that are the developer's or the model's (not checked), and tool results. */
const UNCHECKED_ROLES = new Set(['system', 'developer', 'ai', 'assistant', 'model']);
const TOOL_ROLES = new Set(['tool', 'function']);

/**
 * The stage a message of the prompt is checked at, if any: tool results (a `ToolMessage`, a legacy
 * `FunctionMessage`, a `ChatMessage` with a tool role) at context egress; system and AI messages not at
 * all; everything else (a `HumanMessage`, a `ChatMessage` with role `user`, a type this adapter does not
 * know) at input, so that no other message class carries user text to the model unchecked.
 */
function stageOf(message: BaseMessage): 'input' | 'context_egress' | undefined {
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
function toolNameOf(message: BaseMessage): string | undefined {
  return stageOf(message) === 'context_egress' && typeof message.name === 'string' ? message.name : undefined;
}

/**
 * The text of a message: its string content, or its text blocks joined. When a block of another type
 * carries text (`input_text`, `output_text`: a provider's own formats, which it may send as they are),
 * every block with a string `text` counts, in order, so no text reaches the model unchecked.
 */
function textOf(message: BaseMessage): string {
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

/** The same message with other content (a WARN's transformed text, or a denial in a later request). */
function withContent(message: BaseMessage, content: string): BaseMessage {
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
  return new HumanMessage(fields);
}

/** LangGraph's tag for a run whose tokens must not reach `streamMode: 'messages'`. */
const NO_STREAM = 'langsmith:nostream';

/**
 * The model, tagged so that LangGraph does not stream its tokens: with `streamMode: 'messages'` the
 * message then reaches the stream only when the model node ends, after the output check. A model
 * that cannot be tagged is used as it is (its tokens stream unchecked; `invoke` is unaffected).
 */
// biome-ignore lint/suspicious/noExplicitAny: LangChain's AgentLanguageModelLike
function heldStream(model: any): any {
  try {
    if (typeof model?.withConfig !== 'function') return model;
    return model.withConfig({ tags: [NO_STREAM] });
  } catch {
    return model;
  }
}

/** A decision the adapter could not get: an error of its own, failing closed. */
function adapterFailure(stage: TextStage): PolicyDecision {
  return synthesizeBlock(stage, randomUUID(), 'invalid_request', 'adapter error', 0);
}

/** The text and metadata of a step the adapter stopped. */
function stopInfo(decision: PolicyDecision, stage: TextStage): PepStopInfo {
  const info: PepStopInfo = { stage, verdict: decision.verdict, requestId: decision.requestId };
  const code = decision.synthesized?.code ?? (decision.verdict === 'ESCALATE' ? 'escalated' : 'blocked');
  info.code = code;
  return info;
}

/**
 * Builds `wrapModelCall` and `afterAgent`.
 * @internal
 */
export function makeTextHooks(side: TextSide) {
  const { pep, seen } = side;

  /** An `AIMessage` the adapter writes in place of a step it stopped; remembered as its own. */
  function stopped(session: string, decision: PolicyDecision, stage: TextStage, id?: string): AIMessage {
    const messageId = id ?? randomUUID();
    const content = toolMessage(decision, undefined);
    seen.set(SeenMessages.key(session, messageId), { kind: 'pass', text: SeenMessages.digest(content) });
    return new AIMessage({
      id: messageId,
      content,
      response_metadata: { agent_pep: stopInfo(decision, stage) },
    });
  }

  /** One text decision, never rejecting (an error of ours is a synthesized BLOCK). */
  async function check(
    stage: TextStage,
    text: string,
    opts: CallOptions,
    tool: string | undefined,
  ): Promise<PolicyDecision> {
    try {
      switch (stage) {
        case 'input':
          return await pep.checkInput(text, opts);
        case 'context_egress': {
          const egress: EgressCallOptions = { ...opts };
          if (tool !== undefined && tool !== '') egress.tool = tool;
          return await pep.checkContextEgress(text, egress);
        }
        case 'output':
          return await pep.checkOutput(text, opts);
        default:
          return await pep.checkDelivery(text, opts);
      }
    } catch {
      return adapterFailure(stage);
    }
  }

  /** What to remember of a decision: a PDP BLOCK is remembered as its denial text; a failure or a hold is not. */
  function remembered(decision: PolicyDecision): Seen | undefined {
    if (decision.verdict === 'ALLOW') return { kind: 'pass' };
    if (decision.verdict === 'WARN') return { kind: 'replace', content: decision.transformedContent ?? '' };
    if (decision.verdict === 'BLOCK' && decision.synthesized === undefined) {
      return { kind: 'replace', content: toolMessage(decision, undefined) };
    }
    return undefined; // an outage or a hold: checked again next time
  }

  function callOptions(configurable: unknown, signal: unknown): { opts: CallOptions; sessionKey: string } {
    const session = side.session(configurable);
    const opts: CallOptions = {};
    if (session !== undefined) opts.session = session;
    if (signal instanceof AbortSignal) opts.signal = signal;
    return { opts, sessionKey: session ?? '' };
  }

  // biome-ignore lint/suspicious/noExplicitAny: the request and handler are LangChain's generic model-call types
  async function wrapModelCall(request: any, handler: (req: any) => unknown): Promise<any> {
    let sessionKey = '';
    let stage: TextStage = 'input';
    try {
      const call = callOptions(request.runtime?.configurable, request.runtime?.signal);
      sessionKey = call.sessionKey;
      const messages: BaseMessage[] = Array.isArray(request.messages) ? request.messages : [];

      // Input and context egress: each new message once; earlier ones as decided then.
      const pending: Promise<{ index: number; decision: PolicyDecision; key: string | undefined; text: string }>[] = [];
      const out: BaseMessage[] = [...messages];
      messages.forEach((message, index) => {
        const at = stageOf(message);
        if (at === undefined) return;
        const key = SeenMessages.key(sessionKey, message.id);
        const text = textOf(message);
        // Known only for the text it was decided for: an edit under the same id is checked again.
        const known = seen.match(key, text);
        if (known !== undefined) {
          if (known.kind === 'replace') out[index] = withContent(message, known.content);
          return;
        }
        if (text === '') return;
        const tool = toolNameOf(message);
        pending.push(check(at, text, call.opts, tool).then((decision) => ({ index, decision, key, text })));
      });
      const decided = await Promise.all(pending);
      for (const { index, decision, key, text } of decided) {
        const message = messages[index] as BaseMessage;
        const keep = remembered(decision);
        if (keep !== undefined) seen.set(key, { ...keep, text: SeenMessages.digest(text) });
        if (decision.verdict === 'WARN') out[index] = withContent(message, decision.transformedContent ?? '');
      }
      const stop = decided.find((d) => d.decision.verdict === 'BLOCK' || d.decision.verdict === 'ESCALATE');
      if (stop !== undefined) return stopped(sessionKey, stop.decision, stop.decision.stage as TextStage);

      // The model call itself: its errors are the framework's.
      stage = 'output';
      let response: unknown;
      try {
        response = await handler({ ...request, model: heldStream(request.model), messages: out });
      } catch (error) {
        throw new ModelFailure(error);
      }

      // Output: the model's message is checked before it is returned.
      if (AIMessage.isInstance(response)) {
        const text = textOf(response);
        if (text === '') return response;
        const decision = await check('output', text, call.opts, undefined);
        if (decision.verdict === 'ALLOW') return response;
        if (decision.verdict === 'WARN') return withContent(response, decision.transformedContent ?? '');
        return stopped(sessionKey, decision, 'output');
      }
      // A structured response (responseFormat): its JSON is checked; only an ALLOW returns it.
      const json = JSON.stringify((response as { structuredResponse?: unknown })?.structuredResponse ?? response);
      const decision = await check('output', json ?? '', call.opts, undefined);
      return decision.verdict === 'ALLOW' ? response : stopped(sessionKey, decision, 'output');
    } catch (err) {
      if (err instanceof ModelFailure) throw err.error;
      return stopped(sessionKey, adapterFailure(stage), stage);
    }
  }

  /**
   * The prompt messages whose replacement (a WARN's text, a BLOCK's denial) is not in the state yet:
   * written back at the end of the run, so later runs, in this process or another, send the checked
   * text and never the original.
   */
  function writeBack(sessionKey: string, messages: BaseMessage[], except: BaseMessage | undefined): BaseMessage[] {
    const fixes: BaseMessage[] = [];
    for (const message of messages) {
      if (message === except || stageOf(message) === undefined) continue;
      const known = seen.match(SeenMessages.key(sessionKey, message.id), textOf(message));
      if (known?.kind === 'replace' && textOf(message) !== known.content)
        fixes.push(withContent(message, known.content));
    }
    return fixes;
  }

  // biome-ignore lint/suspicious/noExplicitAny: LangChain's agent state and runtime
  async function afterAgent(state: any, runtime: any): Promise<{ messages: BaseMessage[] } | undefined> {
    let sessionKey = '';
    let last: BaseMessage | undefined;
    let fixes: BaseMessage[] = [];
    const update = (more: BaseMessage[]) => {
      const all = [...fixes, ...more];
      return all.length > 0 ? { messages: all } : undefined;
    };
    try {
      const call = callOptions(runtime?.configurable, runtime?.signal);
      sessionKey = call.sessionKey;
      const messages: BaseMessage[] = Array.isArray(state?.messages) ? state.messages : [];
      last = messages.at(-1);
      if (last === undefined) return undefined;
      fixes = writeBack(sessionKey, messages, last);
      const key = SeenMessages.key(sessionKey, last.id);
      const text = textOf(last);
      if (seen.match(key, text)?.kind === 'pass' && AIMessage.isInstance(last) && last.response_metadata?.agent_pep) {
        return update([]); // the adapter's own stop message
      }
      if (text === '') return update([]);
      const decision = await check('delivery', text, call.opts, undefined);
      if (decision.verdict === 'ALLOW') return update([]);
      if (decision.verdict === 'WARN') return update([withContent(last, decision.transformedContent ?? '')]);
      return update([deliveryStop(sessionKey, decision, last)]);
    } catch {
      if (last === undefined) return undefined;
      return update([deliveryStop(sessionKey, adapterFailure('delivery'), last)]);
    }
  }

  /** The final message replaced (same id, same type) by the delivery denial. */
  function deliveryStop(sessionKey: string, decision: PolicyDecision, last: BaseMessage): BaseMessage {
    if (AIMessage.isInstance(last) || last.id === undefined) return stopped(sessionKey, decision, 'delivery', last.id);
    seen.set(SeenMessages.key(sessionKey, last.id), {
      kind: 'replace',
      content: toolMessage(decision, undefined),
      text: SeenMessages.digest(textOf(last)),
    });
    return withContent(last, toolMessage(decision, undefined));
  }

  return { wrapModelCall, afterAgent };
}

/** The model's own failure, kept apart from the adapter's so the framework handles it as it would without us. */
class ModelFailure {
  constructor(readonly error: unknown) {}
}
