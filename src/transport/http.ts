/**
 * The HTTP transport: the only undici import. One pool per client with keep-alive; one request on the
 * wire per attempt and never a redirect followed, whatever the dispatcher; status and header checks
 * before the body is read; a byte cap on the body; every body consumed or the connection dropped, so
 * no socket leaks. It reports what happened ({@link AttemptFailure} and its facts); `retry.ts` decides
 * what is retried.
 * @internal
 */
import { Readable } from 'node:stream';
import { type Dispatcher, Pool } from 'undici';
import { ABORT_CAUSES, type AbortLike, abortCauseOf } from '../internal/abort.js';
import { AttemptFailure } from '../internal/failure.js';
import { checkContentType, checkNoContentCoding } from './headers.js';

/** A whole, status-200, size-checked response. */
export interface HttpResponse {
  headers: Record<string, string | string[] | undefined>;
  body: Uint8Array;
}

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
const ERROR_BODY_MAX = 1024;
/** Longest wait for a non-200 body's error `code`, in milliseconds; then the status alone decides. */
const ERROR_BODY_GRACE_MS = 25;
/** What an error `code` may look like to be named in a message: a short identifier, never content. */
const ERROR_CODE = /^[a-z][a-z0-9_]{0,63}$/;

/** A non-200 that says it carries a short JSON body may name its error `code` (`{ code, message }`). */
function mayCarryErrorCode(headers: Record<string, string | string[] | undefined>): boolean {
  const type = headers['content-type'];
  const length = headers['content-length'];
  return (
    typeof type === 'string' &&
    /^application\/(problem\+)?json\b/i.test(type) &&
    (length === undefined || (typeof length === 'string' && Number(length) <= ERROR_BODY_MAX))
  );
}

/** The `code` member of a whole error body, when it is a short identifier; else undefined. */
export function errorCodeOf(body: Buffer): string | undefined {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { code?: unknown };
    return typeof parsed?.code === 'string' && ERROR_CODE.test(parsed.code) ? parsed.code : undefined;
  } catch {
    return undefined;
  }
}
const CLOSED_CODES = new Set(['UND_ERR_CLOSED', 'UND_ERR_DESTROYED', 'ERR_INVALID_STATE']);

/**
 * Classifies anything undici (or a signal) threw into an {@link AttemptFailure}: its fail-closed code,
 * and the facts (abort cause, error code) that `retry.ts` decides from.
 * @param err what undici reported, or the abort reason
 * @param signal the attempt's signal: when it is aborted, its reason names the cause
 */
export function classifyError(err: unknown, signal: Pick<AbortLike, 'aborted' | 'reason'>): AttemptFailure {
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
  if (TIMEOUT_CODES.has(errorCode)) {
    return new AttemptFailure('pdp_timeout', `PDP timed out (${errorCode})`, facts, { cause: err });
  }
  if (CLOSED_CODES.has(errorCode)) {
    return new AttemptFailure('pdp_unreachable', 'connection pool closed', facts, { cause: err });
  }
  if (errorCode.startsWith('HPE_') || errorCode === 'UND_ERR_INFO' || errorCode === 'UND_ERR_NOT_SUPPORTED') {
    return new AttemptFailure('invalid_response', `PDP sent a malformed HTTP response (${errorCode})`, facts, {
      cause: err,
    });
  }
  return new AttemptFailure('pdp_unreachable', `PDP unreachable (${errorCode})`, facts, { cause: err });
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

/** Sends one attempt and reads the whole response. */
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
  return Readable.from([bytes], { objectMode: false });
}

export class HttpTransport {
  readonly #dispatcher: Dispatcher;
  readonly #owned: Pool | undefined;
  readonly #origin: string;
  readonly #path: string;
  readonly #max: number;

