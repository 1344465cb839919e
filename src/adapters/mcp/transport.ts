/**
 * The transport route of `guardMcpServer` (docs/adapters.md): for a server that had tools before it was
 * guarded, each JSON-RPC `tools/call` to such a tool is decided as it arrives on the server's transport
 * (`Transport.onmessage` and `Transport.send`, the SDK's public transport interface), before the server
 * sees it; `tools/list` answers are filtered on the way out. Internal to `agent-pep/mcp`.
 * @internal
 */

import { PolicyEnforcementError } from '../../errors.js';
import { normalizeToolName } from '../../internal/tool-name.js';
import type { CallOptions } from '../../options/pep.js';
import type { Pep } from '../../pep.js';
import type { PermitVerifier } from '../../permit/verifier.js';
import { argsBySchema } from '../kit.js';
import { asToolResult, failedClosed, isObject, refusal, requestSession, type SessionOfRequest } from './common.js';
import { permitRefusal } from './server-call.js';

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
  /** The server's `session` option, else undefined (`params._meta['agent-pep/session']`). */
  session: SessionOfRequest | undefined;
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
  const guard = new TransportGuard(transport, deps);
  // A transport whose `onmessage` is an accessor of its class forwards the handler somewhere (the SDK's
  // Node `StreamableHTTPServerTransport` to an inner Web-standard transport, where requests arrive): the
  // guarded handler must reach it there too, or every request is dropped.
  const inherited = inheritedSetter(transport, 'onmessage');
  const forward = (): void => inherited?.call(transport, guard.onmessage());
  try {
    Object.defineProperty(transport, 'onmessage', {
      get: () => guard.onmessage(),
      set: (value: OnMessage | undefined) => {
        guard.inner = value;
        forward();
      },
      enumerable: true,
      configurable: false,
    });
    const send = (message: unknown, options?: unknown) => guard.send(message, options);
    Object.defineProperty(transport, 'send', { value: send, writable: false, enumerable: true, configurable: false });
  } catch (cause) {
    throw new TypeError(`${scope}: the server's transport cannot be guarded (onmessage or send is fixed)`, { cause });
  }
  forward();
  guardedTransports.add(transport);
}

/** The setter of `key` where the prototype chain of `target` defines it as an accessor, else undefined. */
function inheritedSetter(target: object, key: string): ((value: unknown) => void) | undefined {
  for (let proto = Object.getPrototypeOf(target); proto !== null; proto = Object.getPrototypeOf(proto)) {
    const d = Object.getOwnPropertyDescriptor(proto, key);
    if (d !== undefined) return typeof d.set === 'function' ? (d.set as (value: unknown) => void) : undefined;
  }
  return undefined;
}

/** One guarded transport: what arrives, what was forwarded, and what waits for the server's answer. */
class TransportGuard {
  /** The handler the server set (`Protocol.connect`), which the guarded one forwards to. */
  inner: OnMessage | undefined;
  private readonly forwarded = new WeakSet<object>();
  private readonly pending = new Map<unknown, Pending>();
  /** The tools/list requests whose answer is filtered, with the session each names. */
  private readonly lists = new Map<unknown, string | undefined>();
  /** The calls being decided, by request id: a `notifications/cancelled` aborts the decision. */
  private readonly deciding = new Map<unknown, AbortController>();
  private readonly rawSend: Send;
  private readonly guarded: OnMessage;

  constructor(
    transport: TransportLike,
    private readonly deps: TransportDeps,
  ) {
    this.inner = transport.onmessage;
    this.rawSend = transport.send.bind(transport) as Send;
    this.guarded = (message, extra) => this.receive(message, extra);
  }

  onmessage(): OnMessage | undefined {
    return this.inner === undefined ? undefined : this.guarded;
  }

  private answer(id: unknown, result: unknown): Promise<void> {
    return this.rawSend({ jsonrpc: '2.0', id, result });
  }

  /** Each message the transport receives: a tools/call is decided first, the rest go on as they came. */
  private receive(message: unknown, extra: unknown): void {
    const handler = this.inner;
    if (handler === undefined) return;
    if (!isObject(message) || this.forwarded.has(message) || !('id' in message)) {
      if (isObject(message) && message.method === 'notifications/cancelled') this.cancel(message);
      handler(message, extra);
      return;
    }
    if (message.method === 'tools/list' && this.deps.filterList !== undefined) {
      const listParams = isObject(message.params) ? message.params : {};
      this.lists.set(message.id, requestSession(this.deps.session, 'tools/list', listParams, extra));
    }
    if (message.method !== 'tools/call') {
      handler(message, extra);
      return;
    }
    const params = isObject(message.params) ? message.params : {};
    void this.decide(message, params, extra, (m) => {
      this.forwarded.add(m);
      handler(m, extra);
    });
  }

  private cancel(message: Message): void {
    const id = isObject(message.params) ? message.params.requestId : undefined;
    this.deciding.get(id)?.abort();
    this.pending.get(id)?.settle(undefined);
  }

  /** Delivers `message` and waits for the server's answer to it (undefined when cancelled). */
  private exchange(message: Message, deliver: (m: Message) => void): Promise<Message | undefined> {
    return new Promise<Message | undefined>((resolve) => {
      this.pending.set(message.id, {
        settle: (response) => {
          this.pending.delete(message.id);
          resolve(response);
        },
      });
      deliver(message);
    });
  }

