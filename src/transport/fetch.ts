/**
 * The `fetch` transport (docs/runtimes.md): the runtime's own `fetch`, for Cloudflare Workers (workerd),
 * Vercel Edge, Deno and Bun, where undici's sockets are not to be had; chosen by `createPep` where
 * undici cannot load, or with `transport: 'fetch'`. Every rule of docs/fail-closed.md that concerns
 * the wire holds as on undici:
 * - one request an attempt, with `redirect: 'manual'`: a 3xx (or an opaque redirect) is `pdp_status`,
 *   and nothing is sent to its `location`;
 * - the deadline and the caller's abort reach the request through a fresh `AbortSignal` per attempt;
 * - status, content type (one `application/json`, at most one `charset`, that one `utf-8`) and content
 *   coding are checked on the headers, before a byte of the body is read: `fetch` would decode a
 *   gzip body on its own, so a `Content-Encoding` other than `identity` is refused, never decoded;
 * - the body is read as a stream and given up (its stream cancelled) once it passes `maxResponseBytes`;
 * - anything else it throws is classified as a fail-closed code; a synthesized BLOCK results.
 * It needs nothing but `fetch`, `AbortController`, `TextDecoder` and streams: no Node built-in.
 * @internal
 */
import { ABORT_CAUSES, type AbortLike, AbortReason } from '../internal/abort.js';
import { AttemptFailure } from '../internal/failure.js';
import { readCapped } from '../internal/read-capped.js';
import { checkContentType, checkNoContentCoding } from './headers.js';
import {
  classifyError,
  ERROR_BODY_GRACE_MS,
  ERROR_BODY_MAX,
  errorCodeOf,
  mayCarryErrorCode,
  statusFailure,
} from './http.js';
import type { AttemptReceiver, HttpResponse, Transport } from './types.js';

/** The `fetch` a transport calls: the global one, or one given (tests, a runtime's binding). */
export type FetchFunction = (input: string, init: RequestInit) => Promise<Response>;

/** Settings of a {@link FetchTransport}. */
export interface FetchTransportOptions {
  origin: string;
  path: string;
  maxResponseBytes: number;
  /** @defaultValue `globalThis.fetch` */
  fetch?: FetchFunction | undefined;
}

/** The error code of a `fetch` that failed with no code of its own to tell (a network error): retried as a reset. */
export const FETCH_FAILED = 'FETCH_FAILED';

type ResponseHeaders = HttpResponse['headers'];

function invalid(message: string): AttemptFailure {
  return new AttemptFailure('invalid_response', message);
}

/**
 * Classifies what a `fetch` (or its body) threw: the abort cause when the attempt's signal fired;
 * Node's fetch (undici) gives its error's `code` as `cause.code` (`ECONNREFUSED`, `HPE_*`), classified
 * as on the undici transport; any other runtime's network error is {@link FETCH_FAILED}.
 */
export function classifyFetchError(
  err: unknown,
  signal: Pick<AbortLike, 'aborted' | 'reason'>,
  where?: string,
): AttemptFailure {
  if (err instanceof AttemptFailure || signal.aborted) return classifyError(err, signal);
  // `close()` aborted this request: fetch rejects with the reason it was aborted with.
  if (err instanceof AbortReason) return classifyError(err, { aborted: true, reason: err });
  const cause = (err as { cause?: unknown } | null)?.cause;
  if (typeof (cause as { code?: unknown } | null)?.code === 'string') return classifyError(cause, signal, where);
  if (typeof (err as { code?: unknown } | null)?.code === 'string') return classifyError(err, signal, where);
  return new AttemptFailure('pdp_unreachable', 'PDP request failed', { errorCode: FETCH_FAILED }, { cause: err });
}

/** The response headers as the checks read them: lower-case names, a repeated header joined by `, ` (Fetch). */
function headersOf(res: Response): ResponseHeaders {
  const out: ResponseHeaders = Object.create(null) as ResponseHeaders;
  res.headers.forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

/** Cancels a body no one will read (its connection is then not reused mid-body). Never throws. */
function discard(res: Response): void {
  try {
    res.body?.cancel().catch(() => {});
  } catch {
    // a body already locked or gone: nothing to cancel
  }
}

/**
 * Reads `res`'s body whole, at most `max` bytes: past that the stream is cancelled and the attempt is
 * `invalid_response`. `onReader` is given the reader, so that an abort can cancel it too.
 */
async function readBody(
  res: Response,
  max: number,
  onReader: (r: ReadableStreamDefaultReader<Uint8Array>) => void,
): Promise<Uint8Array> {
  const body = await readCapped(res.body, max, onReader);
  if (body === undefined) throw invalid('PDP response is larger than maxResponseBytes');
  return body;
}

/** A non-200's short JSON body, read for its error `code` only, for at most ERROR_BODY_GRACE_MS. */
async function errorCodeWithin(res: Response, headers: ResponseHeaders): Promise<string | undefined> {
  if (!mayCarryErrorCode(headers) || res.body === null) {
    discard(res);
    return undefined;
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ERROR_BODY_GRACE_MS);
  });
  const read = readBody(res, ERROR_BODY_MAX, (r) => {
    reader = r;
  }).then(errorCodeOf, () => undefined);
  try {
    return await Promise.race([read, late]);
  } finally {
    clearTimeout(timer);
    reader?.cancel().catch(() => {});
  }
}

