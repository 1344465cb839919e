/**
 * What both MCP guards share: the permit's `_meta` key, the tool-error result the model sees, and the
 * checks of the arguments that guard something. Internal to `agent-pep/mcp`.
 * @internal
 */
import { synthesizeBlock } from '../../decision.js';
import { toolMessage } from '../../errors.js';
/**
 * The `params._meta` key a guarded client puts the permit under, and a guarded server reads it from.
 * @remarks A server that does not use {@link guardMcpServer} can read it from `extra._meta` and verify it
 * with `createPermitVerifier` against the tool name and the arguments it received, before acting.
 * @example
 * ```ts
 * const permit = extra._meta?.[PERMIT_META_KEY];
 * if (typeof permit !== 'string') return { isError: true, content: [{ type: 'text', text: 'no permit' }] };
 * await verifier.verify(permit, { tool: 'refund_payment', args: receivedArgs });
 * ```
 */
export const PERMIT_META_KEY = 'agent-pep/permit';
export function isObject(v) {
    return typeof v === 'object' && v !== null;
}
/** The refusals this adapter made (not a tool's own error results). */
export const refusals = new WeakSet();
/** The tool-error result MCP clients show to the model. */
export function refusal(text) {
    const result = { content: [{ type: 'text', text }], isError: true };
    refusals.add(result);
    return result;
}
/** A refusal for a call the adapter itself failed closed on (no PDP decision to show). */
export function failedClosed(tool, code, message) {
    return refusal(toolMessage(synthesizeBlock('action', globalThis.crypto.randomUUID(), code, message, 0), tool));
}
/** A non-empty session id, else undefined. */
export function sessionOf(v) {
    return typeof v === 'string' && v !== '' ? v : undefined;
}
/** An interceptor's substitute as a tool result: a result-shaped object as is, anything else as text. */
export function asToolResult(value) {
    if (isObject(value) && Array.isArray(value.content))
        return value;
    const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
    return { content: [{ type: 'text', text }] };
}
/** `guardTool` throws a TypeError at creation when `permits` is neither configured nor explicitly off. */
export function assertGuardable(pep, scope) {
    try {
        pep.guardTool('agent_pep_mcp', () => undefined);
    }
    catch (cause) {
        throw new TypeError(`${scope}: the Pep cannot guard tools (configure \`permits\`, or \`permits: false\`)`, {
            cause,
        });
    }
}
export function assertPep(pep, scope) {
    if (!isObject(pep) || typeof pep.guardTool !== 'function' || typeof pep.authorizeAction !== 'function') {
        throw new TypeError(`${scope}: pep must be a Pep made by createPep`);
    }
}
