// WIP: the client (issue 2) is being written.
import type { PolicyDecision, TextStage } from './decision.js';
import type { CallOptions, PepOptions } from './options.js';

export interface ToolExecutionContext { permitId: string | undefined; decision: PolicyDecision; signal: AbortSignal | undefined }
export type GuardedTool<R> = (args: Record<string, unknown>, opts?: CallOptions) => Promise<R>;
export interface Pep {
  authorizeAction(tool: string, args: Record<string, unknown>, opts?: CallOptions): Promise<PolicyDecision>;
  checkInput(content: string, opts?: CallOptions): Promise<PolicyDecision>;
  checkContextEgress(content: string, opts?: CallOptions): Promise<PolicyDecision>;
  checkOutput(content: string, opts?: CallOptions): Promise<PolicyDecision>;
  checkDelivery(content: string, opts?: CallOptions): Promise<PolicyDecision>;
  guardTool<R>(name: string, execute: (args: Record<string, unknown>, ctx: ToolExecutionContext) => R | Promise<R>): GuardedTool<R>;
  guardText(stage: TextStage, content: string, opts?: CallOptions): Promise<string>;
  withSession(session: string): Pep;
  close(): Promise<void>;
}
export function createPep(_options: PepOptions): Pep {
  throw new Error('not implemented');
}
