/**
 * `guardMcpClient(pep, transport)`: a `Transport` of its own, given to `client.connect(...)`, that stands
 * between an MCP `Client` (1.x or 2.x) and the transport the application made, on the one public seam both
 * SDK lines share (`start`, `send`, `close` and the callbacks a `Client` sets). It patches nothing: it
 * consumes the inner transport through that interface only, as a `Client` would. Internal to `agent-pep/mcp`.
 * @internal
 */
import type { Pep } from '../../pep.js';
import { enforcementOf } from '../kit.js';
import { readParams } from './client-call.js';
import type { ClientOptions } from './client-options.js';
import { assertGuardable, isObject, JSONRPC_ERROR, McpProtocolError } from './common.js';
import { PROTOCOL_VERSION_META } from './escalation.js';
import type { McpPinSet } from './pins.js';
import { makeToolSurface, type ToolSurface } from './surface.js';
import {
  type CallContext,
  type Deferred,
  decideCall,
  deferred,
  NotSent,
  type Outcome,
  type PendingCall,
  pendingCall,
  type Received,
} from './transport-call.js';

/**
 * What `guardMcpClient` takes on the transport route: a `Transport` of `@modelcontextprotocol/sdk` 1.x or
 * `@modelcontextprotocol/client` 2.x (stdio, Streamable HTTP, SSE, in-memory, your own), structurally.
 */
export interface McpTransportLike {
  start(): Promise<void>;
  send(message: never, options?: never): Promise<void>;
  close(): Promise<void>;
}

/**
 * The `Transport` `guardMcpClient(pep, transport)` returns: pass it to `client.connect(...)`. The SDK's
 * `Transport` interface of both lines (1.x; 2.x with `hasPerRequestStream` and
 * `setSupportedProtocolVersions`), and `pepPins()`.
 */
export interface GuardedMcpTransport {
  start(): Promise<void>;
  /** Sends a JSON-RPC message; a `tools/call` leaves only once decided (the promise resolves then, or when it never will). */
  send(message: unknown, options?: unknown): Promise<void>;
  /** Closes the inner transport; a decision still pending sends nothing. */
  close(): Promise<void>;
  /** Set by the `Client`. */
  onmessage?: ((message: unknown, extra?: unknown) => void) | undefined;
  /** Set by the `Client`. */
  onclose?: (() => void) | undefined;
  /** Set by the `Client`. */
  onerror?: ((error: Error) => void) | undefined;
  /** The inner transport's `sessionId` (a transport matter only: the policy session never comes from it). */
  readonly sessionId: string | undefined;
  /** Whether the inner transport opens one request per JSON-RPC request (2.x's `hasPerRequestStream` is `true`). */
  readonly hasPerRequestStream?: boolean;
  /** Present when the inner transport has it: passes the version on. */
  setProtocolVersion?: ((version: string) => void) | undefined;
  /** Present when the inner transport has it (2.x): passes the versions on. */
  setSupportedProtocolVersions?: ((versions: string[]) => void) | undefined;
  /**
   * The pin set, plain JSON: `{ version: 1, server: { name, version }, tools: { <name>: <sha256> } }`
   * (docs/visibility.md); `undefined` without `pin`.
   */
  pepPins(): McpPinSet | undefined;
}

/** Whether `v` is a `Transport` (it has `start`, `send` and `close`), the object this route guards. */
export function isMcpTransport(v: unknown): v is McpTransportLike {
  return isObject(v) && typeof v.start === 'function' && typeof v.send === 'function' && typeof v.close === 'function';
}

/** The inner transport, as this route uses it: its public interface only. */
interface Inner {
  start(): Promise<void>;
  send(message: unknown, options?: unknown): Promise<void>;
  close(): Promise<void>;
  onmessage?: ((message: unknown, extra?: unknown) => void) | undefined;
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  sessionId?: string | undefined;
  hasPerRequestStream?: boolean | undefined;
  setProtocolVersion?: ((version: string) => void) | undefined;
  setSupportedProtocolVersions?: ((versions: string[]) => void) | undefined;
}

/** Most request ids of refused (never sent) calls remembered, to drop a server's answer to one. */
const MAX_REFUSED = 1024;

const guardedTransports = new WeakSet<object>();

/**
 * A JSON-RPC id as a key, matched as the `Client` matches a response: both SDK lines look one up by
 * `Number(response.id)`, so `"1"`, `" 1"` and `"0x1"` answer request `1` (a server must not slip an
 * answer past the guard under an alias). An id that is not a number stays a string.
 */
function keyOf(id: unknown): string {
  if (typeof id === 'number' || typeof id === 'string') {
    const n = Number(id);
    if (!Number.isNaN(n)) return `number:${String(n)}`;
  }
  return `${typeof id}:${String(id)}`;
}

