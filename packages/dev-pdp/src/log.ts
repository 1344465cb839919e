/**
 * The dev PDP's log of refused requests: one line per refusal with the status and the code, never
 * content, args, a permit or a key.
 * @packageDocumentation
 */

/** One refused request, as given to a `log` function. */
export interface RefusedRequest {
  /** The HTTP status answered. */
  status: number;
  /** The code of the `{ code, message }` body, such as `unknown_agent`. */
  code: string;
  /** The HTTP method. */
  method: string;
  /** The endpoint (a known route, or `(other)`); never a raw URL. */
  route: string;
  /**
   * For `(other)` (no such endpoint, 404): the path asked for, without the query, at most 200
   * characters, anything outside printable ASCII percent-encoded; so a PEP whose `pdpUrl` has a wrong
   * path shows what it asked for.
   */
  path?: string;
  /** The request id, when the request carried a valid one. */
  requestId?: string;
}

/** Where refusals go: `false` for nowhere, a function, or (default) a line on stderr. */
export type RefusalLogOption = false | ((refusal: RefusedRequest) => void);

/** Formats a refusal as one line. @internal */
export function formatRefusal(r: RefusedRequest): string {
  const id = r.requestId !== undefined ? ` ${r.requestId}` : '';
  const path = r.path !== undefined ? ` (path ${r.path})` : '';
  return `agent-pep dev-pdp: refused ${r.method} ${r.route}${path} ${r.status} ${r.code}${id}\n`;
}

/** Most characters of a refused path that are logged. @internal */
export const MAX_LOGGED_PATH = 200;

/**
 * A request path as it may be logged: printable ASCII but for spaces and `%`, anything else
 * percent-encoded (no control character reaches a log line), at most {@link MAX_LOGGED_PATH}
 * characters, marked `...` when cut. @internal
 */
export function loggablePath(path: string): string {
  let out = '';
  for (const ch of path) {
    const c = ch.codePointAt(0) ?? 0;
    if (c > 0x20 && c < 0x7f && ch !== '%') out += ch;
    else for (const byte of Buffer.from(ch, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    if (out.length > MAX_LOGGED_PATH) return `${out.slice(0, MAX_LOGGED_PATH)}...`;
  }
  return out;
}

/** The logger for an option; a function that throws is contained. @internal */
export function refusalLogger(option: RefusalLogOption | undefined): (refusal: RefusedRequest) => void {
  if (option === false) return () => {};
  const sink = option ?? ((r: RefusedRequest) => process.stderr.write(formatRefusal(r)));
  return (refusal) => {
    try {
      sink(Object.freeze({ ...refusal }));
    } catch {
      // a logger cannot change an answer
    }
  };
}
