/**
 * `pepMiddleware` for the Vercel AI SDK (`ai` 6.x and 7.x): a language-model middleware that checks new
 * user text (`input`) and new tool results (`context_egress`) once each before the model is called, and
 * the generated text (`output`) before it is returned, a stream included (docs/adapters.md).
 * @internal
 */
import type { LanguageModelMiddleware } from 'ai';
import type { TextStage } from '../../decision.js';
import { PolicyBlockedError } from '../../errors.js';
import type { ModelRequest } from '../../options/interceptors.js';
import type { EgressCallOptions } from '../../options/pep.js';
import type { Pep } from '../../pep.js';
import { sha256b64url } from '../../permit/hash.js';
import { type Enforcement, enforcementOf, RULES, readOptions, TextMemory } from '../kit.js';
import { checksModelRequests, decideSettings } from '../model-request.js';

/** Options of {@link pepMiddleware}. */
export interface PepMiddlewareOptions {
  /**
   * The session sent with every check (the AI SDK has no conversation id of its own).
   * @defaultValue the client's `session`
   */
  session?: string;
  /**
   * How many checked texts are remembered, so that a text already in an earlier prompt is not sent
   * again (its WARN replacement is reapplied). Past it the oldest are forgotten (and checked again).
   * @defaultValue 10000
   */
  maxRemembered?: number;
  /**
   * Check each model request's settings (`model`, the system messages as `system`, `temperature`,
   * `topP`, `maxOutputTokens`) before it is sent (docs/interceptors.md, "Model requests"): capped or
   * replaced as the `modelRequest` interceptors and the PDP say; a deny or BLOCK rejects the call. A
   * replaced `model` cannot be applied in a middleware: the call is refused (`ambiguous_decision`).
   * @defaultValue true when the client has `modelRequest` interceptors, else false
   */
  modelRequest?: boolean;
}

const DEFAULT_REMEMBERED = 10_000;

interface Part {
  type?: unknown;
  text?: unknown;
  toolCallId?: unknown;
  toolName?: unknown;
  output?: unknown;
  [key: string]: unknown;
}
interface Message {
  role?: unknown;
  content?: unknown;
  [key: string]: unknown;
}
interface CallParams {
  prompt?: unknown;
  abortSignal?: unknown;
  [key: string]: unknown;
}
interface StreamPart {
  type?: unknown;
  id?: unknown;
  delta?: unknown;
  [key: string]: unknown;
}

/**
 * A prompt this middleware cannot read (not the SDK's list of messages and parts): refused with a
 * synthesized BLOCK `invalid_request`, so the model is never called with text nobody checked.
 */
function refusal(enforcement: Enforcement, stage: TextStage): PolicyBlockedError {
  const message = 'the prompt could not be read to be checked';
  return new PolicyBlockedError(enforcement.refuse({ stage }, 'invalid_request', message).decision);
}

/** The text of a tool result the model is about to see (a denial's reason included), or undefined for none. */
function outputText(output: unknown): string | undefined {
  const o = output as { type?: unknown; value?: unknown } | null;
  switch (o?.type) {
    case 'text':
    case 'error-text':
      return typeof o.value === 'string' ? o.value : JSON.stringify(o.value ?? null);
    case 'json':
    case 'error-json':
      return JSON.stringify(o.value ?? null);
    case 'content':
      return Array.isArray(o.value)
        ? o.value
            .filter((p: { type?: unknown }) => p?.type === 'text')
            .map((p: { text?: unknown }) => String(p.text))
            .join('\n')
        : '';
    case 'execution-denied': {
      // the reason is text the model reads (a person may have typed it when denying the call)
      const reason = (o as { reason?: unknown }).reason;
      return typeof reason === 'string' && reason !== '' ? reason : undefined;
    }
    default:
      // an output type this adapter does not know is checked as JSON, never passed unchecked
      return JSON.stringify(o ?? null);
  }
}

