/**
 * `pepOutputProcessor` for Mastra: the text an agent generated is checked at the `output` stage before
 * `generate` returns it (docs/adapters.md). Structural types only.
 * @internal
 */

import { sessionOf } from '../../internal/session.js';
import type { Pep } from '../../pep.js';
import { callOptions, enforcementOf, RULES, readOptions } from '../kit.js';

/** Options of {@link pepOutputProcessor}. */
export interface PepOutputProcessorOptions {
  /** The processor's id (Mastra requires ids to be unique within an agent). @defaultValue 'agent-pep-output' */
  id?: string;
  /** The session of a run outside a memory thread. @defaultValue the client's `session` */
  session?: string;
}

/** What Mastra passes `processOutputResult` (the fields this processor reads); `M` is `MastraDBMessage`. */
export interface PepProcessOutputArgs<M = unknown> {
  messages: M[];
  abortSignal?: AbortSignal | undefined;
}

/** A Mastra output processor (`{ id, processOutputResult }`), structurally. */
export interface PepOutputProcessor {
  readonly id: string;
  readonly name: string;
  processOutputResult<M>(args: PepProcessOutputArgs<M>): Promise<M[]>;
}

interface Message {
  role?: unknown;
  threadId?: unknown;
  content?: { parts?: { type?: unknown; text?: unknown }[]; content?: unknown };
}

type TextPart = { type: 'text'; text: string };

function textParts(messages: unknown[]): { parts: TextPart[]; session: string | undefined; owners: Message[] } {
  const parts: TextPart[] = [];
  const owners: Message[] = [];
  let session: string | undefined;
  for (const raw of messages) {
    const m = raw as Message;
    if (m?.role !== 'assistant' || !Array.isArray(m.content?.parts)) continue;
    session ??= sessionOf({ thread: m.threadId });
    for (const p of m.content.parts) {
      if (p?.type === 'text' && typeof p.text === 'string') {
        parts.push(p as TextPart);
        owners.push(m);
      }
    }
  }
  return { parts, session, owners };
}

/**
 * A Mastra output processor that checks the text the agent generated (every assistant text part of
 * the run, joined by line breaks) at the `output` stage before `generate` returns it.
 *
 * ALLOW keeps it; WARN replaces it with the PDP's `transformedContent`; BLOCK, ESCALATE or any failure
 * replace it with the refusal text (`ERROR: output was not checked: ...` or the denial), so the
 * caller's `text` never holds what was refused. The session is the memory thread (the messages'
 * `threadId`), else `opts.session`, else the client's.
 *
 * @param pep - the client that decides
 * @param opts - `{ id?, session? }` ({@link PepOutputProcessorOptions})
 * @returns an output processor for `new Agent({ outputProcessors: [...] })`
 * @throws TypeError when `pep` is not a client from `createPep`, or an option is unknown or bad
 *   (`err.option` names it)
 * @remarks With `agent.stream`, the text deltas reach the caller as the model makes them, before this
 * check (it runs on the finished result, which it changes for `getFullOutput()` and the memory): for
 * output that must be checked before anyone reads it, use `generate`.
 * @example
 * ```ts
 * const agent = new Agent({ id, name, instructions, model, outputProcessors: [pepOutputProcessor(pep)] });
 * ```
 */
export function pepOutputProcessor(pep: Pep, opts: PepOutputProcessorOptions = {}): PepOutputProcessor {
  const enforcement = enforcementOf(pep, 'pepOutputProcessor');
  const o = readOptions<PepOutputProcessorOptions>('pepOutputProcessor', opts, {
    id: RULES.nonEmptyString,
    session: RULES.session,
  });
  const id = o.id ?? 'agent-pep-output';
  return {
    id,
    name: id,
    async processOutputResult<M>(args: PepProcessOutputArgs<M>): Promise<M[]> {
      const { parts, session, owners } = textParts(args.messages);
      if (parts.length === 0) return args.messages;
      const text = parts.map((p) => p.text).join('\n');
      const r = await enforcement.decideText(
        'output',
        text,
        callOptions({ session: sessionOf({ thread: session, adapter: o.session }), signal: args.abortSignal }),
      );
      const use = r.kind === 'passed' ? r.text : r.toolMessage;
      if (use === text) return args.messages;
      parts.forEach((p, i) => {
        const owner = owners[i];
        if (owner?.content && owner.content.content === p.text) owner.content.content = i === 0 ? use : '';
        p.text = i === 0 ? use : '';
      });
      return args.messages;
    },
  };
}
