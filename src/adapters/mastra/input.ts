/**
 * `pepInputProcessor` for Mastra: the user's text is checked at the `input` stage before the model
 * gets it (docs/adapters.md). Structural types only.
 * @internal
 */
import { createHash } from 'node:crypto';
import { sessionOf } from '../../internal/session.js';
import type { Pep } from '../../pep.js';
import { callOptions, enforcementOf, RULES, readOptions, TextMemory } from '../kit.js';

/** Options of {@link pepInputProcessor}. */
export interface PepInputProcessorOptions {
  /** The processor's id (Mastra requires ids to be unique within an agent). @defaultValue 'agent-pep-input' */
  id?: string;
  /** The session of messages outside a memory thread. @defaultValue the client's `session` */
  session?: string;
}

interface TextPart {
  type: string;
  text?: unknown;
}

/** A Mastra message (`MastraDBMessage`), as far as this processor reads it. */
interface Message {
  role?: unknown;
  threadId?: unknown;
  content?: { parts?: TextPart[]; content?: unknown };
}

/** What Mastra passes `processInput` (the fields this processor reads); `M` is Mastra's `MastraDBMessage`. */
export interface PepProcessInputArgs<M = unknown> {
  messages: M[];
  abort: (reason?: string) => never;
  abortSignal?: AbortSignal | undefined;
}

/** A Mastra input processor (`{ id, processInput }`), structurally. */
export interface PepInputProcessor {
  readonly id: string;
  readonly name: string;
  processInput<M>(args: PepProcessInputArgs<M>): Promise<M[]>;
}

/** Most texts remembered as passed (a text seen again in a later run is not sent again). */
const MAX_SEEN = 10_000;

const key = (session: string, text: string) =>
  createHash('sha256').update(session).update('\0').update(text).digest('base64url');

function isTextPart(p: unknown): p is TextPart & { text: string } {
  return (
    typeof p === 'object' && p !== null && (p as TextPart).type === 'text' && typeof (p as TextPart).text === 'string'
  );
}

/**
 * A Mastra input processor that checks each user text at the `input` stage before the model gets it.
 *
 * Each text part of each user message is decided in the session of its memory thread (the message's
 * `threadId`), else `opts.session`, else the client's; a text that passed once in a session is not sent
 * again (up to 10,000 remembered). ALLOW lets it through; WARN replaces it with the PDP's
 * `transformedContent`; BLOCK, ESCALATE or any failure aborts the run with Mastra's tripwire (the
 * model is not called; the run's `tripwire` carries the refusal text).
 *
 * @param pep - the client that decides
 * @param opts - `{ id?, session? }` ({@link PepInputProcessorOptions})
 * @returns an input processor for `new Agent({ inputProcessors: [...] })`
 * @throws TypeError when `pep` is not a client from `createPep`, or an option is unknown or bad
 *   (`err.option` names it)
 * @remarks Fails closed: a PDP that is down, slow or unclear aborts the run. Tool results are not input:
 * they are checked at `context_egress` by {@link guardTools}; text the host makes from them (memory
 * recall, working memory, summaries) reaches the model as it was stored after that check.
 * @example
 * ```ts
 * const agent = new Agent({ id, name, instructions, model, tools, inputProcessors: [pepInputProcessor(pep)] });
 * ```
 */
export function pepInputProcessor(pep: Pep, opts: PepInputProcessorOptions = {}): PepInputProcessor {
  const enforcement = enforcementOf(pep, 'pepInputProcessor');
  const o = readOptions<PepInputProcessorOptions>('pepInputProcessor', opts, {
    id: RULES.nonEmptyString,
    session: RULES.session,
  });
  const seen = new TextMemory<true>(MAX_SEEN);
  const id = o.id ?? 'agent-pep-input';
  async function checkPart(
    part: TextPart & { text: string },
    session: string | undefined,
    args: PepProcessInputArgs<unknown>,
  ) {
    const k = key(session ?? '', part.text);
    if (seen.get(k)) return;
    const r = await enforcement.decideText('input', part.text, callOptions({ session, signal: args.abortSignal }));
    if (r.kind === 'refused') args.abort(r.toolMessage);
    else {
      part.text = r.text;
      seen.set(key(session ?? '', r.text), true);
    }
  }
  return {
    id,
    name: id,
    async processInput<M>(args: PepProcessInputArgs<M>): Promise<M[]> {
      for (const raw of args.messages) {
        const m = raw as Message;
        if (m?.role !== 'user') continue;
        const session = sessionOf({ thread: m.threadId, adapter: o.session });
        const parts = Array.isArray(m.content?.parts) ? m.content.parts : [];
        for (const part of parts) {
          if (!isTextPart(part)) continue;
          const before = part.text;
          await checkPart(part, session, args);
          if (m.content && m.content.content === before) m.content.content = part.text;
        }
      }
      return args.messages;
    },
  };
}