/**
 * A language-model middleware for `wrapLanguageModel` that puts the PEP's text stages around every model
 * call.
 *
 * Before the model is called (`transformParams`), the text of each user message (its text parts joined) is checked at
 * `input` and each tool result at `context_egress` (with the tool's name), once each: a text already
 * checked in an earlier step of the same session is not sent again, its WARN replacement is reapplied.
 * WARN replaces the text in the prompt with the PDP's `transformedContent`; BLOCK or ESCALATE rejects,
 * so the model is never called. After the model answered, its generated text is checked at `output`
 * (all text parts of one response as one text): WARN replaces it, BLOCK or ESCALATE rejects. A stream is
 * held whole and released only after its text passed the check.
 *
 * The text stages only: tools are guarded by `guardTools`. Not `agent-pep/langchain`'s `pepMiddleware`,
 * an agent middleware for every stage (docs/adapters.md "Names two entries share").
 *
 * @param pep - the client that decides
 * @param opts - `{ session?, maxRemembered? }` ({@link PepMiddlewareOptions})
 * @returns a `LanguageModelMiddleware` for `wrapLanguageModel({ model, middleware })` (6.x and 7.x)
 * @throws TypeError on an unknown or bad option (`err.option` names it)
 * @remarks Fails closed: a PDP that is down, slow or unclear is a synthesized BLOCK, which rejects the
 * call (`generateText` rejects with the {@link PolicyEnforcementError}; a stream ends with it as its
 * error and releases no text). The SDK's `abortSignal` ends a pending check. File and image parts are
 * not text and are not checked; a tool result's media parts are dropped when a WARN replaces its text.
 * @example
 * ```ts
 * const model = wrapLanguageModel({ model: baseModel, middleware: pepMiddleware(pep) });
 * const { text } = await generateText({ model, prompt: 'Where is my order?' });
 * ```
 */
export function pepMiddleware(pep: Pep, opts: PepMiddlewareOptions = {}): LanguageModelMiddleware {
  const enforcement = enforcementOf(pep, 'pepMiddleware');
  const o = readOptions<PepMiddlewareOptions>('pepMiddleware', opts, {
    session: RULES.session,
    maxRemembered: RULES.count,
    modelRequest: RULES.boolean,
  });
  const caps = checksModelRequests(enforcement, o.modelRequest);
  const side: Side = {
    pep,
    enforcement,
    session: o.session,
    remembered: new TextMemory<string>(o.maxRemembered ?? DEFAULT_REMEMBERED),
  };
  const middleware = {
    specificationVersion: 'v3',
    transformParams: async ({ params, model }: { params: CallParams; model?: { modelId?: unknown } }) =>
      transformPrompt(side, caps ? await cappedParams(side, params, model?.modelId) : params),
    wrapGenerate: async ({ doGenerate, params }: { doGenerate: () => Promise<Generated>; params: CallParams }) =>
      checkGenerated(side, await doGenerate(), params.abortSignal),
    wrapStream: async ({ doStream, params }: { doStream: () => Promise<Streamed>; params: CallParams }) => {
      const result = await doStream();
      return { ...result, stream: heldStream(result.stream, (text) => checkOutput(side, text, params.abortSignal)) };
    },
  };
  return middleware as unknown as LanguageModelMiddleware;
}

/** The system messages of a prompt, as one text (undefined when there are none, or one is not plain text). */
function systemText(prompt: unknown): string | undefined {
  if (!Array.isArray(prompt)) return undefined;
  const texts = (prompt as Message[]).filter((m) => m?.role === 'system').map((m) => m.content);
  return texts.length > 0 && texts.every((t) => typeof t === 'string') ? texts.join('\n') : undefined;
}

/**
 * The call's settings checked (docs/interceptors.md, "Model requests") and applied: numbers capped,
 * the system messages replaced by one with the allowed text. Throws the refusal (a deny, a BLOCK, a
 * replaced model, which a middleware cannot switch to).
 */
async function cappedParams(side: Side, params: CallParams, modelId: unknown): Promise<CallParams> {
  const asked: ModelRequest = {};
  if (typeof modelId === 'string') asked.model = modelId;
  const system = systemText(params.prompt);
  if (system !== undefined) asked.system = system;
  for (const key of ['temperature', 'topP', 'maxOutputTokens'] as const) {
    const v = params[key];
    if (typeof v === 'number') asked[key] = v;
  }
  const allowed = await decideSettings(side.enforcement, asked, callOpts(side, params.abortSignal), ['model']);
  if (allowed instanceof Error) throw allowed;
  const next: CallParams = { ...params };
  for (const key of ['temperature', 'topP', 'maxOutputTokens'] as const) {
    if (allowed[key] !== undefined) next[key] = allowed[key];
  }
  if (allowed.system !== undefined && allowed.system !== system && Array.isArray(params.prompt)) {
    const rest = (params.prompt as Message[]).filter((m) => m?.role !== 'system');
    next.prompt = [{ role: 'system', content: allowed.system }, ...rest];
  }
  return next;
}