/**
 * `guardMcpClient(pep, transport, opts)` (see `guardMcpClient` in `client.ts`).
 * @throws TypeError when the transport is already guarded
 */
export function guardClientTransport(
  pep: Pep,
  transport: McpTransportLike,
  read: ClientOptions,
  scope: string,
): GuardedMcpTransport {
  if (guardedTransports.has(transport)) throw new TypeError(`${scope}: this transport is already guarded`);
  assertGuardable(pep, scope);
  guardedTransports.add(transport);
  return new GuardedTransport(pep, transport as unknown as Inner, read, scope);
}

/** The guarded transport. */
class GuardedTransport implements GuardedMcpTransport {
  onmessage?: ((message: unknown, extra?: unknown) => void) | undefined;
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  setProtocolVersion?: ((version: string) => void) | undefined;
  setSupportedProtocolVersions?: ((versions: string[]) => void) | undefined;
  readonly #inner: Inner;
  readonly #surface: ToolSurface;
  readonly #ctx: CallContext;
  #closed = false;
  /** `tools/call` requests in the guard's hands, by id. */
  readonly #calls = new Map<string, PendingCall>();
  /** Ids of calls never sent (refused, cancelled): an answer to one is forged and dropped. */
  readonly #refused = new Set<string>();
  /** The `Client`'s `tools/list` requests awaiting their answer, by id: whether each asked for a later page. */
  readonly #lists = new Map<string, boolean>();
  /** The `Client`'s `initialize` and `server/discover` requests awaiting their answer (the server's name). */
  readonly #hellos = new Set<string>();
  /** The guard's own requests (the tool list it reads), by id. */
  readonly #own = new Map<string, Deferred<Received>>();
  #seq = 0;
  #server: { name?: unknown; version?: unknown } | undefined;
  /** The 2026-07-28 `_meta` envelope of the `Client`'s last request (protocol keys only), for the guard's own. */
  #envelope: Record<string, unknown> | undefined;

