/**
 * The HTTP transport: the only user of undici (its `Pool` loaded by `pool.ts`). One pool per client with keep-alive; one request on the
 * wire per attempt and never a redirect followed, whatever the dispatcher; status and header checks
 * before the body is read; a byte cap on the body; every body consumed or the connection dropped, so
 * no socket leaks. It reports what happened ({@link AttemptFailure} and its facts); `retry.ts` decides
 * what is retried.
 * @internal
 */
import type { Readable } from 'node:stream';
import type { Dispatcher, Pool } from 'undici';
import { ABORT_CAUSES, type AbortLike, abortCauseOf } from '../internal/abort.js';
import { AttemptFailure } from '../internal/failure.js';
import { nodeBuiltin } from '../internal/runtime.js';
import { checkContentType, checkNoContentCoding } from './headers.js';
import { OWNED_DISPATCHER } from './owned.js';
import { poolClass } from './pool.js';
import type { AttemptReceiver, HttpResponse, Transport } from './types.js';

export type { AttemptReceiver, HttpResponse, Transport } from './types.js';

/** Transport settings. */
export interface TransportOptions {
  origin: string;
  path: string;
  maxResponseBytes: number;
  dispatcher?: Dispatcher | undefined;
  connections?: number | undefined;
}

// A caller's dispatcher timing out on its own (ours sets no undici timeouts).
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Most bytes of a non-200 body read for its error `code` (a longer body is not read for one). */
export const ERROR_BODY_MAX = 1024;
/** Longest wait for a non-200 body's error `code`, in milliseconds; then the status alone decides. */
export const ERROR_BODY_GRACE_MS = 25;
/** What an error `code` may look like to be named in a message: a short identifier, never content. */
const ERROR_CODE = /^[a-z][a-z0-9_]{0,63}$/;

/** A non-200 that says it carries a short JSON body may name its error `code` (`{ code, message }`). */
export function mayCarryErrorCode(headers: Record<string, string | string[] | undefined>): boolean {
  const type = headers['content-type'];
  const length = headers['content-length'];
  return (
    typeof type === 'string' &&
    /^application\/(problem\+)?json\b/i.test(type) &&
    (length === undefined || (typeof length === 'string' && Number(length) <= ERROR_BODY_MAX))
  );
}

/** The `code` member of a whole error body, when it is a short identifier; else undefined. */
export function errorCodeOf(body: Uint8Array): string | undefined {
  try {
    const parsed = JSON.parse(new TextDecoder().decode(body)) as { code?: unknown };
    return typeof parsed?.code === 'string' && ERROR_CODE.test(parsed.code) ? parsed.code : undefined;
  } catch {
    return undefined;
  }
}
const CLOSED_CODES = new Set(['UND_ERR_CLOSED', 'UND_ERR_DESTROYED', 'ERR_INVALID_STATE']);

/**
 * The failure of a non-200 answer, on every transport: 409 `session_state_lost` is its own fail-closed
 * code (the PDP refused to decide on an empty state: docs/dev-pdp.md, "Session integrity"; the fix is a
 * new session id, docs/fail-closed.md); any other status is `pdp_status`, naming the error body's code.
 * @param status the HTTP status
 * @param code the short error code of the body (`errorCodeOf`), else undefined
 * @param where the origin and path tried (pdpUrl carries no credentials, query or fragment): it tells a
 *   wrong path or agent id apart from an outage
 * @param retryAfter the `retry-after` header as received, else undefined
 */
export function statusFailure(
  status: number | undefined,
  code: string | undefined,
  where: string,
  retryAfter: unknown,
): AttemptFailure {
  if (status === 409 && code === 'session_state_lost') {
    return new AttemptFailure(
      'session_state_lost',
      `PDP answered HTTP 409 (session_state_lost) at ${where}: it lost this session's state and refuses every step of it; start a new session`,
      { status },
    );
  }
  const named = code === undefined ? '' : ` (${code})`;
  return new AttemptFailure('pdp_status', `PDP answered HTTP ${status}${named} at ${where}`, {
    status,
    retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined,
  });
}

/**
 * Classifies anything undici (or a signal) threw into an {@link AttemptFailure}: its fail-closed code,
 * and the facts (abort cause, error code) that `retry.ts` decides from.
 * @param err what undici reported, or the abort reason
 * @param signal the attempt's signal: when it is aborted, its reason names the cause
 * @param where the request's origin and path (no query), named in a connection failure's message so
 *   the reader sees which URL failed; default: not named
 */
