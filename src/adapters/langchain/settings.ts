/**
 * Model-request caps in the LangChain adapter (docs/interceptors.md, "Model requests"): the settings
 * of the model call `wrapModelCall` is about to make (the chat model's `model`, `temperature`, `topP`
 * and `maxTokens`, and the request's system message) are checked before it is sent; a replaced system
 * message goes into the request, a changed number or model into a copy of the chat model made from
 * its own constructor fields (`lc_kwargs`), checked to hold the value. A change that cannot be applied
 * so is refused (`ambiguous_decision`): nothing is sent with settings nobody allowed.
 * @internal
 */
import { SystemMessage } from '@langchain/core/messages';
import type { ModelRequest } from '../../options/interceptors.js';
import type { Enforcement, Refused } from '../kit.js';

/** The chat model's own field for each numeric setting (LangChain's common names). */
const FIELDS = { temperature: 'temperature', topP: 'topP', maxOutputTokens: 'maxTokens' } as const;

type Model = Record<string, unknown> & { lc_kwargs?: Record<string, unknown>; constructor: unknown };

/** The chat model's id: its `model`, else its `modelName`. */
function modelId(model: Model | undefined): string | undefined {
  const id = model?.model ?? model?.modelName;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/** The settings of a LangChain model request. */
// biome-ignore lint/suspicious/noExplicitAny: LangChain's generic ModelRequest
export function settingsOf(request: any): ModelRequest {
  const model = request?.model as Model | undefined;
  const asked: ModelRequest = {};
  const id = modelId(model);
  if (id !== undefined) asked.model = id;
  const system = request?.systemMessage?.text ?? request?.systemPrompt;
  if (typeof system === 'string' && system !== '') asked.system = system;
  for (const [key, field] of Object.entries(FIELDS) as [keyof typeof FIELDS, string][]) {
    const v = model?.[field];
    if (typeof v === 'number') asked[key] = v;
  }
  return asked;
}

/** A copy of the chat model with `changes` set, made from its constructor fields; undefined when it cannot be. */
function rebuilt(model: Model, changes: Record<string, unknown>): Model | undefined {
  const Ctor = model.constructor as new (fields: Record<string, unknown>) => Model;
  if (typeof Ctor !== 'function' || typeof model.lc_kwargs !== 'object' || model.lc_kwargs === null) return undefined;
  try {
    const copy = new Ctor({ ...model.lc_kwargs, ...changes });
    return Object.entries(changes).every(([k, v]) => copy[k] === v) ? copy : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The request to send with the allowed settings, or the refusal (observed) that stops the model call:
 * the decision's, or `ambiguous_decision` for a change this model cannot take.
 */
export async function cappedModelRequest(
  enforcement: Enforcement,
  // biome-ignore lint/suspicious/noExplicitAny: LangChain's generic ModelRequest
  request: any,
  opts: unknown,
  // biome-ignore lint/suspicious/noExplicitAny: LangChain's generic ModelRequest
): Promise<{ kind: 'send'; request: any } | Refused> {
  const asked = settingsOf(request);
  const r = await enforcement.decideModelRequest(asked, opts);
  if (r.kind === 'refused') return r;
  const allowed = r.request;
  let next = request;
  if (allowed.system !== undefined && allowed.system !== asked.system) {
    next = { ...next, systemMessage: new SystemMessage(allowed.system) };
  }
  const changes: Record<string, unknown> = {};
  if (allowed.model !== asked.model) changes.model = allowed.model;
  for (const [key, field] of Object.entries(FIELDS) as [keyof typeof FIELDS, string][]) {
    if (allowed[key] !== asked[key]) changes[field] = allowed[key];
  }
  if (Object.keys(changes).length === 0) return { kind: 'send', request: next };
  const model = rebuilt(request.model as Model, changes);
  if (model === undefined) {
    const message = `the model request's ${Object.keys(changes).join(', ')} was changed, which this chat model cannot take`;
    return enforcement.refuse({ stage: 'context_egress' }, 'ambiguous_decision', message);
  }
  return { kind: 'send', request: { ...next, model } };
}
