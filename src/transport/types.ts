/**
 * What the client's exchange (`core/exchange.ts`) needs of a transport, whichever sends the request:
 * undici (`http.ts`, with node:http beneath it for the hook) or `fetch` (`fetch.ts`). Every rule of
 * docs/fail-closed.md that concerns the wire (status, redirects, content type and coding, the byte
 * cap, the deadline) is each transport's to keep; the answer it hands on is whole and checked.
 * @internal
 */
import type { AbortLike } from '../internal/abort.js';
import type { AttemptFailure } from '../internal/failure.js';

/**
 * Who hears how one attempt ended ({@link Transport.start}): exactly one of the two is called,
 * once, often from inside the transport's handler, so neither may throw.
 */
export interface AttemptReceiver {
  /** A whole, status-200, JSON, uncoded, size-checked response. */
  onResponse(res: HttpResponse): void;
  /** The attempt failed: an {@link AttemptFailure}, classified. */
  onFailure(err: AttemptFailure): void;
}

/** A whole, status-200, size-checked response. */
export interface HttpResponse {
  /** Response headers, lower-case names; a header sent more than once is an array (undici) or joined (fetch). */
  headers: Record<string, string | string[] | undefined>;
  body: Uint8Array;
}

/** One client's way to the PDP. */
export interface Transport {
  /**
   * POSTs `body` once (a GET when `body` is undefined) to `path`. Resolves only with a status-200,
   * JSON, uncoded, size-checked, whole body.
   * @throws AttemptFailure classified (code and facts)
   */
  send(
    body: string | undefined,
    headers: Record<string, string>,
    signal: AbortLike,
    path?: string,
  ): Promise<HttpResponse>;
  /** {@link Transport.send} without a promise: `receiver` hears how the attempt ended, once. Never throws. */
  start(
    body: string | undefined,
    headers: Record<string, string>,
    signal: AbortLike,
    path: string,
    receiver: AttemptReceiver,
  ): void;
  /** Releases the transport's connections; requests in flight fail. */
  close(): Promise<void>;
}