export function classifyError(
  err: unknown,
  signal: Pick<AbortLike, 'aborted' | 'reason'>,
  where?: string,
): AttemptFailure {
  if (err instanceof AttemptFailure) return err;
  if (signal.aborted) {
    const abortCause = abortCauseOf(signal.reason);
    const { code, message } = ABORT_CAUSES[abortCause];
    return new AttemptFailure(code, message, { abortCause }, { cause: err });
  }
  const errorCode = (err as { code?: unknown } | null)?.code;
  if (typeof errorCode !== 'string') {
    return new AttemptFailure('pdp_unreachable', 'PDP request failed', {}, { cause: err });
  }
  const facts = { errorCode };
  const at = where === undefined ? '' : ` at ${where}`;
  if (TIMEOUT_CODES.has(errorCode)) {
    return new AttemptFailure('pdp_timeout', `PDP timed out (${errorCode})${at}`, facts, { cause: err });
  }
  if (CLOSED_CODES.has(errorCode)) {
    return new AttemptFailure('pdp_unreachable', 'connection pool closed', facts, { cause: err });
  }
  if (errorCode.startsWith('HPE_') || errorCode === 'UND_ERR_INFO' || errorCode === 'UND_ERR_NOT_SUPPORTED') {
    return new AttemptFailure('invalid_response', `PDP sent a malformed HTTP response (${errorCode})`, facts, {
      cause: err,
    });
  }
  return new AttemptFailure('pdp_unreachable', `PDP unreachable (${errorCode})${at}`, facts, { cause: err });
}

/**
 * The failure for a request the dispatcher re-sent within one attempt: a redirect when undici's
 * redirect handler says so (`context.history` lists the hops), else a re-send of its own.
 */
function resent(context: unknown): AttemptFailure {
  const history = (context as { history?: unknown } | null | undefined)?.history;
  return Array.isArray(history) && history.length > 0
    ? new AttemptFailure('pdp_status', 'PDP redirected; redirects are never followed')
    : new AttemptFailure('pdp_unreachable', 'the dispatcher re-sent the request; only the PEP retries');
}

/**
 * A request body a caller's dispatcher can send once only. undici's retry interceptor re-sends a body
 * it can send again, and a 200 cut off mid-body it resumes with a second request (`range: bytes=N-`)
 * without starting the request anew for its handler, so the handler's check of a second start cannot
 * see it; its bytes would be spliced into the first answer. A stream is disturbed by its first send,
 * so the interceptor passes the error on instead: the attempt fails, and the PEP's own retries
 * decide. Sets `content-length` (a stream is sent chunked otherwise). The client's own pool has no
 * such interceptor: it sends the string as it is.
 */
function oneShot(body: string, headers: Record<string, string>): Readable {
  const bytes = Buffer.from(body, 'utf8');
  headers['content-length'] = String(bytes.length);
  // node:stream is fetched here, not imported: only a caller's undici dispatcher needs it.
  const stream = nodeBuiltin<typeof import('node:stream')>('node:stream') as typeof import('node:stream');
  return stream.Readable.from([bytes], { objectMode: false });
}

/** A non-200's body, read only for its error code (bounded in size and time). */
interface ErrorBody {
  chunks: Buffer[];
  size: number;
  timer: NodeJS.Timeout;
}

/**
 * One attempt between its dispatch and its settling: the handler undici calls, and the promise it
 * settles once. A class rather than closures: one object per attempt on the hot path, its methods shared.
 */
class Attempt implements Dispatcher.DispatchHandler {
  #controller: Dispatcher.DispatchController | undefined = undefined;
  #settled = false;
  #status = 0;
  #headers: Record<string, string | string[] | undefined> = {};
  #failure: AttemptFailure | undefined = undefined;
  /** The body's first chunk; later ones go to {@link Attempt.#more} (most answers are one chunk). */
  #first: Buffer | undefined = undefined;
  #more: Buffer[] | undefined = undefined;
  #size = 0;
  #errorBody: ErrorBody | undefined = undefined;
  readonly #receiver: AttemptReceiver;
  readonly #signal: AbortLike;
  readonly #max: number;
  readonly #origin: string;
  readonly #path: string;

  constructor(receiver: AttemptReceiver, signal: AbortLike, max: number, origin: string, path: string) {
    this.#receiver = receiver;
    this.#signal = signal;
    this.#max = max;
    this.#origin = origin;
    this.#path = path;
  }