/** What one middleware works with: its client, its session and its memory of checked texts. */
interface Side {
  pep: Pep;
  enforcement: Enforcement;
  session: string | undefined;
  /** key of a checked text -> the text to use in its place. */
  remembered: TextMemory<string>;
}

/** What `doGenerate` and `doStream` resolve with, as far as this middleware reads them. */
interface Generated {
  content?: unknown;
  response?: unknown;
}
interface Streamed {
  stream: ReadableStream<StreamPart>;
}

/** The memory key of a text: the session and the parts that place the text in the prompt, hashed. */
function keyOf(side: Side, parts: readonly unknown[]): string {
  return sha256b64url(JSON.stringify([side.session ?? null, ...parts]));
}

function callOpts(side: Side, signal: unknown, tool?: string): EgressCallOptions {
  const o: EgressCallOptions = {};
  if (side.session !== undefined) o.session = side.session;
  if (signal instanceof AbortSignal) o.signal = signal;
  if (tool !== undefined) o.tool = tool;
  return o;
}

/** The text to use: remembered, or checked now (throws on BLOCK or ESCALATE). */
async function checked(side: Side, stage: TextStage, key: string, text: string, signal: unknown, tool?: string) {
  const known = side.remembered.get(key);
  if (known !== undefined) return known;
  const use = await side.pep.guardText(stage, text, callOpts(side, signal, tool));
  side.remembered.set(key, use);
  return use;
}

/** The generated text to use for `text` (throws on BLOCK or ESCALATE). */
function checkOutput(side: Side, text: string, signal: unknown): Promise<string> {
  return side.pep.guardText('output', text, callOpts(side, signal));
}

/** The text parts of `parts` as one text, as the model reads them (or writes them). */
function joined(texts: readonly Part[]): string {
  return texts.map((p) => p.text as string).join('');
}

/** WARN: the whole text `use` goes into the first of the text parts `texts`; the other text parts are dropped. */
function withText(parts: readonly Part[], texts: readonly Part[], use: string): Part[] {
  const first = texts[0];
  return parts.flatMap((p) => (p === first ? [{ ...p, text: use }] : texts.includes(p) ? [] : [p]));
}

/**
 * `providerOptions.agentPep.source` values that mark a user-role message as text the app made from
 * earlier messages or tool output (a summary, a condensed history, a memory recall; docs/adapters.md
 * "Text made from tool output"): such a message is checked at `context_egress`, never at `input`.
 */
const DERIVED_SOURCES: ReadonlySet<string> = new Set(['summary', 'history', 'memory', 'tool-output']);

/** Whether a user-role prompt message is marked as made from earlier messages or tool output. */
function isDerived(message: Message): boolean {
  const options = (message as { providerOptions?: { agentPep?: { source?: unknown } } }).providerOptions;
  const source = options?.agentPep?.source;
  return typeof source === 'string' && DERIVED_SOURCES.has(source);
}

/**
 * The text of one user-role message, checked as one text (the text parts joined, as the model reads
 * them) at `stage`: `input`, or `context_egress` for a message made from tool output.
 */
async function userContent(
  side: Side,
  i: number,
  content: unknown,
  signal: unknown,
  stage: 'input' | 'context_egress' = 'input',
): Promise<unknown> {
  if (typeof content === 'string') {
    // a prompt built by hand (the SDK always makes a list of parts): checked all the same
    return checked(side, stage, keyOf(side, [stage, i, content]), content, signal);
  }
  if (!Array.isArray(content)) throw refusal(side.enforcement, stage);
  const texts = (content as Part[]).filter((p) => p?.type === 'text');
  if (texts.some((p) => typeof p.text !== 'string')) throw refusal(side.enforcement, stage);
  if (texts.length === 0) return content;
  const text = joined(texts);
  const use = await checked(side, stage, keyOf(side, [stage, i, text]), text, signal);
  return use === text ? content : withText(content as Part[], texts, use);
}

/** One part of a tool message: a tool result checked at `context_egress` (with the tool's name), else as it is. */
async function toolPart(side: Side, part: Part, signal: unknown): Promise<Part> {
  if (part?.type !== 'tool-result') return part;
  const text = outputText(part.output);
  if (text === undefined) return part;
  const tool = typeof part.toolName === 'string' ? part.toolName : undefined;
  const key = keyOf(side, ['context_egress', String(part.toolCallId), tool ?? null, text]);
  const use = await checked(side, 'context_egress', key, text, signal, tool);
  if (use === text) return part;
  const denied = (part.output as { type?: unknown } | null)?.type === 'execution-denied';
  return { ...part, output: denied ? { ...(part.output as object), reason: use } : { type: 'text', value: use } };
}

