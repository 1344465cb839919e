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
  /** The request id, when the request carried a valid one. */
  requestId?: string;
}

/** Where refusals go: `false` for nowhere, a function, or (default) a line on stderr. */
export type RefusalLogOption = false | ((refusal: RefusedRequest) => void);

/** Formats a refusal as one line. @internal */
export function formatRefusal(r: RefusedRequest): string {
  const id = r.requestId !== undefined ? ` ${r.requestId}` : '';
  return `agent-pep dev-pdp: refused ${r.method} ${r.route} ${r.status} ${r.code}${id}\n`;
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
