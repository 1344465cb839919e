/**
 * `agent-pep/claude-agent-sdk`: the Claude Agent SDK adapter (docs/adapters.md). `pepCanUseTool`
 * is the SDK's permission callback (action stage); `pepHooks` are its in-process hooks: PreToolUse
 * (action), UserPromptSubmit (input) and PostToolUse (context_egress, with the tool name). Both decide
 * through a {@link Pep}, so deadlines, fail-closed codes, permits, interceptors and observers apply.
 * The SDK is imported for its types only; this module checks at load that it is installed.
 * @packageDocumentation
 */
import { createRequire } from 'node:module';
import type {
  CanUseTool,
  HookCallback,
  HookCallbackMatcher,
  HookEvent,
  HookInput,
  PermissionResult,
  SyncHookJSONOutput,
} from '@anthropic-ai/claude-agent-sdk';
import { type PolicyDecision, synthesizeBlock } from '../decision.js';
import { PolicyEnforcementError, PolicyEscalatedError, toolMessage } from '../errors.js';
import { answerFor, readHookEvent, withheld } from '../hooks/wire.js';
import type { Pep } from '../pep.js';

const PACKAGE = '@anthropic-ai/claude-agent-sdk';
try {
  createRequire(import.meta.url).resolve(PACKAGE);
} catch {
  throw new Error(`agent-pep/claude-agent-sdk needs the package ${PACKAGE}: npm install ${PACKAGE}`);
}

/** The call a host approver is asked about (an ESCALATE of the PDP). */
export interface ApprovalRequest {
  /** The tool name as the SDK knows it (e.g. `Bash`, `mcp__payments__refund`). */
  tool: string;
  /** The tool input the model proposed. */
  input: Record<string, unknown>;
  /** The review the PDP holds the call for, when it gave one. */
  escalationId: string | undefined;
  /** The PDP's reason. */
  reason: string | undefined;
  /** The SDK's tool use id. */
  toolUseID: string;
  /** Fires when the SDK aborts the permission request. */
  signal: AbortSignal;
}

/** A host's own approval step for held calls: a person, a ticket, a reviewer bot. */
export interface Approver {
  /**
   * Resolves `true` to approve the held call, `false` to refuse it. A yes is followed by a fresh PDP
   * decision on the identical call: the tool runs only if that one is an ALLOW or WARN whose permit verifies.
   * A throw or a rejection is a refusal.
   */
  approve(call: ApprovalRequest): boolean | Promise<boolean>;
}

/** Options of {@link pepCanUseTool}. */
export interface PepCanUseToolOptions {
  /** Asked on ESCALATE; without one an ESCALATE is a deny with the held text. @defaultValue undefined */
  approver?: Approver;
}

/** Options of {@link pepHooks}. */
export interface PepHooksOptions {
  /**
   * What a PreToolUse ESCALATE answers: `'deny'` (the held text) or `'ask'`, which hands the call to the
   * SDK's permission flow, where `canUseTool` should be {@link pepCanUseTool} (it asks the PDP again).
   * @defaultValue 'deny'
   */
  escalate?: 'deny' | 'ask';
}

/** Thrown by the tool body handed to `guardTool`: carries the verified args out without running anything. */
class Verified {
  constructor(readonly args: Record<string, unknown>) {}
}

type ToolOutcome =
  | { kind: 'allow'; args: Record<string, unknown> }
  | { kind: 'deny'; message: string }
  | { kind: 'held'; decision: PolicyDecision; message: string };

function failedMessage(tool: string): string {
  return toolMessage(synthesizeBlock('action', '', 'invalid_request', 'adapter error', 0), tool);
}

