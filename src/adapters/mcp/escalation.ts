/**
 * ESCALATE at MCP revision 2026-07-28 (CONTRACT section 16): a held call is answered with an
 * `InputRequiredResult` asking the client for an approval (an elicitation with the held text), whose
 * `requestState` the guard signs (`request-state.ts`); the client's retry echoes the state and is decided by
 * the PDP again. Shared by the `createMcpHandler` guard and the `McpServer` route. Internal to `agent-pep/mcp`.
 * @internal
 */
import type { PolicyEnforcementError } from '../../errors.js';
import { isObject } from './common.js';
import type { RequestStates, StateClaims } from './request-state.js';

/** The `_meta` key in which revision 2026-07-28 carries the protocol revision on every request. */
export const PROTOCOL_VERSION_META = 'io.modelcontextprotocol/protocolVersion';

/** The `_meta` key in which revision 2026-07-28 carries the client's capabilities on every request. */
export const CLIENT_CAPABILITIES_META = 'io.modelcontextprotocol/clientCapabilities';

/** Whether a protocol revision (`YYYY-MM-DD`) has multi-round-trip requests (2026-07-28 and later). */
export function isModernRevision(version: unknown): boolean {
  return typeof version === 'string' && version >= '2026-07-28';
}

/**
 * Whether the client's capabilities declare form elicitation (`elicitation: {}` or `{ form }`), so that an
 * `InputRequiredResult` asking for one can be answered: a client that declared none would fail the call
 * (the 2.x SDK's `CAPABILITY_NOT_SUPPORTED`), so it gets the hold text instead.
 */
export function declaresElicitation(capabilities: unknown): boolean {
  const elicitation = isObject(capabilities) ? capabilities.elicitation : undefined;
  return isObject(elicitation) && (Object.keys(elicitation).length === 0 || 'form' in elicitation);
}

/**
 * The `InputRequiredResult` a held call is answered with, or undefined when the decision is not an ESCALATE
 * with an escalation id (a BLOCK, a synthesized refusal): then the refusal's text is the answer.
 * @param err - the refusal of `pep.guardTool`
 * @param states - signs the `requestState`
 * @param bound - what the state binds besides the escalation id: the tool, the hash of the args decided, the session
 */
export function approvalRequest(
  err: PolicyEnforcementError,
  states: RequestStates,
  bound: Omit<StateClaims, 'escalationId'>,
): Record<string, unknown> | undefined {
  const escalationId = err.decision.escalationId;
  if (err.decision.verdict !== 'ESCALATE' || escalationId === undefined) return undefined;
  return {
    resultType: 'input_required',
    inputRequests: {
      'agent-pep/approval': {
        method: 'elicitation/create',
        params: { message: err.toolMessage, requestedSchema: { type: 'object', properties: {} } },
      },
    },
    requestState: states.sign({ ...bound, escalationId }),
  };
}
