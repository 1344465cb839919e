/** Raw JSON requests to a dev PDP, for tests that look at status, headers and bodies. */

/** A reply: status, headers and the parsed JSON body. */
export interface JsonReply {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

/** POSTs JSON (or `raw` bytes) to `url + path`; `content-type: application/json` unless overridden. */
export async function postJson(
  url: string,
  path: string,
  body: unknown,
  options: { headers?: Record<string, string>; raw?: string } = {},
): Promise<JsonReply> {
  const res = await fetch(url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...options.headers },
    body: options.raw ?? JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: JSON.parse(text) as Record<string, unknown> };
}
