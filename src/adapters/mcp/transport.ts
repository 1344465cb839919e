/**
 * The transport route of `guardMcpServer` (docs/adapters.md): for a server that had tools before it was
 * guarded, each JSON-RPC `tools/call` to such a tool is decided as it arrives on the server's transport
 * (`Transport.onmessage` and `Transport.send`, the SDK's public transport interface), before the server
 * sees it; `tools/list` answers are filtered on the way out. Internal to `agent-pep/mcp`.
 * @internal
 */

import { PolicyEnforcementError } from '../../errors.js';
import type { CallOptions } from '../../options/pep.js';
import type { Pep } from '../../pep.js';
import { normalizeToolName } from '../../permit/normalize.js';
import type { PermitVerifier } from '../../permit/verifier.js';
import { asToolResult, failedClosed, isObject, PERMIT_META_KEY, refusal, sessionOf } from './common.js';

type Message = Record<string, unknown>;
type OnMessage = (message: unknown, extra?: unknown) => void;
type Send = (message: unknown, options?: unknown) => Promise<void>;

/** The public members of an MCP `Transport` this route uses. */
export interface TransportLike {
  onmessage?: OnMessage | undefined;
  send: Send;
  sessionId?: string | undefined;
}

/** What the transport route needs from the guard. */
export interface TransportDeps {
  pep: Pep;
  verifier: PermitVerifier | undefined;
  /** Whether calls to `name` are decided by the tool's wrapped callback (registered after guarding). */
  wrapped(name: string): boolean;
  /** The tools/list filter (`pep.visibleTools`), or undefined with `hideBlocked: false`. */
  filterList: ((result: unknown, session: string | undefined) => Promise<unknown>) | undefined;
}

/** A forwarded request waiting for the server's answer. */
interface Pending {
  settle(response: Message | undefined): void;
}

/** Thrown inside the guarded execute when the server answered with a JSON-RPC error. */
class ErrorAnswer extends Error {
  constructor(readonly response: Message) {
    super('the server answered an error');
  }
}

const guardedTransports = new WeakSet<object>();

/**
 * Puts the guard between `transport` and the server: `onmessage` becomes an accessor whose value is
 * always the guarded form of what the server (or anyone) sets, and `send` sees each answer first.
 * @throws TypeError when the transport's `onmessage` or `send` cannot be redefined
 */
