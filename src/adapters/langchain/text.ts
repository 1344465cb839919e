/**
 * The text stages of the LangChain adapter: in `wrapModelCall`, new user text (input) and new tool
 * results (context egress, with the tool's name) are checked once each before the model sees them,
 * and the model's message (output) before it is returned; in `afterAgent`, the final message
 * (delivery). WARN replaces the text; BLOCK, ESCALATE or a failure of the adapter stop the step with
 * an `AIMessage` carrying the denial text (docs/adapters.md "LangChain"). The messages themselves are
 * read and rewritten in `messages.ts`.
 * @internal
 */
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { PolicyDecision, TextStage } from '../../decision.js';
import { toolMessage } from '../../errors.js';
import { randomUUID } from '../../internal/runtime.js';
import type { CallOptions } from '../../options/pep.js';
import { type Enforcement, callOptions as kitCallOptions, type TextResult } from '../kit.js';
import { reasoningOf, stageOf, textOf, toolNameOf, WITHHELD_REASONING, withContent } from './messages.js';
import { type Seen, SeenMessages } from './seen.js';
import { cappedModelRequest } from './settings.js';

/** What the text side needs from the middleware. */
export interface TextSide {
  enforcement: Enforcement;
  seen: SeenMessages;
  session(configurable: unknown): string | undefined;
  /** Whether each model request's settings are checked first (docs/interceptors.md, "Model requests"). */
  modelRequest: boolean;
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
  return {
    // biome-ignore lint/suspicious/noExplicitAny: the request and handler are LangChain's generic model-call types
    wrapModelCall: (request: any, handler: (req: any) => unknown): Promise<any> =>
      wrapModelCall(side, request, handler),
    // biome-ignore lint/suspicious/noExplicitAny: LangChain's agent state and runtime
    afterAgent: (state: any, runtime: any) => afterAgent(side, state, runtime),
  };
}

/** The options of one run's checks, and the session key its messages are remembered under. */
interface RunCall {
  opts: CallOptions;
  sessionKey: string;
}

function runCall(side: TextSide, configurable: unknown, signal: unknown): RunCall {
  const session = side.session(configurable);
  return { opts: kitCallOptions({ session, signal }), sessionKey: session ?? '' };
}

/** An `AIMessage` the adapter writes in place of a step it stopped; remembered as its own. */
function stopped(side: TextSide, session: string, decision: PolicyDecision, stage: TextStage, id?: string) {
  const messageId = id ?? randomUUID();
  const content = toolMessage(decision, undefined);
  side.seen.set(SeenMessages.key(session, messageId), { kind: 'pass', text: SeenMessages.digest(content) });
  return new AIMessage({
    id: messageId,
    content,
    response_metadata: { agent_pep: stopInfo(decision, stage) },
  });
}

/** One text decision through the enforcement layer (never rejects; the simulated rule applies). */
function check(
  side: TextSide,
  stage: TextStage,
  text: string,
  opts: CallOptions,
  tool: string | undefined,
): Promise<TextResult> {
  return side.enforcement.decideText(
    stage,
    text,
    stage === 'context_egress' ? { ...opts, ...kitCallOptions({ tool }) } : opts,
  );
}

/** A refusal of the adapter itself (observed), as the decision a stop message carries. */
function adapterFailure(side: TextSide, stage: TextStage): PolicyDecision {
  return side.enforcement.refuse({ stage }, 'invalid_request', 'adapter error').decision;
}

/** What to remember of a decision: a PDP BLOCK is remembered as its denial text; a failure or a hold is not. */
function toRemember(r: TextResult, text: string): Seen | undefined {
  if (r.kind === 'passed') return r.text === text ? { kind: 'pass' } : { kind: 'replace', content: r.text };
  const d = r.decision;
  if (d.verdict === 'BLOCK' && d.synthesized === undefined) return { kind: 'replace', content: r.toolMessage };
  return undefined; // an outage, a hold or a simulated decision: checked again next time
}

/**
 * Input and context egress of one model call: each new message checked once, earlier ones as decided
 * then. The messages to send, or the stop message of the first refusal.
 */
