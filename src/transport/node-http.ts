/**
 * A dispatcher on Node's own `node:http` / `node:https`, for a process that sends one or two requests
 * and exits: `agent-pep hook`, which Claude Code and Codex start anew for every tool use (issue 30).
 * undici's `Pool` costs about 40 ms to load and its HTTP parser (WebAssembly) more to compile on the
 * first request; `node:http` is part of Node, compiled into it. A long-lived client keeps undici's
 * pool, which is faster per request.
 *
 * It calls the same handler as undici does (`onRequestStart`, `onResponseStart`, `onResponseData`,
 * `onResponseEnd`, `onResponseError`, undici 7's `DispatchHandler`), so every check of the transport
 * (`http.ts`: status, content type and coding, the byte cap, no redirect, the deadline) is the one
 * code path for both. Response headers are read from the raw list, as undici gives them: a header sent
 * twice is an array (Node's parsed `headers` would keep the first `content-type` and drop the second,
 * which the transport refuses). No timeouts of its own: the attempt's deadline aborts it.
 * @internal
 */
import type { ClientRequest, IncomingMessage, RequestOptions } from 'node:http';
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { OWNED_DISPATCHER } from './owned.js';

/** A request's response headers as undici's handler gets them: lower-case names, a repeated name an array. */
export function headersOf(raw: readonly string[]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] as string).toLowerCase();
    const value = raw[i + 1] as string;
    const seen = out[name];
    if (seen === undefined) out[name] = value;
    else if (Array.isArray(seen)) seen.push(value);
    else out[name] = [seen, value];
  }
  return out;
}

/** One request: the controller the handler is given, and the calls into the handler, each at most once. */
class Exchange implements Dispatcher.DispatchController {
  #aborted = false;
  #paused = false;
  #reason: Error | null = null;
  #ended = false;
  #request: ClientRequest | undefined = undefined;
  #response: IncomingMessage | undefined = undefined;
  readonly #handler: Dispatcher.DispatchHandler;

