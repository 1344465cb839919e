/**
 * `guardMcpClient(pep, transport)`: every `tools/call` an MCP client (1.x or 2.x) sends through the
 * transport returned is decided before it leaves, carries its permit and session in `_meta`, and its result
 * is checked at `context_egress`. On the public `Transport` seam: no member of the `Client` or of the
 * transport given is patched (CONTRACT section 16).
 * @internal
 */
import type { Pep } from '../../pep.js';
import { type GuardMcpClientOptions, readClientOptions } from './client-options.js';
import {
  type GuardedMcpTransport,
  guardClientTransport,
  isMcpTransport,
  type McpTransportLike,
} from './client-transport.js';
import { assertPep, isObject } from './common.js';

export type { GuardMcpClientOptions } from './client-options.js';
export type { GuardedMcpTransport, McpTransportLike } from './client-transport.js';

/**
 * Guards the `tools/call` requests an MCP client sends: each is authorized by the PDP before it leaves
 * (`pep.guardTool`: interceptors, the decision, the permit verified), and sent only after an ALLOW or WARN,
 * with the PDP's `transformedArgs` on WARN, the permit in `params._meta['agent-pep/permit']` (where a
 * server guarded with `{ verifier }` checks it) and the session in `params._meta['agent-pep/session']`.
 * The result is then checked at `context_egress` with the tool's name, and `tools/list` answers are
 * filtered to what the session may see (`hideBlocked`, `pin`; docs/visibility.md).
 *
 * Give it the **transport** the client would connect to, and connect to the one it returns:
 * `await client.connect(guardMcpClient(pep, transport, opts))`. The new `Transport` stands between the
 * `Client` and the transport (stdio, Streamable HTTP, SSE, in-memory, your own) at the JSON-RPC level, for
 * `@modelcontextprotocol/sdk` 1.x and `@modelcontextprotocol/client` 2.x alike, every protocol revision
 * (2026-07-28 included); it patches no member of any SDK object, and decides every `tools/call` whatever
 * sent it (`callTool`, `request`, …). A `Client` given instead is a `TypeError` (earlier releases wrapped
 * its methods): guard its transport.
 *
 * @param pep - the client that decides (`createPep`), with `permits` configured (or `permits: false`,
 *   which sends no permit). Session: `opts.session`, else the Pep's own; nothing the server sends
 *   (`Mcp-Session-Id`, a response's `_meta`, a notification) changes it (CONTRACT section 16).
 * @param transport - a `Transport` (`start`, `send`, `close`), not yet started
 * @param opts - `{ checkResult?: boolean = true, hideBlocked?: boolean = true, pin?: true | McpPinSet,
 *   allowNew?: boolean = false, session?: string }` (see {@link GuardMcpClientOptions})
 * @returns a new {@link GuardedMcpTransport} (with `pepPins()`) to pass to `client.connect`
 * @throws TypeError when `pep` is not a Pep or cannot guard tools (configure `permits`, or `permits:
 *   false`); when `transport` is a `Client` (guard its transport instead) or not a `Transport`, or is
 *   already guarded (`err.option` undefined); or when `opts` has an unknown or bad key (`err.option`
 *   names it: `opts`, `checkResult`, `hideBlocked`, `pin`, `allowNew`, `session`)
 * @remarks Fails closed: a blocked or held call is never sent; the `Client` receives for it the result
 * `{ isError: true, content: [{ type: 'text', text: toolMessage }] }` (with `resultType: 'complete'` on
 * 2026-07-28), the form the host shows to the model; so does a result the PDP blocks at `context_egress`
 * (withheld) and any error of the adapter itself; every refusal reaches `onDecision` and telemetry.
 * ESCALATE is a hold the model is told about. On a WARN of the result, its text items are replaced by
 * the PDP's text and `structuredContent` is dropped (it would carry what the PDP redacted); for a tool that
 * lists an `outputSchema` the result is then marked `isError` (both SDKs' `callTool` refuse it otherwise).
 * Images and other non-text items are not checked. Task-augmented `tools/call` requests are refused with
 * JSON-RPC's invalid-request error (-32600), since their results would escape the check. An answer from
 * the server to a request id it was never sent is dropped; a `notifications/cancelled` (or the 2.x
 * per-request signal) of a call still being decided, or `close()`, means it is never sent; errors of the
 * transport or the server reach the `Client` as they would unguarded.
 * @example
 * ```ts
 * const client = new Client({ name: 'support-agent', version: '1.0.0' });
 * await client.connect(guardMcpClient(pep, new StreamableHTTPClientTransport(new URL(url))));
 * const result = await client.callTool({ name: 'refund_payment', arguments: { orderId: 'ord_1842', amount: 129 } });
 * // result.isError with the toolMessage when the PDP blocked or held the call: it was never sent.
 * ```
 */
export function guardMcpClient(
  pep: Pep,
  transport: McpTransportLike,
  opts?: GuardMcpClientOptions,
): GuardedMcpTransport {
  const scope = 'guardMcpClient';
  assertPep(pep, scope);
  const given: unknown = transport;
  if (isObject(given) && typeof given.callTool === 'function') {
    throw new TypeError(
      `${scope}: guard the transport instead of the Client: \`await client.connect(guardMcpClient(pep, transport))\``,
    );
  }
  const read = readClientOptions(scope, opts);
  if (isMcpTransport(given)) return guardClientTransport(pep, given, read, scope);
  throw new TypeError(`${scope}: expected a Transport (start, send, close) of @modelcontextprotocol/sdk 1.x or 2.x`);
}