async function checkPrompt(
  side: TextSide,
  call: RunCall,
  messages: BaseMessage[],
): Promise<{ kind: 'send'; messages: BaseMessage[] } | { kind: 'stop'; message: AIMessage }> {
  const pending: Promise<{ index: number; r: TextResult; key: string | undefined; text: string }>[] = [];
  const out: BaseMessage[] = [...messages];
  messages.forEach((message, index) => {
    const at = stageOf(message);
    if (at === undefined) return;
    const key = SeenMessages.key(call.sessionKey, message.id);
    const text = textOf(message);
    // Known only for the text it was decided for: an edit under the same id is checked again.
    const known = side.seen.match(key, text);
    if (known !== undefined) {
      if (known.kind === 'replace') out[index] = withContent(message, known.content);
      return;
    }
    if (text === '') return;
    const tool = toolNameOf(message);
    pending.push(check(side, at, text, call.opts, tool).then((r) => ({ index, r, key, text })));
  });
  const decided = await Promise.all(pending);
  for (const { index, r, key, text } of decided) {
    const message = messages[index] as BaseMessage;
    const keep = toRemember(r, text);
    if (keep !== undefined) side.seen.set(key, { ...keep, text: SeenMessages.digest(text) });
    if (r.kind === 'passed' && r.text !== text) out[index] = withContent(message, r.text);
  }
  const stop = decided.find((d) => d.r.kind === 'refused');
  if (stop === undefined) return { kind: 'send', messages: out };
  const decision = stop.r.decision;
  return { kind: 'stop', message: stopped(side, call.sessionKey, decision, decision.stage as TextStage) };
}

/**
 * Output: the model's message checked before it is returned; a structured response (`responseFormat`)
 * is checked as its JSON, and only an unchanged pass returns it.
 */
async function checkResponse(side: TextSide, call: RunCall, response: unknown): Promise<unknown> {
  if (AIMessage.isInstance(response)) {
    const r = await checkWhole(side, 'output', response, call.opts);
    return r.kind === 'refused' ? stopped(side, call.sessionKey, r.decision, 'output') : r.message;
  }
  const json = JSON.stringify((response as { structuredResponse?: unknown })?.structuredResponse ?? response);
  const r = await check(side, 'output', json ?? '', call.opts, undefined);
  return r.kind === 'passed' && r.text === json ? response : stopped(side, call.sessionKey, r.decision, 'output');
}

// biome-ignore lint/suspicious/noExplicitAny: the request and handler are LangChain's generic model-call types
async function wrapModelCall(side: TextSide, request: any, handler: (req: any) => unknown): Promise<any> {
  let sessionKey = '';
  let stage: TextStage = 'input';
  try {
    const call = runCall(side, request.runtime?.configurable, request.runtime?.signal);
    sessionKey = call.sessionKey;
    if (side.modelRequest) {
      stage = 'context_egress';
      const capped = await cappedModelRequest(side.enforcement, request, call.opts);
      if (capped.kind === 'refused') return stopped(side, sessionKey, capped.decision, 'context_egress');
      request = capped.request;
      stage = 'input';
    }
    const messages: BaseMessage[] = Array.isArray(request.messages) ? request.messages : [];
    const prompt = await checkPrompt(side, call, messages);
    if (prompt.kind === 'stop') return prompt.message;

    // The model call itself: its errors are the framework's.
    stage = 'output';
    let response: unknown;
    try {
      response = await handler({ ...request, model: heldStream(request.model), messages: prompt.messages });
    } catch (error) {
      throw new ModelFailure(error);
    }
    return await checkResponse(side, call, response);
  } catch (err) {
    if (err instanceof ModelFailure) throw err.error;
    return stopped(side, sessionKey, adapterFailure(side, stage), stage);
  }
}

/**
 * A message's text and its reasoning or thinking (checked as text of its own) through one stage: the
 * message to use, or the refusal. Unchanged, the message is used as it is; a WARN on either gives the
 * message with the checked text and without its reasoning (a replacement cannot be put back into
 * provider blocks: withheld).
 */