function substituteText(result: unknown): string {
  if (typeof result === 'string') return result;
  try {
    return JSON.stringify(result) ?? '';
  } catch {
    return '';
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * One action decision through `guardTool`, so the permit is verified against the args that will run
 * (docs/api.md); the body only hands those args back. Never rejects.
 */
async function decideTool(pep: Pep, tool: string, input: unknown, signal?: AbortSignal): Promise<ToolOutcome> {
  try {
    if (!isPlainObject(input)) return { kind: 'deny', message: failedMessage(tool) };
    const guarded = pep.guardTool(tool, (args) => {
      throw new Verified(args);
    });
    const result = await guarded(input, signal ? { signal } : undefined);
    // Only an interceptor's substitute resolves: its result is what the model sees; the tool never runs.
    return { kind: 'deny', message: substituteText(result) };
  } catch (error) {
    if (error instanceof Verified) return { kind: 'allow', args: error.args };
    if (error instanceof PolicyEscalatedError)
      return { kind: 'held', decision: error.decision, message: error.toolMessage };
    if (error instanceof PolicyEnforcementError) return { kind: 'deny', message: error.toolMessage };
    return { kind: 'deny', message: failedMessage(tool) };
  }
}

/**
 * A `canUseTool` callback for `query({ options })` that lets a tool run only after the PDP allows it.
 *
 * @param pep - the client; it must have `permits` configured (or `permits: false`), as for `guardTool`.
 *   Calls are decided in its session: bind it with `pep.withSession(id)` to the `sessionId` you give `query`.
 * @param opts - `{ approver? }`: asked on ESCALATE (see {@link Approver})
 * @returns a `CanUseTool`: `{ behavior: 'allow', updatedInput }` on ALLOW or WARN (`updatedInput` is the args
 *   the permit binds: `transformedArgs` on WARN), else `{ behavior: 'deny', message }` with the `toolMessage`
 * @throws TypeError when `pep` has no `permits` option (pass `permits: false` to skip verification explicitly)
 * @remarks Fails closed: a PDP that is down or slow, a permit that does not verify, an approver that throws and
 * any error of the adapter give a deny, never an allow. `canUseTool` is the SDK's approval callback, so an
 * ESCALATE is a deny with the held text unless an approver is given; its yes is followed by a fresh PDP
 * decision (a host approval never bypasses the PDP). The SDK calls `canUseTool` only for calls its own
 * permission rules do not settle: add {@link pepHooks} (PreToolUse) to see every call.
 * @example
 * ```ts
 * const canUseTool = pepCanUseTool(pep.withSession(sessionId));
 * for await (const m of query({ prompt, options: { sessionId, canUseTool } })) console.log(m.type);
 * ```
 */
export function pepCanUseTool(pep: Pep, opts?: PepCanUseToolOptions): CanUseTool {
  const approver = opts?.approver;
  if (approver !== undefined && typeof approver?.approve !== 'function') {
    throw new TypeError('pepCanUseTool: approver must be { approve(call) }');
  }
  // The same rule as guardTool: without `permits` (or `permits: false`) this throws now, not at first use.
  pep.guardTool('agent_pep_probe', () => undefined);

  return async (toolName, input, options): Promise<PermissionResult> => {
    const signal = options?.signal;
    const first = await decideTool(pep, toolName, input, signal);
    if (first.kind === 'allow') return { behavior: 'allow', updatedInput: first.args };
    if (first.kind === 'deny' || approver === undefined) return { behavior: 'deny', message: first.message };
    let approved = false;
    try {
      approved =
        (await approver.approve({
          tool: toolName,
          input,
          escalationId: first.decision.escalationId,
          reason: first.decision.reason,
          toolUseID: options.toolUseID,
          signal,
        })) === true;
    } catch {
      approved = false;
    }
    if (!approved) return { behavior: 'deny', message: first.message };
    // A host approval never bypasses the PDP: ask again for the identical call.
    const again = await decideTool(pep, toolName, input, signal);
    return again.kind === 'allow'
      ? { behavior: 'allow', updatedInput: again.args }
      : { behavior: 'deny', message: again.message };
  };
}

function preToolUse(decision: 'allow' | 'deny' | 'ask', reason?: string, updatedInput?: Record<string, unknown>) {
  const out: SyncHookJSONOutput = {
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: decision,
      ...(reason !== undefined ? { permissionDecisionReason: reason } : {}),
      ...(updatedInput !== undefined ? { updatedInput } : {}),
    },
  };
  return out;
}

/**
 * In-process hooks for `query({ options: { hooks } })` that send each step to the PDP: PreToolUse as
 * `action`, UserPromptSubmit as `input`, PostToolUse as `context_egress` with the tool name, each in the
 * session of the event's `session_id`.
 *
 * @param pep - the client; it must have `permits` configured (or `permits: false`), as for `guardTool`
 * @param opts - `{ escalate? }`: what a PreToolUse ESCALATE answers (default `'deny'`)
 * @returns `{ PreToolUse, UserPromptSubmit, PostToolUse }`, each one matcher with `onFailure: 'block'`
 * @throws TypeError when `pep` has no `permits` option, or `escalate` is neither `'deny'` nor `'ask'`
 * @remarks Fails closed: a PDP failure is a deny (PreToolUse) or a block (the others), and a callback that
 * throws blocks the step because every matcher sets `onFailure: 'block'` (the SDK's default, `'continue'`,
 * would run the tool). PreToolUse answers `allow` with `updatedInput` (the args the permit binds) on ALLOW and
 * WARN, `deny` with the `toolMessage` on BLOCK. UserPromptSubmit cannot rewrite a prompt, so a WARN blocks it;
 * PostToolUse replaces a tool's output on WARN (`updatedToolOutput`) and withholds it on BLOCK or ESCALATE.
 * @example
 * ```ts
 * const hooks = pepHooks(pep);
 * for await (const m of query({ prompt, options: { hooks, canUseTool: pepCanUseTool(pep) } })) console.log(m.type);
 * ```
 */
export function pepHooks(pep: Pep, opts?: PepHooksOptions): Partial<Record<HookEvent, HookCallbackMatcher[]>> {
  const escalate = opts?.escalate ?? 'deny';
  if (escalate !== 'deny' && escalate !== 'ask') throw new TypeError("pepHooks: escalate must be 'deny' or 'ask'");
  pep.guardTool('agent_pep_probe', () => undefined);

  const preToolUseHook: HookCallback = async (input, _toolUseID, { signal }) => {
    const tool = input.hook_event_name === 'PreToolUse' ? input.tool_name : 'unknown';
    try {
      if (input.hook_event_name !== 'PreToolUse') return preToolUse('deny', failedMessage(tool));
      const outcome = await decideTool(pep.withSession(input.session_id), tool, input.tool_input, signal);
      if (outcome.kind === 'allow') return preToolUse('allow', undefined, outcome.args);
      if (outcome.kind === 'held' && escalate === 'ask') return preToolUse('ask', outcome.message);
      return preToolUse('deny', outcome.message);
    } catch {
      return preToolUse('deny', failedMessage(tool));
    }
  };

  const textHook: HookCallback = async (input: HookInput, _toolUseID, { signal }) => {
    const event = input.hook_event_name === 'PostToolUse' ? 'PostToolUse' : 'UserPromptSubmit';
    try {
      const step = readHookEvent(input);
      if (step.event === 'PreToolUse') throw new TypeError('not a text event');
      const bound = pep.withSession(step.session);
      const decision =
        step.event === 'PostToolUse'
          ? await bound.checkContextEgress(step.content, { tool: step.tool, signal })
          : await bound.checkInput(step.content, { signal });
      return answerFor('claude-code', step, decision, { escalate: 'deny' }).stdout as SyncHookJSONOutput;
    } catch {
      const stage = event === 'PostToolUse' ? 'context_egress' : 'input';
      const reason = toolMessage(synthesizeBlock(stage, '', 'invalid_request', 'adapter error', 0));
      const out: SyncHookJSONOutput = { decision: 'block', reason };
      if (event === 'PostToolUse') {
        // The output stays in the model's context unless it is replaced: withheld, as on a PDP BLOCK.
        let updatedToolOutput: unknown = '[withheld by policy]';
        try {
          updatedToolOutput = withheld((input as { tool_response?: unknown }).tool_response);
        } catch {
          // keep the whole-output replacement
        }
        out.hookSpecificOutput = { hookEventName: 'PostToolUse', updatedToolOutput };
      }
      return out;
    }
  };

  return {
    PreToolUse: [{ hooks: [preToolUseHook], onFailure: 'block' }],
    UserPromptSubmit: [{ hooks: [textHook], onFailure: 'block' }],
    PostToolUse: [{ hooks: [textHook], onFailure: 'block' }],
  };
}