/** The content of a tool message with each tool result checked, in order. */
async function toolContent(side: Side, content: unknown, signal: unknown): Promise<unknown> {
  if (!Array.isArray(content)) throw refusal(side.enforcement, 'context_egress');
  const parts: Part[] = [];
  for (const part of content as Part[]) parts.push(await toolPart(side, part, signal));
  return parts.some((p, i) => p !== content[i]) ? parts : content;
}

/**
 * The prompt with its user messages checked at `input` (at `context_egress` when marked as made from
 * tool output) and its tool results at `context_egress`.
 */
async function transformPrompt(side: Side, params: CallParams): Promise<CallParams> {
  const prompt = params.prompt;
  if (!Array.isArray(prompt)) throw refusal(side.enforcement, 'input');
  const signal = params.abortSignal;
  let changed = false;
  const next: unknown[] = [];
  for (const [i, message] of (prompt as Message[]).entries()) {
    const role = message?.role;
    if (role !== 'user' && role !== 'tool') {
      next.push(message);
      continue;
    }
    const content = message.content;
    const stage = isDerived(message) ? 'context_egress' : 'input';
    const use =
      role === 'user' ? await userContent(side, i, content, signal, stage) : await toolContent(side, content, signal);
    if (use !== content) {
      next.push({ ...message, content: use });
      changed = true;
    } else next.push(message);
  }
  return changed ? { ...params, prompt: next } : params;
}

/** A generated result with its text checked at `output` (all text parts as one text). */
async function checkGenerated(side: Side, result: Generated, signal: unknown): Promise<Generated> {
  const content = Array.isArray(result.content) ? (result.content as Part[]) : [];
  const texts = content.filter((p) => p?.type === 'text' && typeof p.text === 'string');
  if (texts.length === 0) return result;
  const text = joined(texts);
  const use = await checkOutput(side, text, signal);
  if (use === text) return result;
  const next = withText(content, texts, use);
  // The provider's raw response body holds the original text (the SDK shows it in step.response.body).
  const response = result.response;
  if (typeof response === 'object' && response !== null && 'body' in response) {
    const { body: _original, ...kept } = response as Record<string, unknown>;
    return { ...result, content: next, response: kept };
  }
  return { ...result, content: next };
}

/**
 * The model's stream held whole: its text deltas are checked at `output` as one text and the parts are
 * released only after the check passed (on a WARN, the first delta carries the whole replacement). On
 * BLOCK, ESCALATE or any error the stream ends with that error and releases nothing held.
 */
function heldStream(source: ReadableStream<StreamPart>, check: (text: string) => Promise<string>) {
  const reader = source.getReader();
  return new ReadableStream<StreamPart>({
    async start(controller) {
      try {
        for (const c of await releasedParts(await readAll(reader), check)) controller.enqueue(c);
        controller.close();
      } catch (err) {
        // nothing held is released: the stream ends with the enforcement error
        controller.error(err);
      }
    },
    cancel(reason) {
      // the consumer went away: stop reading the model's stream
      return reader.cancel(reason).catch(() => undefined);
    },
  });
}

/** Every part of a stream, read to its end. */
async function readAll(reader: ReadableStreamDefaultReader<StreamPart>): Promise<StreamPart[]> {
  const chunks: StreamPart[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return chunks;
    chunks.push(value);
  }
}

/** The parts of a held stream to release once its text was checked (throws on BLOCK or ESCALATE). */
async function releasedParts(chunks: StreamPart[], check: (text: string) => Promise<string>): Promise<StreamPart[]> {
  const deltas = chunks.filter((c) => c?.type === 'text-delta' && typeof c.delta === 'string');
  if (deltas.length === 0) return chunks;
  const text = deltas.map((c) => c.delta as string).join('');
  const use = await check(text);
  if (use === text) return chunks;
  const first = deltas[0];
  // WARN: the provider's raw chunks (includeRawChunks) carry the original text; they are dropped
  return chunks.flatMap((c) =>
    c === first ? [{ ...c, delta: use }] : c.type !== 'text-delta' && c.type !== 'raw' ? [c] : [],
  );
}
