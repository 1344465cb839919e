/**
 * The agent's tool dispatcher: every tool is wrapped with `pep.guardTool`, so it runs only after the
 * PDP allowed the exact call and its permit verified; the tool itself then presents the permit to the
 * side-effecting service, which verifies it again and uses it up.
 * @module
 */
import { normalizeToolName, PolicyBlockedError, PolicyEscalatedError } from 'agent-pep';
import { callToolService } from './tool-service.js';

/** The service refused the call (its `code` is the PermitVerificationError code it answered). */
export class ToolServiceError extends Error {
  /**
   * @param {string} code
   * @param {number} status
   * @param {import('agent-pep').PolicyDecision} decision - the (permitting) decision the call had
   */
  constructor(code, status, decision) {
    super(`the tool service refused the call (${code})`);
    this.name = 'ToolServiceError';
    this.code = code;
    this.status = status;
    this.decision = decision;
  }
}

/**
 * @typedef {object} DispatchOutcome
 * @property {boolean} executed - the service performed the call
 * @property {import('agent-pep').PolicyDecision} decision - the decision the call got
 * @property {string} toolMessage - what the model would see
 * @property {string} [refusedBy] - set when the service refused (a PermitVerificationError code)
 */

/**
 * Creates a dispatcher over a PEP client and the tool service.
 * @param {import('agent-pep').Pep} pep - configured with `permits`
 * @param {string} serviceUrl - the tool service's base URL
 * @param {(tool: string, args: Record<string, unknown>, permitId: string | undefined) => Promise<{ ok: boolean, status: number, error?: string }>} [call]
 *   how a tool reaches the service; the default posts the args with the permit unchanged
 * @returns {{ dispatch(name: string, args: Record<string, unknown>): Promise<DispatchOutcome> }}
 */
export function createDispatcher(pep, serviceUrl, call) {
  const reach = call ?? ((tool, args, permitId) => callToolService(serviceUrl, tool, args, permitId));
  /** @type {Map<string, import('agent-pep').GuardedTool<{ decision: import('agent-pep').PolicyDecision }>>} */
  const tools = new Map();

  /** @param {string} name */
  function toolFor(name) {
    let tool = tools.get(name);
    if (!tool) {
      tool = pep.guardTool(name, async (args, { permitId, decision }) => {
        const res = await reach(name, args, permitId);
        if (!res.ok) throw new ToolServiceError(res.error ?? 'service_error', res.status, decision);
        return { decision };
      });
      tools.set(name, tool);
    }
    return tool;
  }

  return {
    async dispatch(name, args) {
      try {
        normalizeToolName(name);
      } catch {
        // guardTool refuses such a name; the PEP answers it with a synthesized BLOCK (invalid_request).
        const decision = await pep.authorizeAction(name, args);
        return { executed: false, decision, toolMessage: `ERROR: Tool '${name}' denied by policy: invalid tool name` };
      }
      try {
        const { decision } = await toolFor(name)(args);
        return { executed: true, decision, toolMessage: `${name}: done` };
      } catch (error) {
        if (error instanceof PolicyBlockedError || error instanceof PolicyEscalatedError) {
          return { executed: false, decision: error.decision, toolMessage: error.toolMessage };
        }
        if (error instanceof ToolServiceError) {
          return {
            executed: false,
            decision: error.decision,
            toolMessage: `ERROR: Tool '${name}' refused by the service: ${error.code}`,
            refusedBy: error.code,
          };
        }
        throw error;
      }
    },
  };
}
