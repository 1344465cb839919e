/**
 * `agent-pep/langchain`: a LangChain.js 1.x `createAgent` middleware that sends every step of the
 * agent to the PDP through a {@link Pep} and enforces the verdict (docs/adapters.md).
 * @packageDocumentation
 * @module adapters/langchain
 */
import { createMiddleware } from 'langchain';
import type { Pep } from '../pep.js';
import { enforcementOf, RULES, readOptions, requirePermits } from './kit.js';
import { SeenMessages, threadSession } from './langchain/seen.js';
import { makeTextHooks } from './langchain/text.js';
import { makeWrapToolCall } from './langchain/tools.js';
import { checksModelRequests } from './model-request.js';
import { keepVisible } from './visible-tools.js';

export type { LangChainReviewDecision, PepInterruptValue } from './langchain/review.js';
export type { PepStopInfo } from './langchain/text.js';
export type { PepToolCall } from './langchain/tools.js';

/** Options of {@link pepMiddleware}. */
export interface PepMiddlewareOptions {
  /** The middleware's name (LangChain requires names to be unique within one agent). @defaultValue 'agent-pep' */
  name?: string;
  /**
   * Offer the model only the tools `pep.visibleTools` shows for the thread (docs/visibility.md): each
   * model call's tools are filtered in one batch. A hidden tool called anyway is still decided per call.
   * @defaultValue false
   */
  hideBlocked?: boolean;
  /**
   * Check each model call's settings before it is sent (docs/interceptors.md, "Model requests"): the
   * chat model's `model`, `temperature`, `topP` and `maxTokens` (as `maxOutputTokens`) and the system
   * message (as `system`). A replaced system message is sent; a changed number or model goes into a
   * copy of the chat model made from its constructor fields, and a chat model that cannot take it
   * stops the call, as a deny or a BLOCK does (an `AIMessage` with the denial text).
   * @defaultValue true when the client has `modelRequest` interceptors, else false
   */
  modelRequest?: boolean;
}

/**
 * Creates a LangChain `createAgent` middleware that puts every step of the agent before the PDP.
 *
 * - `wrapToolCall` (action): the tool runs only inside `pep.guardTool`, on an ALLOW or WARN whose
 *   permit verifies, with the PDP's `transformedArgs` on a WARN. A blocked call becomes a
 *   `ToolMessage` with `status: 'error'` whose content is the `toolMessage` text
 *   (`ERROR: Tool '<name>' denied by policy: <reason>`, `... was not run: the policy check failed (<code>)`),
 *   so the model sees it and can recover. ESCALATE interrupts the graph with a
 *   `humanInTheLoopMiddleware`-shaped value ({@link PepInterruptValue}); resume with
 *   `new Command({ resume: { decisions: [{ type: 'approve' }] } })` (or `'reject'`, with an optional
 *   `message`) on the same `thread_id`. An approval never bypasses the PDP: the adapter asks it again
 *   for the identical call and runs the tool only on an ALLOW whose permit verifies.
 * - `wrapModelCall` (input, context egress, output): new user messages and new tool results are checked
 *   once each (tool results with the tool's name), the model's message before it is returned. WARN
 *   replaces the text the model sees (or the message it returns); BLOCK or ESCALATE stops the model call,
 *   and the run ends with an `AIMessage` whose content is the `toolMessage` text and whose
 *   `response_metadata.agent_pep` is a {@link PepStopInfo}.
 * - `afterAgent` (delivery): the final message is checked; WARN replaces it, BLOCK replaces it with
 *   the denial text.
 *
 * The session of each decision is the run's `configurable.thread_id`, else the client's.
 *
 * Not `agent-pep/ai`'s `pepMiddleware`, a language-model middleware for the text stages only: this one
 * is an agent middleware for every stage (docs/adapters.md "Names two entries share").
 *
 * @param pep - the client to decide through; it must have `permits` configured (or `permits: false`)
 * @param opts - `{ name?, hideBlocked? }` (name default `'agent-pep'`)
 * @returns a middleware for `createAgent({ middleware: [...] })`
 * @throws TypeError when `pep` is not a client, `guardTool` cannot be used (no `permits` option), or an
 *   option is unknown or bad (`err.option` names it)
 * @remarks Fails closed: a PDP that is down, slow or unclear, a permit that fails, an unreadable resume
 * and any error of the adapter itself run no tool and stop the text step. A host approval is never
 * enough on its own. Interrupts need a checkpointer; without one, ESCALATE is a held `ToolMessage`.
 * Tokens streamed with `streamMode: 'messages'` come from the model below `wrapModelCall` and are not
 * held; `invoke` and the `values` and `updates` stream modes carry checked text only.
 * @example
 * ```ts
 * import { createAgent } from 'langchain';
 * import { MemorySaver } from '@langchain/langgraph';
 * import { pepMiddleware } from 'agent-pep/langchain';
 * const agent = createAgent({ model, tools: [refund], middleware: [pepMiddleware(pep)], checkpointer: new MemorySaver() });
 * const result = await agent.invoke({ messages: [{ role: 'user', content: 'Refund order 1842' }] },
 *   { configurable: { thread_id: 'thread-1' } });
 * ```
 */
export function pepMiddleware(pep: Pep, opts?: PepMiddlewareOptions) {
  const enforcement = enforcementOf(pep, 'pepMiddleware');
  const o = readOptions<PepMiddlewareOptions>('pepMiddleware', opts, {
    name: RULES.nonEmptyString,
    hideBlocked: RULES.boolean,
    modelRequest: RULES.boolean,
  });
  const name = o.name ?? 'agent-pep';
  // guardTool refuses a client without `permits` at creation: so does the middleware, now, not at the first call.
  requirePermits(pep, 'pepMiddleware');

  const seen = new SeenMessages();
  const modelRequest = checksModelRequests(enforcement, o.modelRequest);
  const side = { pep, enforcement, seen, session: threadSession, modelRequest };
  const text = makeTextHooks(side);
  const { afterAgent } = text;
  // hideBlocked: the model call below the text checks is offered only the visible tools (one batch a call).
  const wrapModelCall: typeof text.wrapModelCall =
    o.hideBlocked !== true
      ? text.wrapModelCall
      : (request, handler) =>
          text.wrapModelCall(request, async (req) =>
            handler(
              Array.isArray(req?.tools)
                ? {
                    ...req,
                    tools: await keepVisible(
                      pep,
                      req.tools,
                      threadSession(req.runtime?.configurable),
                      req.runtime?.signal,
                    ),
                  }
                : req,
            ),
          );
  return createMiddleware({
    name,
    wrapToolCall: makeWrapToolCall(side),
    wrapModelCall,
    afterAgent,
  });
}
