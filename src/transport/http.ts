/**
 * The HTTP transport: the only undici import. One pool per client with keep-alive, no redirects,
 * a byte cap on the body, and every body consumed or destroyed so no socket leaks.
 * @internal
 */
import { type Dispatcher, Pool } from 'undici';
import { AttemptFailure } from '../internal/failure.js';
import type { AbortLike } from './abort.js';

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

/** Why an in-flight attempt was aborted; read when undici reports the abort. */
export type AbortCause = 'deadline' | 'attempt_timeout' | 'caller' | 'closed';

/** Signal reason carrying an {@link AbortCause}. */
export class AbortReason extends Error {
  override readonly name = 'AbortReason';
  constructor(readonly cause_: AbortCause) {
    super(`aborted: ${cause_}`);
  }
}

const RETRYABLE_STATUS = new Set([408, 429, 502, 503, 504]);

const UNREACHABLE_RETRYABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'ETIMEDOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
]);
const TIMEOUT_RETRYABLE = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
const CLOSED = new Set(['UND_ERR_CLOSED', 'UND_ERR_DESTROYED', 'ERR_INVALID_STATE']);

/** Parses `Retry-After` (delta-seconds or an HTTP-date, RFC 9110 section 10.2.3) into milliseconds. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  if (typeof value !== 'string') return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  // An HTTP-date names its day and month; anything else (e.g. "-1", which Date.parse reads as a year) is ignored.
  if (!/^[A-Za-z]{3},? /.test(v)) return undefined;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/** Classifies anything undici (or a signal) threw into an {@link AttemptFailure}. */
export function classifyError(err: unknown, signal: Pick<AbortLike, 'aborted' | 'reason'>): AttemptFailure {
  if (err instanceof AttemptFailure) return err;
  if (signal.aborted) {
    const reason = signal.reason instanceof AbortReason ? signal.reason.cause_ : 'caller';
    switch (reason) {
      case 'attempt_timeout':
        return new AttemptFailure('pdp_timeout', 'PDP attempt timed out', true, undefined, undefined, { cause: err });
      case 'deadline':
        return new AttemptFailure('pdp_timeout', 'PDP decision deadline passed', false, undefined, undefined, {
          cause: err,
        });
      case 'closed':
        return new AttemptFailure('pdp_unreachable', 'client closed', false, undefined, undefined, { cause: err });
      default:
        return new AttemptFailure('aborted', 'aborted by the caller', false, undefined, undefined, { cause: err });
    }
  }
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    if (UNREACHABLE_RETRYABLE.has(code)) {
      return new AttemptFailure('pdp_unreachable', `PDP unreachable (${code})`, true, undefined, undefined, {
        cause: err,
      });
    }
    if (TIMEOUT_RETRYABLE.has(code)) {
      return new AttemptFailure('pdp_timeout', `PDP timed out (${code})`, true, undefined, undefined, { cause: err });
    }
    if (CLOSED.has(code)) {
      return new AttemptFailure('pdp_unreachable', 'connection pool closed', false, undefined, undefined, {
        cause: err,
      });
    }
    if (code.startsWith('HPE_') || code === 'UND_ERR_INFO' || code === 'UND_ERR_NOT_SUPPORTED') {
      return new AttemptFailure(
        'invalid_response',
        `PDP sent a malformed HTTP response (${code})`,
        false,
        undefined,
        undefined,
        {
          cause: err,
        },
      );
    }
  }
  return new AttemptFailure('pdp_unreachable', 'PDP request failed', false, undefined, undefined, { cause: err });
}

const JSON_MEDIA_TYPE = /^application\/json[ \t]*(;|$)/i;
const CHARSET = /;[ \t]*charset[ \t]*=[ \t]*"?([^";\s]+)"?/i;

/**
 * Checks the response content type: `application/json`, with an optional `charset` that must be UTF-8.
 * @throws AttemptFailure `invalid_response`
 */
export function checkContentType(value: string | string[] | undefined): void {
  if (typeof value !== 'string' || !JSON_MEDIA_TYPE.test(value)) {
    throw new AttemptFailure('invalid_response', 'PDP response is not application/json');
  }
  const charset = CHARSET.exec(value)?.[1];
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
    throw new AttemptFailure('invalid_response', 'PDP response charset is not UTF-8');
  }
}

/** Sends one attempt and reads the whole response. */
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
   * POSTs `body` once. Resolves only with a status-200, JSON, size-checked, whole body.
   *
   * Uses undici's `dispatch` with a handler rather than `request`: no body stream, no async iterator
   * and no `AbortSignal` listener inside undici per attempt (together about a third of the client's
   * CPU per decision on loopback, see BENCHMARKS.md). A non-200 settles on its status line and headers,
   * and its connection is dropped, never drained.
   * @throws AttemptFailure classified (status, retryability, Retry-After)
   */
  send(body: string, headers: Record<string, string>, signal: AbortLike): Promise<HttpResponse> {
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
      const statusFailure = (): AttemptFailure =>
        new AttemptFailure(
          'pdp_status',
          `PDP answered HTTP ${status}`,
          RETRYABLE_STATUS.has(status),
          status,
          parseRetryAfter(resHeaders['retry-after']),
        );
      if (signal.aborted) {
        settle(signal.reason);
        return;
      }
      signal.addEventListener('abort', onAbort);
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart(c) {
          controller = c;
          if (signal.aborted) c.abort(signal.reason as Error);
        },
        onResponseStart(c, statusCode, h) {
          if (statusCode < 200) return; // informational (RFC 9110 section 15.2): wait for the final response
          status = statusCode;
          resHeaders = h as Record<string, string | string[] | undefined>;
          if (statusCode !== 200) {
            // Decided by the status alone: settle now and drop the connection, so a non-200 whose
            // body hangs or never ends cannot hold the attempt (or a socket) until the deadline.
            const f = statusFailure();
            settle(f);
            fail(c, f);
            return;
          }
          try {
            checkContentType(resHeaders['content-type']);
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
          size += chunk.length;
          if (size > max) {
            fail(c, new AttemptFailure('invalid_response', 'PDP response is larger than maxResponseBytes'));
          } else {
            chunks.push(chunk);
          }
        },
        onResponseEnd() {
          settle(undefined, {
            headers: resHeaders,
            body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size),
          });
        },
        onResponseError(_c, err) {
          settle(failure ?? err);
        },
      };
      try {
        this.#dispatcher.dispatch({ origin: this.#origin, path: this.#path, method: 'POST', headers, body }, handler);
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