/** The transport on `fetch`. One `AbortController` an attempt; `close()` aborts those in flight. */
export class FetchTransport implements Transport {
  readonly #fetch: FetchFunction;
  readonly #origin: string;
  readonly #path: string;
  readonly #max: number;
  readonly #inflight = new Set<AbortController>();
  #closed = false;

  /** @throws TypeError when no `fetch` is given and the runtime has none */
  constructor(options: FetchTransportOptions) {
    this.#origin = options.origin;
    this.#path = options.path;
    this.#max = options.maxResponseBytes;
    const f = options.fetch ?? (globalThis as { fetch?: FetchFunction }).fetch;
    if (typeof f !== 'function') throw new TypeError('this runtime has no fetch');
    // The global `fetch` is called unbound (workerd refuses a `this` other than the global).
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  }

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

  start(
    body: string | undefined,
    headers: Record<string, string>,
    signal: AbortLike,
    path: string,
    receiver: AttemptReceiver,
  ): void {
    this.#attempt(body, headers, signal, path).then(
      (res) => receiver.onResponse(res),
      (err: unknown) => receiver.onFailure(classifyFetchError(err, signal, `${this.#origin}${path}`)),
    );
  }

  /** One request, checked: resolves with a whole, status-200, JSON, uncoded, size-checked body. */
  async #attempt(
    body: string | undefined,
    headers: Record<string, string>,
    signal: AbortLike,
    path: string,
  ): Promise<HttpResponse> {
    if (this.#closed) throw new AttemptFailure('pdp_unreachable', ABORT_CAUSES.closed.message);
    if (signal.aborted) throw signal.reason;
    const ctrl = new AbortController();
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
    const onAbort = (): void => {
      ctrl.abort(signal.reason);
      reader?.cancel(signal.reason).catch(() => {});
    };
    signal.addEventListener('abort', onAbort);
    this.#inflight.add(ctrl);
    try {
      const res = await this.#fetch(this.#origin + path, {
        method: body === undefined ? 'GET' : 'POST',
        headers,
        ...(body === undefined ? {} : { body }),
        redirect: 'manual',
        signal: ctrl.signal,
      });
      const checked = this.#check(res, path);
      if (checked instanceof Promise) throw await checked;
      return {
        headers: checked,
        body: await readBody(res, this.#max, (r) => {
          reader = r;
        }),
      };
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.#inflight.delete(ctrl);
    }
  }

  /**
   * The status and header checks, before the body is read: the headers when they pass; else the
   * failure (a promise of it for a non-200, whose short JSON body may name an error code). A body
   * that is refused is cancelled, never read.
   * @throws AttemptFailure `invalid_response` for a refused content type, coding or declared length
   */
  #check(res: Response, path: string): ResponseHeaders | Promise<AttemptFailure> {
    if (res.type === 'opaqueredirect' || (res.status >= 300 && res.status < 400)) {
      discard(res);
      const status = res.status >= 300 ? res.status : undefined;
      throw new AttemptFailure('pdp_status', 'PDP redirected; redirects are never followed', { status });
    }
    const headers = headersOf(res);
    if (res.status !== 200) {
      return errorCodeWithin(res, headers).then((code) =>
        statusFailure(res.status, code, `${this.#origin}${path}`, headers['retry-after']),
      );
    }
    try {
      checkContentType(headers['content-type']);
      checkNoContentCoding(headers);
      const declared = headers['content-length'];
      if (typeof declared === 'string' && Number(declared) > this.#max) {
        throw invalid('PDP response is larger than maxResponseBytes');
      }
    } catch (err) {
      discard(res);
      throw err;
    }
    return headers;
  }

  /** Aborts every request in flight (they fail `pdp_unreachable`); later attempts fail at once. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const ctrl of this.#inflight) ctrl.abort(new AbortReason('closed'));
    this.#inflight.clear();
  }
}