  /** Forwards the call with `args`; the server's result, or an ErrorAnswer. */
  private async forward(message: Message, params: Message, args: unknown, deliver: (m: Message) => void) {
    const response = await this.exchange({ ...message, params: { ...params, arguments: args } }, deliver);
    if (response === undefined) throw new ErrorAnswer({});
    if ('error' in response) throw new ErrorAnswer(response);
    return response.result;
  }

  /**
   * The server's own listing of `name` (a tools/list of the guard's, never answered to the client): its
   * `inputSchema`, and whether another tool has a name that normalizes alike (a permit cannot tell them apart).
   */
  private async listing(
    name: string,
    deliver: (m: Message) => void,
  ): Promise<{ lookalike: boolean; inputSchema: unknown }> {
    const id = `agent-pep/${globalThis.crypto.randomUUID()}`;
    const response = await this.exchange({ jsonrpc: '2.0', id, method: 'tools/list', params: {} }, deliver);
    const tools = isObject(response) && isObject(response.result) ? response.result.tools : undefined;
    if (!Array.isArray(tools)) throw new Error('no tool list');
    const norm = normalized(name);
    const lookalike =
      norm !== undefined &&
      tools.some((t) => isObject(t) && t.name !== name && typeof t.name === 'string' && normalized(t.name) === norm);
    const own = tools.find((t) => isObject(t) && t.name === name) as Message | undefined;
    return { lookalike, inputSchema: own?.inputSchema };
  }

  /** One tools/call: refused (answered here), or forwarded as decided and its answer sent. */
  private async decide(
    message: Message,
    params: Message,
    extra: unknown,
    deliver: (m: Message) => void,
  ): Promise<void> {
    const name = typeof params.name === 'string' ? params.name : 'unknown';
    const args = params.arguments ?? {};
    const refuse = (why: string) => this.answer(message.id, failedClosed(this.deps.pep, name, 'invalid_request', why));
    const run = (a: unknown) => {
      if (controller.signal.aborted) throw new ErrorAnswer({});
      return this.forward(message, params, a, deliver);
    };
    const controller = new AbortController();
    try {
      if (this.deciding.has(message.id) || this.pending.has(message.id)) {
        return await refuse('a request with this id is in flight');
      }
      this.deciding.set(message.id, controller);
      if (typeof params.name !== 'string') return await refuse('no tool name');
      const listed = await this.listing(name, deliver);
      if (listed.lookalike) return await refuse('another tool has the same normalized name');
      // A tool registered after guarding: its wrapped callback decides (with the schema in view).
      if (this.deps.wrapped(name)) return deliver(message);
      if (this.deps.verifier !== undefined) {
        const refused = await permitRefusal(this.deps.pep, this.deps.verifier, name, args, params._meta);
        return await this.answer(message.id, refused ?? (await run(args)));
      }
      if (!isObject(args)) return await refuse('arguments are not an object');
      // The args the tool will run: its listed schema's defaults filled in, a value its parser would
      // coerce refused (docs/adapters.md "Schemas"), so that the PDP decides on what runs.
      const planned = argsBySchema(listed.inputSchema, args as Record<string, unknown>);
      if (planned.kind === 'refused') return await refuse(planned.why);
      const session = requestSession(this.deps.session, 'tools/call', params, extra);
      if (session === undefined) return await refuse('the request names no policy session');
      const callOpts: CallOptions = { session, signal: controller.signal };
      const out = await this.deps.pep.guardTool(name, run)(planned.args, callOpts);
      return await this.answer(message.id, asToolResult(out));
    } catch (err) {
      if (err instanceof ErrorAnswer) {
        if ('error' in err.response) await this.rawSend(err.response).catch(() => undefined);
        return;
      }
      const result =
        err instanceof PolicyEnforcementError
          ? refusal(err.toolMessage)
          : failedClosed(this.deps.pep, name, 'invalid_request', 'the adapter failed');
      if (!controller.signal.aborted) await this.answer(message.id, result).catch(() => undefined);
    } finally {
      if (this.deciding.get(message.id) === controller) this.deciding.delete(message.id);
    }
  }

  /** Each message the server sends: an answer the guard waits for is kept, a tools/list answer filtered. */
  async send(message: unknown, options?: unknown): Promise<void> {
    if (isObject(message) && !('method' in message) && 'id' in message) {
      const waiting = this.pending.get(message.id);
      if (waiting !== undefined) return waiting.settle(message);
      const listed = this.lists.has(message.id);
      const session = this.lists.get(message.id);
      this.lists.delete(message.id);
      if (listed && this.deps.filterList !== undefined && 'result' in message) {
        let result: unknown;
        try {
          result = await this.deps.filterList(message.result, session);
        } catch {
          result = { tools: [] };
        }
        return this.rawSend({ ...message, result }, options);
      }
    }
    return this.rawSend(message, options);
  }
}

/** The normalized form of a tool name, or undefined for one that normalizes to nothing. */
function normalized(name: string): string | undefined {
  try {
    return normalizeToolName(name);
  } catch {
    return undefined;
  }
}