  constructor(options: TransportOptions) {
    this.#origin = options.origin;
    this.#path = options.path;
    this.#max = options.maxResponseBytes;
    if (options.dispatcher) {
      this.#dispatcher = options.dispatcher;
    } else {
      const pool = new Pool(options.origin, {
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
    const max = this.#max;
    return new Promise<HttpResponse>((resolve, reject) => {
      let controller: Dispatcher.DispatchController | undefined;
      let settled = false;
      let status = 0;
      let resHeaders: Record<string, string | string[] | undefined> = {};
      let failure: AttemptFailure | undefined;
      const chunks: Buffer[] = [];
      let size = 0;
      const settle = (err: unknown, value?: HttpResponse): void => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        if (value !== undefined) resolve(value);
        else reject(classifyError(err, signal));
      };
      const onAbort = (): void => {
        // Queued (no controller yet): settle now; onRequestStart then aborts the request.
        if (controller) controller.abort(signal.reason as Error);
        else settle(signal.reason);
      };
      // Ends the attempt with `f` (the connection is dropped, never reused).
      const fail = (c: Dispatcher.DispatchController, f: AttemptFailure): void => {
        failure = f;
        c.abort(f);
      };
      const statusFailure = (code?: string): AttemptFailure => {
        const retryAfter = resHeaders['retry-after'];
        const named = code === undefined ? '' : ` (${code})`;
        // The URL tried (an origin and path: pdpUrl carries no credentials, query or fragment) tells
        // a wrong path or agent id apart from an outage (docs/fail-closed.md).
        return new AttemptFailure('pdp_status', `PDP answered HTTP ${status}${named} at ${this.#origin}${path}`, {
          status,
          retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined,
        });
      };
      // A non-200's body, read only for its error code (bounded in size and time).
      let errorBody: { chunks: Buffer[]; size: number; timer: NodeJS.Timeout } | undefined;
      const endErrorBody = (c: Dispatcher.DispatchController, whole: boolean): void => {
        if (!errorBody) return;
        clearTimeout(errorBody.timer);
        const code = whole ? errorCodeOf(Buffer.concat(errorBody.chunks, errorBody.size)) : undefined;
        errorBody = undefined;
        const f = statusFailure(code);
        settle(f);
        if (!whole) fail(c, f);
      };
      if (signal.aborted) {
        settle(signal.reason);
        return;
      }
      signal.addEventListener('abort', onAbort);
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart(c, context: unknown) {
          if (controller) {
            // A second start of this request: the dispatcher re-sent it on its own, to follow a
            // redirect or to retry. Refused here, before a byte of it is written (undici calls this
            // before writing the request): one attempt is one request, and retries are the PEP's.
            controller = c;
            fail(c, resent(context));
            return;
          }
          controller = c;
          if (signal.aborted) c.abort(signal.reason as Error);
        },
        onResponseStart(c, statusCode, h) {
          if (statusCode < 200) return; // informational (RFC 9110 section 15.2): wait for the final response
          status = statusCode;
          resHeaders = h as Record<string, string | string[] | undefined>;
          if (statusCode !== 200) {
            // Decided by the status alone. A short JSON error body (`{ code, message }`, as the dev PDP
            // sends) is read for its code only, for at most ERROR_BODY_GRACE_MS; then the attempt settles
            // and the connection is dropped, so a non-200 whose body hangs or never ends cannot hold the
            // attempt (or a socket) until the deadline.
            if (!mayCarryErrorCode(resHeaders)) {
              const f = statusFailure();
              settle(f);
              fail(c, f);
              return;
            }
            errorBody = { chunks: [], size: 0, timer: setTimeout(() => endErrorBody(c, false), ERROR_BODY_GRACE_MS) };
            return;
          }
          try {
            checkContentType(resHeaders['content-type']);
            checkNoContentCoding(resHeaders);
          } catch (err) {
            fail(c, err as AttemptFailure);
            return;
          }
          const declared = resHeaders['content-length'];
          if (typeof declared === 'string' && Number(declared) > max) {
            fail(c, new AttemptFailure('invalid_response', 'PDP response is larger than maxResponseBytes'));
          }
        },
        onResponseData(c, chunk) {
          if (errorBody) {
            errorBody.size += chunk.length;
            if (errorBody.size > ERROR_BODY_MAX) endErrorBody(c, false);
            else errorBody.chunks.push(chunk);
            return;
          }
          size += chunk.length;
          if (size > max) {
            fail(c, new AttemptFailure('invalid_response', 'PDP response is larger than maxResponseBytes'));
          } else {
            chunks.push(chunk);
          }
        },
        onResponseEnd(c) {
          if (errorBody) {
            endErrorBody(c, true);
            return;
          }
          settle(undefined, {
            headers: resHeaders,
            body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size),
          });
        },
        onResponseError(_c, err) {
          if (errorBody) {
            clearTimeout(errorBody.timer);
            errorBody = undefined;
            settle(failure ?? statusFailure());
            return;
          }
          settle(failure ?? err);
        },
      };
      try {
        // `maxRedirections: 0` turns undici's redirect interceptor (and undici 6's built-in redirects)
        // off for this request, so a 3xx reaches the handler above and is `pdp_status`.
        const options: Dispatcher.DispatchOptions & { maxRedirections: 0 } = {
          origin: this.#origin,
          path,
          method: body === undefined ? 'GET' : 'POST',
          headers,
          body: body === undefined ? null : this.#owned ? body : oneShot(body, headers),
          maxRedirections: 0,
        };
        this.#dispatcher.dispatch(options, handler);
      } catch (err) {
        settle(err);
      }
    });
  }

  /** Destroys the client's own pool (in-flight requests fail); a caller's dispatcher is left alone. */
  async close(): Promise<void> {
    if (this.#owned && !this.#owned.destroyed) await this.#owned.destroy();
  }
}
