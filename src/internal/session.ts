/**
 * THE rule that decides which session a call is decided in, for every entry: the stage methods and
 * guard helpers (core/, enforce/), `visibleTools`, every adapter, the MCP guards and the command hooks.
 * An entry differs only in what it passes in (an MCP server guard's `call` is the request's `_meta`),
 * never in the order. Not public.
 * @internal
 */

/** Where a call's session may come from, highest precedence first (CONTRACT.md sections 2, 8, 12 and 16). */
export interface SessionSources {
  /**
   * The per-call option `{ session }` of this one call (a stage method's, a guard helper's, `visibleTools`'),
   * or what stands for it where the call arrives from outside: an MCP server guard's
   * `params._meta['agent-pep/session']`, or its `session(request)` function's answer.
   */
  call?: unknown;
  /**
   * The host's conversation or thread id (LangGraph `thread_id`, Mastra `threadId`, a Cloudflare agent's
   * name, the Agent SDK's and the command hooks' `session_id`, an OpenAI Agents run's `groupId`): a
   * string, or a finite number as its decimal text; an empty or blank one is none.
   */
  thread?: unknown;
  /** The adapter's own `{ session }` option (checked when the adapter was made). */
  adapter?: string | undefined;
  /** The client's session: the id given to `withSession(id)`, else `createPep({ session })`. */
  client?: string | undefined;
}

/**
 * The session a call is decided in: the first of `call`, `thread`, `adapter`, `client` that names one.
 *
 * - Precedence: the per-call option, then the host's thread id, then the adapter's `{ session }`, then
 *   the client's own (`withSession(id)`, else `createPep({ session })`). A client bound with
 *   `withSession` is the client's session, so a host's thread id still wins over it ("the framework's
 *   conversation/thread id where it has one, else the client's", CONTRACT.md section 8).
 * - A source names a session when it is not `undefined` or `null`; `thread` also needs a non-blank
 *   string or a finite number (its decimal text), since a host without a thread has none.
 * - It picks, it does not repair: a named `call` is returned as given, even when malformed, so the entry
 *   refuses it with `isSessionId` (internal/guards.ts: a non-empty, well-formed string, not only white
 *   space) instead of deciding in another session: a stage method's synthesized BLOCK `invalid_request`,
 *   an MCP server guard's refused `tools/call`. A malformed thread id (a lone surrogate) goes on the same
 *   way, as the call's session, and is refused there.
 *
 * @param from - the sources this entry has; a missing one is skipped
 * @returns the session to decide in, or `undefined` when no source names one
 * @example
 * ```ts
 * sessionOf({ call: undefined, thread: 42, client: 'sess_1' }); // '42'
 * sessionOf({ thread: '  ', adapter: 'a', client: 'sess_1' });   // 'a'
 * ```
 */
export function sessionOf(from: SessionSources): string | undefined {
  if (from.call !== undefined && from.call !== null) return from.call as string;
  const thread = threadId(from.thread);
  if (thread !== undefined) return thread;
  return from.adapter ?? from.client;
}

/** A host's thread id as a session: a non-blank string, or a finite number as its decimal text; else none. */
function threadId(id: unknown): string | undefined {
  if (typeof id === 'string') return id.trim() === '' ? undefined : id;
  if (typeof id === 'number' && Number.isFinite(id)) return String(id);
  return undefined;
}