  /** The caller's (or the deadline's) abort. Queued (no controller yet): settles now; onRequestStart then aborts the request. */
  readonly onAbort = (): void => {
    if (this.#controller) this.#controller.abort(this.#signal.reason as Error);
    else this.settle(this.#signal.reason);
  };

  /** Settles the attempt once: with `value`, or with `err` classified. */
  settle(err: unknown, value?: HttpResponse): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#signal.removeEventListener('abort', this.onAbort);
    if (value !== undefined) this.#receiver.onResponse(value);
    else this.#receiver.onFailure(classifyError(err, this.#signal, `${this.#origin}${this.#path}`));
  }

  /** Ends the attempt with `f` (the connection is dropped, never reused). */
  #fail(c: Dispatcher.DispatchController, f: AttemptFailure): void {
    this.#failure = f;
    c.abort(f);
  }

  #statusFailure(code?: string): AttemptFailure {
    return statusFailure(this.#status, code, `${this.#origin}${this.#path}`, this.#headers['retry-after']);
  }

  #endErrorBody(c: Dispatcher.DispatchController, whole: boolean): void {
    const errorBody = this.#errorBody;
    if (!errorBody) return;
    clearTimeout(errorBody.timer);
    const code = whole ? errorCodeOf(Buffer.concat(errorBody.chunks, errorBody.size)) : undefined;
    this.#errorBody = undefined;
    const f = this.#statusFailure(code);
    this.settle(f);
    if (!whole) this.#fail(c, f);
  }

  onRequestStart(c: Dispatcher.DispatchController, context: unknown): void {
    if (this.#controller) {
      // A second start of this request: the dispatcher re-sent it on its own, to follow a
      // redirect or to retry. Refused here, before a byte of it is written (undici calls this
      // before writing the request): one attempt is one request, and retries are the PEP's.
      this.#controller = c;
      this.#fail(c, resent(context));
      return;
    }
    this.#controller = c;
    if (this.#signal.aborted) c.abort(this.#signal.reason as Error);
  }

  onResponseStart(
    c: Dispatcher.DispatchController,
    statusCode: number,
    h: Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseStart']>>[2],
  ): void {
    if (statusCode < 200) return; // informational (RFC 9110 section 15.2): wait for the final response
    this.#status = statusCode;
    const headers = h as Record<string, string | string[] | undefined>;
    this.#headers = headers;
    if (statusCode !== 200) {
      // Decided by the status alone. A short JSON error body (`{ code, message }`, as the dev PDP
      // sends) is read for its code only, for at most ERROR_BODY_GRACE_MS; then the attempt settles
      // and the connection is dropped, so a non-200 whose body hangs or never ends cannot hold the
      // attempt (or a socket) until the deadline.
      if (!mayCarryErrorCode(headers)) {
        const f = this.#statusFailure();
        this.settle(f);
        this.#fail(c, f);
        return;
      }
      const timer = setTimeout(() => this.#endErrorBody(c, false), ERROR_BODY_GRACE_MS);
      this.#errorBody = { chunks: [], size: 0, timer };
      return;
    }
    try {
      checkContentType(headers['content-type']);
      checkNoContentCoding(headers);
    } catch (err) {
      this.#fail(c, err as AttemptFailure);
      return;
    }
    const declared = headers['content-length'];
    if (typeof declared === 'string' && Number(declared) > this.#max) {
      this.#fail(c, new AttemptFailure('invalid_response', 'PDP response is larger than maxResponseBytes'));
    }
  }

  onResponseData(c: Dispatcher.DispatchController, chunk: Buffer): void {
    const errorBody = this.#errorBody;
    if (errorBody) {
      errorBody.size += chunk.length;
      if (errorBody.size > ERROR_BODY_MAX) this.#endErrorBody(c, false);
      else errorBody.chunks.push(chunk);
      return;
    }
    this.#size += chunk.length;
    if (this.#size > this.#max) {
      this.#fail(c, new AttemptFailure('invalid_response', 'PDP response is larger than maxResponseBytes'));
    } else if (this.#first === undefined) {
      this.#first = chunk;
    } else if (this.#more === undefined) {
      this.#more = [chunk];
    } else {
      this.#more.push(chunk);
    }
  }

  onResponseEnd(c: Dispatcher.DispatchController): void {
    if (this.#errorBody) {
      this.#endErrorBody(c, true);
      return;
    }
    const first = this.#first;
    const more = this.#more;
    const body =
      first === undefined ? Buffer.alloc(0) : more === undefined ? first : Buffer.concat([first, ...more], this.#size);
    this.settle(undefined, { headers: this.#headers, body });
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    const errorBody = this.#errorBody;
    if (errorBody) {
      clearTimeout(errorBody.timer);
      this.#errorBody = undefined;
      this.settle(this.#failure ?? this.#statusFailure());
      return;
    }
    this.settle(this.#failure ?? err);
  }
}

/** The transport on undici (a caller's dispatcher, or the client's own `Pool`). */
export class HttpTransport implements Transport {
  readonly #dispatcher: Dispatcher;
  /** The client's own dispatcher (sent a string body, destroyed by `close()`); a caller's is not. */
  readonly #owned: Pick<Pool, 'destroy' | 'destroyed'> | undefined;
  readonly #origin: string;
  readonly #path: string;
  readonly #max: number;

  constructor(options: TransportOptions) {
    this.#origin = options.origin;
    this.#path = options.path;
    this.#max = options.maxResponseBytes;
    if (options.dispatcher !== undefined && OWNED_DISPATCHER in options.dispatcher) {
      // The hook's (node-http.ts): no interceptor re-sends through it, and the client owns it.
      this.#dispatcher = options.dispatcher as unknown as Dispatcher;
      this.#owned = options.dispatcher as unknown as Pick<Pool, 'destroy' | 'destroyed'>;
    } else if (options.dispatcher) {
      this.#dispatcher = options.dispatcher;
    } else {
      const pool = new (poolClass())(options.origin, {
        // Deadlines are ours (timeoutMs / attemptTimeoutMs); undici's own stay out of the way.
        headersTimeout: 0,
        bodyTimeout: 0,
        keepAliveTimeout: 4_000,
        keepAliveMaxTimeout: 60_000,
        pipelining: 1,
        ...(options.connections !== undefined ? { connections: options.connections } : {}),
      });
      this.#dispatcher = pool;
      this.#owned = pool;
    }
  }

  /**
   * POSTs `body` once (a GET when `body` is undefined: the AuthZEN discovery document) to `path`, by
   * default the path the transport was made with. Resolves only with a status-200, JSON, uncoded,
   * size-checked, whole body.
   *
   * Uses undici's `dispatch` with a handler rather than `request`: no body stream, no async iterator
   * and no `AbortSignal` listener inside undici per attempt (together about a third of the client's
   * CPU per decision on loopback, see BENCHMARKS.md). A non-200 settles on its status line and headers,
   * and its connection is dropped, never drained.
   * @throws AttemptFailure classified: its code, and the facts (status, `Retry-After`, error code,
   *   abort cause) that `retry.ts` decides from
   */
  send(
    body: string | undefined,
    headers: Record<string, string>,
    signal: AbortLike,
    path: string = this.#path,
  ): Promise<HttpResponse> {
    return new Promise<HttpResponse>((resolve, reject) =>
      this.start(body, headers, signal, path, { onResponse: resolve, onFailure: reject }),
    );
  }

  /**
   * {@link HttpTransport.send} without a promise: `receiver` hears how the attempt ended, once,
   * often from inside undici's handler (the decision's hot path: no promise, no hop). Never throws.
   */
  start(
    body: string | undefined,
    headers: Record<string, string>,
    signal: AbortLike,
    path: string,
    receiver: AttemptReceiver,
  ): void {
    const attempt = new Attempt(receiver, signal, this.#max, this.#origin, path);
    if (signal.aborted) {
      attempt.settle(signal.reason);
      return;
    }
    signal.addEventListener('abort', attempt.onAbort);
    try {
      // `maxRedirections: 0` turns undici's redirect interceptor (and undici 6's built-in redirects)
      // off for this request, so a 3xx reaches the handler and is `pdp_status`.
      const options: Dispatcher.DispatchOptions & { maxRedirections: 0 } = {
        origin: this.#origin,
        path,
        method: body === undefined ? 'GET' : 'POST',
        headers,
        body: body === undefined ? null : this.#owned ? body : oneShot(body, headers),
        maxRedirections: 0,
      };
      this.#dispatcher.dispatch(options, attempt);
    } catch (err) {
      attempt.settle(err);
    }
  }

  /** Destroys the client's own pool (in-flight requests fail); a caller's dispatcher is left alone. */
  async close(): Promise<void> {
    if (this.#owned && !this.#owned.destroyed) await this.#owned.destroy();
  }
}
