/**
 * `pepMiddleware` for the Vercel AI SDK (`ai` 6.x and 7.x): a language-model middleware that checks new
 * user text (`input`) and new tool results (`context_egress`) once each before the model is called, and
 * the generated text (`output`) before it is returned, a stream included (docs/adapters.md).
 * @internal
 */
import { createHash, randomUUID } from 'node:crypto';
import type { LanguageModelMiddleware } from 'ai';
import { synthesizeBlock, type TextStage } from '../../decision.js';
import { PolicyBlockedError } from '../../errors.js';
import { isSessionId } from '../../internal/guards.js';
import { optionError, refuseUnknownKeys } from '../../options/kit.js';
import type { EgressCallOptions } from '../../options/pep.js';
import type { Pep } from '../../pep.js';

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
}

const OPTIONS = new Set(['session', 'maxRemembered']);
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
function refused(stage: TextStage): PolicyBlockedError {
  const message = 'the prompt could not be read to be checked';
  return new PolicyBlockedError(synthesizeBlock(stage, randomUUID(), 'invalid_request', message, 0));
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
  if (typeof pep?.guardText !== 'function') throw new TypeError('pepMiddleware: pep must be a client from createPep');
  if (typeof opts !== 'object' || opts === null) throw new TypeError('pepMiddleware: options must be an object');
  refuseUnknownKeys('pepMiddleware', opts, OPTIONS);
  if (opts.session !== undefined && !isSessionId(opts.session)) {
    optionError('pepMiddleware', 'session', 'expected a non-empty string');
  }
  const max = opts.maxRemembered ?? DEFAULT_REMEMBERED;
  if (!Number.isSafeInteger(max) || max < 0) {
    optionError('pepMiddleware', 'maxRemembered', 'expected a non-negative integer');
  }
  const session = opts.session;
  /** key of a checked text -> the text to use in its place. */
  const remembered = new Map<string, string>();

  function remember(key: string, text: string): void {
    if (max === 0) return;
    if (remembered.size >= max) {
      const oldest = remembered.keys().next();
      if (!oldest.done) remembered.delete(oldest.value);
    }
    remembered.set(key, text);
  }

  function keyOf(parts: readonly unknown[]): string {
    return createHash('sha256')
      .update(JSON.stringify([session ?? null, ...parts]))
      .digest('base64url');
  }

  function callOpts(signal: unknown, tool?: string): EgressCallOptions {
    const o: EgressCallOptions = {};
    if (session !== undefined) o.session = session;
    if (signal instanceof AbortSignal) o.signal = signal;
    if (tool !== undefined) o.tool = tool;
    return o;
  }

  /** The text to use: remembered, or checked now (throws on BLOCK or ESCALATE). */
  async function checked(stage: TextStage, key: string, text: string, signal: unknown, tool?: string) {
    const known = remembered.get(key);
    if (known !== undefined) return known;
    const use = await pep.guardText(stage, text, callOpts(signal, tool));
    remember(key, use);
    return use;
  }

  /** The user text of one message, checked as one text: the text parts joined, as the model reads them. */
  async function userContent(i: number, content: unknown, signal: unknown): Promise<unknown> {
    if (typeof content === 'string') {
      // a prompt built by hand (the SDK always makes a list of parts): checked all the same
      return checked('input', keyOf(['input', i, content]), content, signal);
    }
    if (!Array.isArray(content)) throw refused('input');
    const texts = (content as Part[]).filter((p) => p?.type === 'text');
    if (texts.some((p) => typeof p.text !== 'string')) throw refused('input');
    if (texts.length === 0) return content;
    const text = texts.map((p) => p.text as string).join('');
    const use = await checked('input', keyOf(['input', i, text]), text, signal);
    if (use === text) return content;
    // WARN: the whole text goes into the first text part; the other text parts are dropped
    const first = texts[0];
    return (content as Part[]).flatMap((p) => (p === first ? [{ ...p, text: use }] : texts.includes(p) ? [] : [p]));
  }

  async function toolContent(content: unknown, signal: unknown): Promise<unknown> {
    if (!Array.isArray(content)) throw refused('context_egress');
    let partChanged = false;
    const parts: unknown[] = [];
    for (const part of content as Part[]) {
      if (part?.type === 'tool-result') {
        const text = outputText(part.output);
        if (text !== undefined) {
          const tool = typeof part.toolName === 'string' ? part.toolName : undefined;
          const key = keyOf(['context_egress', String(part.toolCallId), tool ?? null, text]);
          const use = await checked('context_egress', key, text, signal, tool);
          if (use !== text) {
            const denied = (part.output as { type?: unknown } | null)?.type === 'execution-denied';
            parts.push({
              ...part,
              output: denied ? { ...(part.output as object), reason: use } : { type: 'text', value: use },
            });
            partChanged = true;
            continue;
          }
        }
      }
      parts.push(part);
    }
    return partChanged ? parts : content;
  }

  async function transformPrompt(params: CallParams): Promise<CallParams> {
    const prompt = params.prompt;
    if (!Array.isArray(prompt)) throw refused('input');
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
      const use = role === 'user' ? await userContent(i, content, signal) : await toolContent(content, signal);
      if (use !== content) {
        next.push({ ...message, content: use });
        changed = true;
      } else next.push(message);
    }
    return changed ? { ...params, prompt: next } : params;
  }

  /** The generated text to use for `text` (throws on BLOCK or ESCALATE). */
  function checkOutput(text: string, signal: unknown): Promise<string> {
    return pep.guardText('output', text, callOpts(signal));
  }

  const middleware = {
    specificationVersion: 'v3',
    async transformParams({ params }: { params: CallParams }) {
      return transformPrompt(params);
    },
    async wrapGenerate({
      doGenerate,
      params,
    }: {
      doGenerate: () => Promise<{ content?: unknown; response?: unknown }>;
      params: CallParams;
    }) {
      const result = await doGenerate();
      const content = Array.isArray(result.content) ? (result.content as Part[]) : [];
      const texts = content.filter((p) => p?.type === 'text' && typeof p.text === 'string');
      if (texts.length === 0) return result;
      const text = texts.map((p) => p.text as string).join('');
      const use = await checkOutput(text, params.abortSignal);
      if (use === text) return result;
      // WARN: the whole text goes into the first text part; the other text parts are dropped
      const first = texts[0];
      const next = content.flatMap((p) => (p === first ? [{ ...p, text: use }] : texts.includes(p) ? [] : [p]));
      // The provider's raw response body holds the original text (the SDK shows it in step.response.body).
      const response = result.response;
      if (typeof response === 'object' && response !== null && 'body' in response) {
        const { body: _original, ...kept } = response as Record<string, unknown>;
        return { ...result, content: next, response: kept };
      }
      return { ...result, content: next };
    },
    async wrapStream({
      doStream,
      params,
    }: {
      doStream: () => Promise<{ stream: ReadableStream<StreamPart> }>;
      params: CallParams;
    }) {
      const result = await doStream();
      const source = result.stream;
      const reader = source.getReader();
      const held = new ReadableStream<StreamPart>({
        async start(controller) {
          const chunks: StreamPart[] = [];
          try {
            for (;;) {
              const { done, value } = await reader.read();
              if (done) break;
              chunks.push(value);
            }
            const deltas = chunks.filter((c) => c?.type === 'text-delta' && typeof c.delta === 'string');
            if (deltas.length === 0) {
              for (const c of chunks) controller.enqueue(c);
              controller.close();
              return;
            }
            const text = deltas.map((c) => c.delta as string).join('');
            const use = await checkOutput(text, params.abortSignal);
            const first = deltas[0];
            for (const c of chunks) {
              if (use === text) controller.enqueue(c);
              else if (c === first) controller.enqueue({ ...c, delta: use });
              // WARN: the provider's raw chunks (includeRawChunks) carry the original text; they are dropped
              else if (c.type !== 'text-delta' && c.type !== 'raw') controller.enqueue(c);
            }
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
      return { ...result, stream: held };
    },
  };
  return middleware as unknown as LanguageModelMiddleware;
}
