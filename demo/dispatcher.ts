/**
 * The agent's tool dispatcher: every tool is wrapped with `pep.guardTool`, so it runs only after the
 * PDP allowed the exact call and its permit verified; the tool itself then presents the permit to the
 * side-effecting service, which verifies it again and uses it up.
 * @module
 */
import {
  type GuardedTool,
  normalizeToolName,
  type Pep,
  type PolicyDecision,
  PolicyEnforcementError,
  toolMessage,
} from 'agent-pep';
import { callToolService, type ServiceAnswer } from './tool-service.js';

/** The service refused the call (its `code` is the PermitVerificationError code it answered). */
export class ToolServiceError extends Error {
  override readonly name = 'ToolServiceError';

  constructor(
    readonly code: string,
    readonly status: number,
    /** The (permitting) decision the call had. */
    readonly decision: PolicyDecision,
  ) {
    super(`the tool service refused the call (${code})`);
  }
}

/** What one dispatched call came to. */
export interface DispatchOutcome {
  /** The service performed the call. */
  executed: boolean;
  /** The decision the call got. */
  decision: PolicyDecision;
  /** What the model would see. */
  toolMessage: string;
  /** Set when the service refused (a PermitVerificationError code). */
  refusedBy?: string;
}

/** How a tool reaches the service. */
export type ServiceCall = (
  tool: string,
  args: Record<string, unknown>,
  permitId: string | undefined,
) => Promise<ServiceAnswer>;

/** A dispatcher of guarded tools. */
export interface Dispatcher {
  dispatch(name: string, args: Record<string, unknown>): Promise<DispatchOutcome>;
}

/**
 * Creates a dispatcher over a PEP client (configured with `permits`) and the tool service.
 * @param call - how a tool reaches the service; the default posts the args with the permit unchanged
 */
export function createDispatcher(pep: Pep, serviceUrl: string, call?: ServiceCall): Dispatcher {
  const reach: ServiceCall = call ?? ((tool, args, permitId) => callToolService(serviceUrl, tool, args, permitId));
  const tools = new Map<string, GuardedTool<{ decision: PolicyDecision }>>();

  function toolFor(name: string): GuardedTool<{ decision: PolicyDecision }> {
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
        return { executed: false, decision, toolMessage: toolMessage(decision, name) };
      }
      try {
        const { decision } = await toolFor(name)(args);
        return { executed: true, decision, toolMessage: `${name}: done` };
      } catch (error) {
        if (error instanceof PolicyEnforcementError) {
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