export function guardTransport(transport: TransportLike, deps: TransportDeps, scope: string): void {
  if (guardedTransports.has(transport)) return;
  const forwarded = new WeakSet<object>();
  const pending = new Map<unknown, Pending>();
  const lists = new Set<unknown>();
  const rawSend = transport.send.bind(transport) as Send;
  const answer = (id: unknown, result: unknown) => rawSend({ jsonrpc: '2.0', id, result });

  let inner: OnMessage | undefined = transport.onmessage;
  const guarded: OnMessage = (message, extra) => {
    const handler = inner;
    if (handler === undefined) return;
    if (!isObject(message) || forwarded.has(message) || !('id' in message)) {
      if (isObject(message) && message.method === 'notifications/cancelled') cancel(message);
      handler(message, extra);
      return;
    }
    if (message.method === 'tools/list' && deps.filterList !== undefined) lists.add(message.id);
    if (message.method !== 'tools/call') return handler(message, extra);
    const params = isObject(message.params) ? message.params : {};
    void decide(message, params, (m) => {
      forwarded.add(m);
      handler(m, extra);
    });
  };

  function cancel(message: Message): void {
    const id = isObject(message.params) ? message.params.requestId : undefined;
    pending.get(id)?.settle(undefined);
  }

  /** Forwards `message` with `args` and waits for the server's answer to it. */
  function forward(message: Message, params: Message, args: unknown, deliver: (m: Message) => void) {
    return new Promise<unknown>((resolve, reject) => {
      pending.set(message.id, {
        settle: (response) => {
          pending.delete(message.id);
          if (response === undefined) reject(new ErrorAnswer({}));
          else if ('error' in response) reject(new ErrorAnswer(response));
          else resolve(response.result);
        },
      });
      deliver({ ...message, params: { ...params, arguments: args } });
    });
  }

  /** The names of the server's tools, from a `tools/list` of the guard's own (never answered to the client). */
  function listNames(deliver: (m: Message) => void): Promise<string[]> {
    const id = `agent-pep/${globalThis.crypto.randomUUID()}`;
    return new Promise<string[]>((resolve, reject) => {
      pending.set(id, {
        settle: (response) => {
          pending.delete(id);
          const tools = isObject(response) && isObject(response.result) ? response.result.tools : undefined;
          if (!Array.isArray(tools)) return reject(new Error('no tool list'));
          resolve(tools.map((t) => (isObject(t) && typeof t.name === 'string' ? t.name : '')));
        },
      });
      deliver({ jsonrpc: '2.0', id, method: 'tools/list', params: {} });
    });
  }

  /** Whether another tool of the server has a name that normalizes like `name`: a permit cannot tell them apart. */
  async function hasLookalike(name: string, deliver: (m: Message) => void): Promise<boolean> {
    const norm = normalized(name);
    if (norm === undefined) return false;
    return (await listNames(deliver)).some((other) => other !== name && normalized(other) === norm);
  }

  async function decide(message: Message, params: Message, deliver: (m: Message) => void): Promise<void> {
    const name = typeof params.name === 'string' ? params.name : 'unknown';
    const args = params.arguments ?? {};
    if (pending.has(message.id)) {
      return answer(message.id, failedClosed(name, 'invalid_request', 'a request with this id is in flight'));
    }
    const run = (a: unknown) => forward(message, params, a, deliver);
    try {
      if (typeof params.name !== 'string')
        return answer(message.id, failedClosed(name, 'invalid_request', 'no tool name'));
      if (await hasLookalike(name, deliver)) {
        return answer(message.id, failedClosed(name, 'invalid_request', 'another tool has the same normalized name'));
      }
      // A tool registered after guarding: its wrapped callback decides (with the schema in view).
      if (deps.wrapped(name)) return deliver(message);
      if (deps.verifier !== undefined) {
        const refused = await verify(deps.verifier, name, args, params._meta);
        return await answer(message.id, refused ?? (await run(args)));
      }
      if (!isObject(args))
        return answer(message.id, failedClosed(name, 'invalid_request', 'arguments are not an object'));
      const callOpts: CallOptions = {};
      const session = sessionOf(transport.sessionId);
      if (session !== undefined) callOpts.session = session;
      const out = await deps.pep.guardTool(name, run)(args as Record<string, unknown>, callOpts);
      return await answer(message.id, asToolResult(out));
    } catch (err) {
      if (err instanceof ErrorAnswer) {
        if ('error' in err.response) await rawSend(err.response).catch(() => undefined);
        return;
      }
      const result =
        err instanceof PolicyEnforcementError
          ? refusal(err.toolMessage)
          : failedClosed(name, 'invalid_request', 'the adapter failed');
      await answer(message.id, result).catch(() => undefined);
    }
  }

  async function send(message: unknown, options?: unknown): Promise<void> {
    if (isObject(message) && !('method' in message) && 'id' in message) {
      const waiting = pending.get(message.id);
      if (waiting !== undefined) return waiting.settle(message);
      if (lists.delete(message.id) && deps.filterList !== undefined && 'result' in message) {
        let result: unknown;
        try {
          result = await deps.filterList(message.result, sessionOf(transport.sessionId));
        } catch {
          result = { tools: [] };
        }
        return rawSend({ ...message, result }, options);
      }
    }
    return rawSend(message, options);
  }

  try {
    Object.defineProperty(transport, 'onmessage', {
      get: () => (inner === undefined ? undefined : guarded),
      set: (value: OnMessage | undefined) => {
        inner = value;
      },
      enumerable: true,
      configurable: false,
    });
    Object.defineProperty(transport, 'send', { value: send, writable: false, enumerable: true, configurable: false });
  } catch (cause) {
    throw new TypeError(`${scope}: the server's transport cannot be guarded (onmessage or send is fixed)`, { cause });
  }
  guardedTransports.add(transport);
}

/** The normalized form of a tool name, or undefined for one that normalizes to nothing. */
function normalized(name: string): string | undefined {
  try {
    return normalizeToolName(name);
  } catch {
    return undefined;
  }
}

/** With a verifier: the refusal of a call whose permit does not verify, else undefined. */
async function verify(verifier: PermitVerifier, name: string, args: unknown, meta: unknown): Promise<unknown> {
  const permit = isObject(meta) ? meta[PERMIT_META_KEY] : undefined;
  if (typeof permit !== 'string' || permit === '')
    return failedClosed(name, 'permit_invalid', 'no permit in params._meta');
  if (!isObject(args)) return failedClosed(name, 'permit_invalid', 'arguments are not an object');
  try {
    await verifier.verify(permit, { tool: name, args });
    return undefined;
  } catch (err) {
    const code = isObject(err) && typeof err.code === 'string' ? err.code : 'error';
    return failedClosed(name, 'permit_invalid', `permit failed verification (${code})`);
  }
}