  constructor(handler: Dispatcher.DispatchHandler) {
    this.#handler = handler;
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  get paused(): boolean {
    return this.#paused;
  }

  get reason(): Error | null {
    return this.#reason;
  }

  /** Ends the request now: its socket is destroyed (never reused), and the handler hears `reason` once. */
  abort(reason: Error): void {
    if (this.#aborted || this.#ended) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#request?.destroy();
    this.#error(reason);
  }

  pause(): void {
    this.#paused = true;
    this.#response?.pause();
  }

  resume(): void {
    this.#paused = false;
    this.#response?.resume();
  }

  /** Sends the request, unless the handler aborted it at its start. */
  start(send: () => ClientRequest, body: string | Buffer | Readable | null): void {
    this.#handler.onRequestStart?.(this, {});
    if (this.#aborted) return;
    const req = send();
    this.#request = req;
    req.once('response', (res) => this.#onResponse(res));
    // undici drops a connection on a 100 Continue it did not ask for (it never sends `Expect`); Node
    // would pass over it. Refused the same way; other 1xx (103 Early Hints) are passed over by both.
    req.on('information', (info: { statusCode: number }) => {
      if (info.statusCode === 100) {
        this.abort(Object.assign(new Error('a 100 Continue the request did not ask for'), { code: 'UND_ERR_INFO' }));
      }
    });
    // A 101 the request did not ask for: Node hands the socket to an `upgrade` listener, and with none
    // destroys it without a word to the request (the attempt would wait for its deadline). undici
    // drops the connection and reports `UND_ERR_SOCKET`; the same here.
    req.once('upgrade', (_res: IncomingMessage, socket: Socket) => {
      socket.destroy();
      this.#error(
        Object.assign(new Error('a 101 Switching Protocols the request did not ask for'), { code: 'UND_ERR_SOCKET' }),
      );
    });
    req.once('error', (err) => this.#error(err));
    if (body === null || typeof body === 'string' || Buffer.isBuffer(body)) req.end(body ?? undefined);
    else {
      body.once('error', (err) => {
        this.abort(err);
      });
      body.pipe(req);
    }
  }

  #onResponse(res: IncomingMessage): void {
    this.#response = res;
    if (this.#aborted) return;
    this.#handler.onResponseStart?.(this, res.statusCode ?? 0, headersOf(res.rawHeaders), res.statusMessage ?? '');
    if (this.#aborted) {
      res.destroy();
      return;
    }
    if (this.#paused) res.pause();
    res.on('data', (chunk: Buffer) => {
      if (!this.#aborted) this.#handler.onResponseData?.(this, chunk);
    });
    res.once('end', () => {
      if (this.#aborted || this.#ended) return;
      this.#ended = true;
      this.#handler.onResponseEnd?.(this, {});
    });
    // A response cut off before its declared length: Node emits `aborted`, then `error` (ECONNRESET).
    res.once('error', (err) => this.#error(err));
    res.once('aborted', () => this.#error(Object.assign(new Error('response aborted'), { code: 'ECONNRESET' })));
  }

  /** The request failed (or was aborted): the handler hears it once, and nothing after it. */
  #error(err: Error): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#request?.destroy();
    this.#handler.onResponseError?.(this, err);
  }
}

/** What `dispatch` needs of undici's options. */
type DispatchOptions = Pick<Dispatcher.DispatchOptions, 'origin' | 'path' | 'method' | 'headers' | 'body'>;

/**
 * A dispatcher on `node:http` (and `node:https` for an `https:` origin), with keep-alive; each request
 * goes to the origin its options name. Used by the hook; see the module comment. A client given one
 * owns it: it sends its body as a string, and `close()` destroys it.
 */
export class NodeHttpDispatcher {
  /** The client owns it (`http.ts`): string bodies, destroyed by `close()`. */
  readonly [OWNED_DISPATCHER] = true;
  readonly #agents = new Map<string, http.Agent>();
  #destroyed = false;

  get destroyed(): boolean {
    return this.#destroyed;
  }

  /**
   * Sends one request and reports it to `handler` (undici 7's handler API). Never follows a redirect,
   * never re-sends. A destroyed dispatcher, or an origin that is not an http: or https: URL, reports an
   * error (code `UND_ERR_DESTROYED`, `ERR_INVALID_URL`) to the handler.
   * @returns true
   */
  dispatch(options: DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const exchange = new Exchange(handler);
    const fail = (message: string, code: string): boolean => {
      queueMicrotask(() => exchange.abort(Object.assign(new Error(message), { code })));
      return true;
    };
    if (this.#destroyed) return fail('the dispatcher was destroyed', 'UND_ERR_DESTROYED');
    let origin: URL;
    try {
      origin = new URL(String(options.origin));
    } catch {
      return fail('the origin is not a URL', 'ERR_INVALID_URL');
    }
    const secure = origin.protocol === 'https:';
    if (!secure && origin.protocol !== 'http:') return fail('the origin is not http: or https:', 'ERR_INVALID_URL');
    const module = secure ? https : http;
    let agent = this.#agents.get(origin.protocol);
    if (agent === undefined) {
      agent = new module.Agent({ keepAlive: true });
      this.#agents.set(origin.protocol, agent);
    }
    const request: RequestOptions = {
      protocol: origin.protocol,
      hostname: origin.hostname.startsWith('[') ? origin.hostname.slice(1, -1) : origin.hostname,
      port: origin.port === '' ? undefined : Number(origin.port),
      path: options.path,
      method: options.method,
      headers: options.headers as Record<string, string>,
      agent,
      // Node's strict parser even under `--insecure-http-parser` (a hook inherits its host's
      // NODE_OPTIONS): undici's own parser is always strict (no Content-Length with
      // Transfer-Encoding, no bare-LF line ends).
      insecureHTTPParser: false,
    };
    exchange.start(() => module.request(request), options.body as string | Buffer | Readable | null);
    return true;
  }

  /** Closes every socket; requests in flight fail. */
  async destroy(): Promise<void> {
    this.#destroyed = true;
    for (const agent of this.#agents.values()) agent.destroy();
  }
}
