/**
 * `agent-pep/mcp`: the Model Context Protocol adapter for `@modelcontextprotocol/sdk` 1.x and the 2.x
 * packages `@modelcontextprotocol/server` / `client` (docs/adapters.md, docs/mcp.md). Both are optional
 * peers: this entry loads with either alone, and the 1.x SDK is loaded (by `mcp/sdk-v1.ts`) only when a
 * 1.x object is guarded.
 *
 * - {@link guardMcpServer}: every tool of an `McpServer` (served from the handles given in `{ tools }`) runs
 *   its callback only after an ALLOW or WARN (`pep.guardTool`), or, with `{ verifier }`, only after the permit
 *   the client sent in `params._meta['agent-pep/permit']` verified (the PDP is not asked again); no member of
 *   an SDK object is replaced.
 * - {@link guardMcpClient}: every `tools/call` a client sends is authorized before it leaves, carries
 *   its permit and session in `_meta`, and its result is checked at `context_egress` before the caller
 *   sees it. Given the client's `Transport`, it returns a new `Transport` to pass to `client.connect`,
 *   and patches nothing.
 *
 * A blocked or held call answers `{ isError: true, content: [{ type: 'text', text: toolMessage }] }`, the
 * tool-error form MCP clients show to the model. MCP 1.x has no human-approval flow for `tools/call`, so
 * ESCALATE is a hold the model is told about (`ERROR: Tool '<name>' is held for human review: <reason>`).
 * @packageDocumentation
 * @module adapters/mcp
 */
export type { GuardedMcpTransport, GuardMcpClientOptions, McpTransportLike } from './mcp/client.js';
export { guardMcpClient } from './mcp/client.js';
export { PERMIT_META_KEY, SESSION_META_KEY } from './mcp/common.js';
export type { McpHttpHandlerLike } from './mcp/handler.js';
export type { McpPinSet } from './mcp/pins.js';
export type { GuardMcpServerOptions, McpServerV1Like, McpServerV2Like } from './mcp/server.js';
export { guardMcpServer } from './mcp/server.js';
export type { McpToolHandlersV2, McpToolHandleV2 } from './mcp/server-v2.js';