  constructor(pep: Pep, inner: Inner, read: ClientOptions, scope: string) {
    this.#inner = inner;
    const { checkResult, session, ...surfaceOpts } = read;
    this.#surface = makeToolSurface({
      scope,
      pep,
      session,
      ...surfaceOpts,
      readPage: (params, options) => this.#request('tools/list', params, options),
      server: () => this.#server,
    });
    this.#ctx = {
      pep,
      checkResult,
      session,
      surface: this.#surface,
      send: (message, options) => inner.send(message, options),
      closed: () => this.#closed,
    };
    if (typeof inner.setProtocolVersion === 'function') {
      this.setProtocolVersion = (version) => inner.setProtocolVersion?.(version);
    }
    if (typeof inner.setSupportedProtocolVersions === 'function') {
      this.setSupportedProtocolVersions = (versions) => inner.setSupportedProtocolVersions?.(versions);
    }
    // The 2.x client probes a stdio transport differently (it is told by `stderr` and `pid`).
    if ('stderr' in inner && 'pid' in inner) {
      Object.defineProperty(this, 'stderr', { get: () => (inner as unknown as { stderr: unknown }).stderr });
      Object.defineProperty(this, 'pid', { get: () => (inner as unknown as { pid: unknown }).pid });
    }
  }

  get sessionId(): string | undefined {
    return this.#inner.sessionId;
  }

  get hasPerRequestStream(): boolean {
    return this.#inner.hasPerRequestStream === true;
  }

  pepPins(): McpPinSet | undefined {
    return this.#surface.pins();
  }

  start(): Promise<void> {
    const inner = this.#inner;
    inner.onmessage = (message, extra) => this.#receive(message, extra);
    inner.onerror = (error) => this.onerror?.(error);
    inner.onclose = () => {
      this.#shutdown();
      this.onclose?.();
    };
    return inner.start();
  }

  close(): Promise<void> {
    this.#shutdown();
    return this.#inner.close();
  }

  send(message: unknown, options?: unknown): Promise<void> {
    if (Array.isArray(message)) {
      return Promise.reject(
        new McpProtocolError(JSONRPC_ERROR.invalidRequest, 'agent-pep/mcp: JSON-RPC batches are not supported'),
      );
    }
    let msg: Record<string, unknown>;
    try {
      // Read once: what is decided is what is sent.
      msg = isObject(message) ? { ...message } : {};
    } catch {
      return Promise.reject(new TypeError('agent-pep/mcp: the message could not be read'));
    }
    const method = msg.method;
    if (method === 'tools/call' && !('id' in msg)) return this.#notificationRefused(msg.params);
    if (typeof method === 'string' && 'id' in msg) {
      this.#noteEnvelope(msg.params);
      if (method === 'tools/call') return this.#call(msg, options);
      const key = keyOf(msg.id);
      if (method === 'tools/list') this.#lists.set(key, isObject(msg.params) && typeof msg.params.cursor === 'string');
      if (method === 'initialize' || method === 'server/discover') this.#hellos.add(key);
    } else if (method === 'notifications/cancelled' && this.#cancelled(msg.params)) {
      // The server never saw the request: nothing to tell it.
      return Promise.resolve();
    }
    return this.#inner.send(isObject(message) ? msg : message, options);
  }

  /**
   * A `tools/call` without an id (a notification, which no answer could be checked for): never sent, the
   * JSON-RPC invalid-request error, observed as a refusal.
   */
  #notificationRefused(params: unknown): Promise<void> {
    const p = readParams(params);
    const tool = typeof p.name === 'string' ? p.name : 'unknown';
    const why = 'agent-pep/mcp: a tools/call without an id is not supported';
    enforcementOf(this.#ctx.pep, 'guardMcpClient').refuse({ stage: 'action', tool }, 'invalid_request', why);
    return Promise.reject(new McpProtocolError(JSONRPC_ERROR.invalidRequest, why));
  }

  /** Keeps the protocol keys of a request's `_meta` (2026-07-28), which the guard's own requests carry too. */
  #noteEnvelope(params: unknown): void {
    const meta = isObject(params) && isObject(params._meta) ? params._meta : undefined;
    if (meta === undefined || !(PROTOCOL_VERSION_META in meta)) return;
    const envelope: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(meta)) if (k.startsWith('io.modelcontextprotocol/')) envelope[k] = v;
    this.#envelope = envelope;
  }

  /** A `tools/call`: decided, then sent or refused; the `Client`'s send resolves once it left (or never will). */
  #call(msg: Record<string, unknown>, options: unknown): Promise<void> {
    if (this.#closed) return Promise.reject(new Error('agent-pep/mcp: the transport is closed'));
    const key = keyOf(msg.id);
    if (this.#calls.has(key)) {
      return Promise.reject(new McpProtocolError(JSONRPC_ERROR.invalidRequest, 'agent-pep/mcp: a request id in use'));
    }
    const call = pendingCall();
    this.#calls.set(key, call);
    const requestSignal = isObject(options) ? options.requestSignal : undefined;
    if (requestSignal instanceof AbortSignal) {
      const onAbort = () => this.#cancel(call);
      if (requestSignal.aborted) onAbort();
      else requestSignal.addEventListener('abort', onAbort, { once: true });
    }
    const modern = isObject(msg.params) && isObject(msg.params._meta) && PROTOCOL_VERSION_META in msg.params._meta;
    void decideCall(this.#ctx, msg, call, options).then((outcome) => this.#answer(key, msg.id, call, outcome, modern));
    return call.handed.promise;
  }

  /** What the `Client` receives for a decided call, unless it cancelled it or the transport closed. */
  #answer(key: string, id: unknown, call: PendingCall, outcome: Outcome, modern: boolean): void {
    this.#calls.delete(key);
    call.handed.resolve();
    if (call.state !== 'sent') this.#remember(key);
    if (outcome.kind === 'none' || call.cancelled || this.#closed) return;
    if (outcome.kind === 'message') {
      this.#deliver(outcome.received.message, outcome.received.extra);
      return;
    }
    // A 2026-07-28 client needs the discriminator on every result; the server's own carries it already.
    const r =
      modern && !('resultType' in outcome.result) ? { ...outcome.result, resultType: 'complete' } : outcome.result;
    this.#deliver({ jsonrpc: '2.0', id, result: r }, undefined);
  }

  /** Remembers the id of a call never sent (at most `MAX_REFUSED`, the oldest forgotten first). */
  #remember(key: string): void {
    this.#refused.add(key);
    if (this.#refused.size > MAX_REFUSED) {
      const oldest = this.#refused.values().next().value;
      if (oldest !== undefined) this.#refused.delete(oldest);
    }
  }

  /** A `notifications/cancelled` for a call in the guard's hands; true when it was never sent (the notification is dropped). */
  #cancelled(params: unknown): boolean {
    const key = isObject(params) ? keyOf(params.requestId) : undefined;
    if (key === undefined) return false;
    // A list or hello the client no longer waits for is forgotten (its answer, if any, passes as it is).
    this.#lists.delete(key);
    this.#hellos.delete(key);
    const call = this.#calls.get(key);
    if (call === undefined) return false;
    this.#cancel(call);
    return call.state === 'deciding';
  }

  #cancel(call: PendingCall): void {
    call.cancelled = true;
    if (call.state === 'deciding') call.abort.abort();
    else call.response.reject(new NotSent());
  }

  /** Closed (by the host or the inner transport): no pending decision sends anything after this. */
  #shutdown(): void {
    this.#closed = true;
    for (const call of this.#calls.values()) this.#cancel(call);
    for (const own of this.#own.values()) own.reject(new Error('agent-pep/mcp: the transport closed'));
    this.#own.clear();
  }

  #deliver(message: unknown, extra: unknown): void {
    try {
      this.onmessage?.(message, extra);
    } catch (err) {
      // The Client's own handler threw (as it would on the inner transport's callback): reported, not lost.
      this.onerror?.(err instanceof Error ? err : new Error(String(err)));
    }
  }

  /** A message from the server. */
  #receive(message: unknown, extra: unknown): void {
    if (!isObject(message) || Array.isArray(message)) {
      this.#deliver(message, extra);
      return;
    }
    if ('id' in message && !('method' in message)) {
      if (this.#response(message, extra)) return;
    } else if (message.method === 'notifications/tools/list_changed') this.#surface.listChanged();
    this.#deliver(message, extra);
  }

  /** A response: true when the guard took it (its own, a call's, a list to filter, a forged one dropped). */
  #response(message: Record<string, unknown>, extra: unknown): boolean {
    const key = keyOf(message.id);
    const own = this.#own.get(key);
    if (own !== undefined) {
      this.#own.delete(key);
      own.resolve({ message, extra });
      return true;
    }
    const call = this.#calls.get(key);
    if (call !== undefined) {
      // An answer to a request still being decided was never asked for: dropped.
      if (call.state === 'sent') call.response.resolve({ message, extra });
      return true;
    }
    if (this.#refused.has(key)) return true;
    const continuing = this.#lists.get(key);
    if (continuing !== undefined) {
      this.#lists.delete(key);
      void this.#filterList(message, continuing, extra);
      return true;
    }
    if (this.#hellos.delete(key)) this.#server = serverInfoOf(message.result) ?? this.#server;
    return false;
  }

  /** A `tools/list` answer the `Client` asked for, through the tool surface (pins, visibility). */
  async #filterList(message: Record<string, unknown>, continuing: boolean, extra: unknown): Promise<void> {
    if (!('result' in message)) {
      this.#deliver(message, extra);
      return;
    }
    try {
      const result = await this.#surface.filterList(message.result, continuing, {});
      this.#deliver({ ...message, result }, extra);
    } catch (err) {
      const why = err instanceof TypeError ? err.message : 'agent-pep/mcp: the tool list could not be checked';
      this.#deliver(
        { jsonrpc: '2.0', id: message.id, error: { code: JSONRPC_ERROR.invalidRequest, message: why } },
        extra,
      );
    }
  }

  /** A request of the guard's own (the tool list it reads), with the `Client`'s protocol envelope. */
  async #request(method: string, params: Record<string, unknown> | undefined, options: unknown): Promise<unknown> {
    if (this.#closed) throw new Error('agent-pep/mcp: the transport is closed');
    this.#seq += 1;
    const id = `agent-pep-${this.#seq}`;
    const key = keyOf(id);
    const answer = deferred<Received>();
    this.#own.set(key, answer);
    const signal = isObject(options) ? options.signal : undefined;
    const onAbort = () => {
      this.#own.delete(key);
      answer.reject(new NotSent());
    };
    if (signal instanceof AbortSignal) signal.addEventListener('abort', onAbort, { once: true });
    try {
      const withMeta = this.#envelope === undefined ? params : { ...params, _meta: { ...this.#envelope } };
      await this.#inner.send({ jsonrpc: '2.0', id, method, ...(withMeta === undefined ? {} : { params: withMeta }) });
      const { message } = await answer.promise;
      if (isObject(message.error)) {
        const code = typeof message.error.code === 'number' ? message.error.code : JSONRPC_ERROR.invalidRequest;
        throw new McpProtocolError(code, String(message.error.message ?? 'error'));
      }
      return message.result;
    } finally {
      this.#own.delete(key);
      if (signal instanceof AbortSignal) signal.removeEventListener('abort', onAbort);
    }
  }
}

/** The server's `{ name, version }` of an `initialize` result, or of a `server/discover` result's `_meta`. */
function serverInfoOf(result: unknown): { name?: unknown; version?: unknown } | undefined {
  if (!isObject(result)) return undefined;
  if (isObject(result.serverInfo)) return result.serverInfo;
  const meta = isObject(result._meta) ? result._meta : undefined;
  const info = meta?.['io.modelcontextprotocol/serverInfo'];
  return isObject(info) ? info : undefined;
}
