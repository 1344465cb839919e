/**
 * What both MCP guards share: the permit's `_meta` key, the tool-error result the model sees, and the
 * checks of the arguments that guard something. Internal to `agent-pep/mcp`.
 * @internal
 */

import type { FailClosedCode } from '../../decision.js';
import { isSessionId } from '../../internal/guards.js';
import { sessionOf } from '../../internal/session.js';
import type { Pep } from '../../pep.js';
import { enforcementOf, SESSION_META_KEY } from '../kit.js';

export { PERMIT_META_KEY, SESSION_META_KEY } from '../kit.js';

/** An MCP tool result as this adapter builds it (the SDK's `CallToolResult`, structurally). */
export interface ToolResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  isError?: boolean;
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

/** The refusals this adapter made (not a tool's own error results). */
export const refusals = new WeakSet<object>();

/** The tool-error result MCP clients show to the model. */
export function refusal(text: string): ToolResult {
  const result: ToolResult = { content: [{ type: 'text', text }], isError: true };
  refusals.add(result);
  return result;
}

/**
 * A refusal for a call the adapter itself failed closed on (no PDP decision to show): a synthesized BLOCK
 * made by the Pep's enforcement layer, so it reaches `onDecision` and telemetry like any other (CONTRACT
 * sections 8 and 16).
 */
export function failedClosed(pep: Pep, tool: string, code: FailClosedCode, message: string): ToolResult {
  return refusal(enforcementOf(pep, 'agent-pep/mcp').refuse({ stage: 'action', tool }, code, message).toolMessage);
}

/**
 * What a guarded server answers a `tools/call` it decides without a policy session (CONTRACT section 16):
 * how to send one, for a caller that has no agent-pep of its own (a bare MCP client). The same text is the
 * synthesized decision's message and follows the refusal text the caller sees; it names no args.
 * @param second - the name of the `session` option's second parameter on this route (`extra`, `httpRequest`)
 */
export function noSessionMessage(second: string): string {
  return (
    `the request names no policy session: send it in params._meta['${SESSION_META_KEY}'] ` +
    '(a client guarded with guardMcpClient does), or give the server guard the option ' +
    `{ session: (request, ${second}) => string }`
  );
}

/**
 * The refusal of a `tools/call` without a policy session: a synthesized BLOCK `invalid_request` observed
 * like any other, whose tool-error text says how to send a session ({@link noSessionMessage}).
 */
export function noSession(pep: Pep, tool: string, second: string): ToolResult {
  const message = noSessionMessage(second);
  const refused = enforcementOf(pep, 'agent-pep/mcp').refuse({ stage: 'action', tool }, 'invalid_request', message);
  return refusal(`${refused.toolMessage}. ${message.charAt(0).toUpperCase()}${message.slice(1)}`);
}

/** How a guarded server learns the session of a request (`guardMcpServer`'s `session` option). */
export type SessionOfRequest = (
  request: { method: string; params: Record<string, unknown> },
  extra: unknown,
) => unknown;

/**
 * The policy session of a request a guarded server received (CONTRACT section 16): the server's
 * `session` function's answer when it has one, else `params._meta['agent-pep/session']`; never the
 * transport's `Mcp-Session-Id`. That answer stands for the per-call option of `sessionOf` (the one
 * rule, internal/session.ts); the server's own PEP session never fills in for a missing one. Undefined
 * when there is none, or the function throws or answers no valid session id (the call is then refused).
 */
export function requestSession(
  fn: SessionOfRequest | undefined,
  method: string,
  params: Record<string, unknown>,
  extra: unknown,
): string | undefined {
  let named: unknown;
  try {
    named =
      fn === undefined
        ? isObject(params._meta)
          ? params._meta[SESSION_META_KEY]
          : undefined
        : fn({ method, params }, extra);
  } catch {
    return undefined;
  }
  const session = sessionOf({ call: named });
  return isSessionId(session) ? session : undefined;
}

/** An interceptor's substitute as a tool result: a result-shaped object as is, anything else as text. */
export function asToolResult(value: unknown): unknown {
  if (isObject(value) && Array.isArray(value.content)) return value;
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  return { content: [{ type: 'text', text }] };
}

/** `guardTool` throws a TypeError at creation when `permits` is neither configured nor explicitly off. */
export function assertGuardable(pep: Pep, scope: string): void {
  try {
    pep.guardTool('agent_pep_mcp', () => undefined);
  } catch (cause) {
    throw new TypeError(`${scope}: the Pep cannot guard tools (configure \`permits\`, or \`permits: false\`)`, {
      cause,
    });
  }
}

export function assertPep(pep: unknown, scope: string): asserts pep is Pep {
  if (!isObject(pep) || typeof pep.guardTool !== 'function' || typeof pep.authorizeAction !== 'function') {
    throw new TypeError(`${scope}: pep must be a Pep made by createPep`);
  }
}

/** JSON-RPC 2.0 error codes MCP uses (protocol constants: `ErrorCode` of both SDKs). */
export const JSONRPC_ERROR = { invalidRequest: -32600, methodNotFound: -32601 } as const;

/**
 * A JSON-RPC error (`code`, `message`), the SDK's `McpError` without needing the SDK: both stacks send a
 * thrown error's integer `code` and `message` as the JSON-RPC error of the response.
 */
export class McpProtocolError extends Error {
  /** The JSON-RPC error code ({@link JSONRPC_ERROR}). */
  readonly code: number;
  constructor(code: number, message: string) {
    super(`MCP error ${code}: ${message}`);
    this.name = 'McpError';
    this.code = code;
  }
}