async function checkWhole(
  side: TextSide,
  stage: 'output' | 'delivery',
  message: BaseMessage,
  opts: CallOptions,
): Promise<{ kind: 'passed'; message: BaseMessage } | { kind: 'refused'; decision: PolicyDecision }> {
  const text = textOf(message);
  const thought = reasoningOf(message);
  const [r, t] = await Promise.all([
    text === '' ? undefined : check(side, stage, text, opts, undefined),
    thought === undefined ? undefined : check(side, stage, thought, opts, undefined),
  ]);
  if (r?.kind === 'refused') return r;
  if (t?.kind === 'refused') return t;
  const textChanged = r !== undefined && r.text !== text;
  const thoughtChanged = t !== undefined && (t.text !== thought || thought.includes(WITHHELD_REASONING));
  if (!textChanged && !thoughtChanged) return { kind: 'passed', message };
  return { kind: 'passed', message: withContent(message, r?.text ?? text) };
}

/**
 * The prompt messages whose replacement (a WARN's text, a BLOCK's denial) is not in the state yet:
 * written back at the end of the run, so later runs, in this process or another, send the checked
 * text and never the original.
 */
function writeBack(
  side: TextSide,
  sessionKey: string,
  messages: BaseMessage[],
  except: BaseMessage | undefined,
): BaseMessage[] {
  const fixes: BaseMessage[] = [];
  for (const message of messages) {
    if (message === except || stageOf(message) === undefined) continue;
    const known = side.seen.match(SeenMessages.key(sessionKey, message.id), textOf(message));
    if (known?.kind === 'replace' && textOf(message) !== known.content) fixes.push(withContent(message, known.content));
  }
  return fixes;
}

/** Delivery: the final message checked (text and reasoning), with the prompt's replacements written back. */
// biome-ignore lint/suspicious/noExplicitAny: LangChain's agent state and runtime
async function afterAgent(side: TextSide, state: any, runtime: any): Promise<{ messages: BaseMessage[] } | undefined> {
  let sessionKey = '';
  let last: BaseMessage | undefined;
  let fixes: BaseMessage[] = [];
  const update = (more: BaseMessage[]) => {
    const all = [...fixes, ...more];
    return all.length > 0 ? { messages: all } : undefined;
  };
  try {
    const call = runCall(side, runtime?.configurable, runtime?.signal);
    sessionKey = call.sessionKey;
    const messages: BaseMessage[] = Array.isArray(state?.messages) ? state.messages : [];
    last = messages.at(-1);
    if (last === undefined) return undefined;
    fixes = writeBack(side, sessionKey, messages, last);
    const key = SeenMessages.key(sessionKey, last.id);
    if (side.seen.match(key, textOf(last))?.kind === 'pass' && isStopMessage(last)) {
      return update([]); // the adapter's own stop message
    }
    const checked = await checkWhole(side, 'delivery', last, call.opts);
    if (checked.kind === 'refused') return update([deliveryStop(side, sessionKey, checked.decision, last)]);
    return update(checked.message === last ? [] : [checked.message]);
  } catch {
    if (last === undefined) return undefined;
    return update([deliveryStop(side, sessionKey, adapterFailure(side, 'delivery'), last)]);
  }
}

/** Whether a message is shaped as the adapter's own stop message (an `AIMessage` with `agent_pep` metadata). */
function isStopMessage(message: BaseMessage): boolean {
  return AIMessage.isInstance(message) && Boolean(message.response_metadata?.agent_pep);
}

/** The final message replaced (same id, same type) by the delivery denial. */
function deliveryStop(side: TextSide, sessionKey: string, decision: PolicyDecision, last: BaseMessage): BaseMessage {
  if (AIMessage.isInstance(last) || last.id === undefined) {
    return stopped(side, sessionKey, decision, 'delivery', last.id);
  }
  side.seen.set(SeenMessages.key(sessionKey, last.id), {
    kind: 'replace',
    content: toolMessage(decision, undefined),
    text: SeenMessages.digest(textOf(last)),
  });
  return withContent(last, toolMessage(decision, undefined));
}

/** The model's own failure, kept apart from the adapter's so the framework handles it as it would without us. */
class ModelFailure {
  constructor(readonly error: unknown) {}
}
