/**
 * `agent-pep/claude-agent-sdk`: the Claude Agent SDK adapter (docs/adapters.md). `pepCanUseTool`
 * is the SDK's permission callback (action stage); `pepHooks` are its in-process hooks: PreToolUse
 * (action), UserPromptSubmit (input) and PostToolUse (context_egress, with the tool name). Both decide
 * through a {@link Pep}, so deadlines, fail-closed codes, permits, interceptors and observers apply.
 * The SDK is imported for its types only; this module checks at load that it is installed.
 * @packageDocumentation
 * @module adapters/claude-agent-sdk
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
import type { PolicyDecision } from '../decision.js';
import { toolMessage } from '../errors.js';
import { answerPostToolUse, answerPrompt, readHookEvent, withheld } from '../hooks/wire.js';
import { isPlainObject } from '../internal/guards.js';
import { sessionOf } from '../internal/session.js';
import type { Pep } from '../pep.js';
import { callOptions, type Enforcement, enforcementOf, RULES, readOptions, requirePermits, resultText } from './kit.js';

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

type ToolOutcome =
  | { kind: 'allow'; args: Record<string, unknown> }
  | { kind: 'deny'; message: string }
  | { kind: 'held'; decision: PolicyDecision; message: string };

/**
 * One action decision through the enforcement layer, so the permit is verified against the args that
 * will run (docs/api.md). Never rejects; the adapter's own refusals are observed.
 */
async function decideTool(
  enforcement: Enforcement,
  tool: string,
  input: unknown,
  signal?: AbortSignal,
  session?: string,
): Promise<ToolOutcome> {
  if (!isPlainObject(input)) {
    return {
      kind: 'deny',
      message: enforcement.refuse({ stage: 'action', tool }, 'invalid_request', 'adapter error').toolMessage,
    };
  }
  const r = await enforcement.decideAction(tool, input, callOptions({ signal, session }));
  if (r.kind === 'verified') return { kind: 'allow', args: r.args };
  // An interceptor's substitute: its result is what the model sees; the tool never runs.
  if (r.kind === 'substituted') return { kind: 'deny', message: resultText(r.result) };
  if (r.decision.verdict === 'ESCALATE') return { kind: 'held', decision: r.decision, message: r.toolMessage };
  return { kind: 'deny', message: r.toolMessage };
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
  const enforcement = enforcementOf(pep, 'pepCanUseTool');
  const { approver } = readOptions<PepCanUseToolOptions>('pepCanUseTool', opts, {
    approver: (v) => (typeof (v as Approver | null)?.approve === 'function' ? undefined : 'expected { approve(call) }'),
  });
  // The same rule as guardTool: without `permits` (or `permits: false`) this throws now, not at first use.
  requirePermits(pep, 'pepCanUseTool');

  return async (toolName, input, options): Promise<PermissionResult> => {
    const signal = options?.signal;
    const first = await decideTool(enforcement, toolName, input, signal);
    if (first.kind === 'allow') return { behavior: 'allow', updatedInput: first.args };
    if (first.kind === 'deny' || approver === undefined) return { behavior: 'deny', message: first.message };
    if (!(await approves(approver, toolName, input, first.decision, options.toolUseID, signal))) {
      return { behavior: 'deny', message: first.message };
    }
    // A host approval never bypasses the PDP: ask again for the identical call.
    const again = await decideTool(enforcement, toolName, input, signal);
    return again.kind === 'allow'
      ? { behavior: 'allow', updatedInput: again.args }
      : { behavior: 'deny', message: again.message };
  };
}

/** The approver's answer: only a `true` approves; a throw or a rejection is a refusal. */
async function approves(
  approver: Approver,
  tool: string,
  input: Record<string, unknown>,
  decision: PolicyDecision,
  toolUseID: string,
  signal: AbortSignal,
): Promise<boolean> {
  try {
    const call = { tool, input, escalationId: decision.escalationId, reason: decision.reason, toolUseID, signal };
    return (await approver.approve(call)) === true;
  } catch {
    return false;
  }
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
 * `action`, UserPromptSubmit as `input`, PostToolUse as `context_egress` with the tool name, PostCompact's
 * summary as `context_egress` (a summary is not the user's words), each in the session of the event's `session_id`.
 *
 * @param pep - the client; it must have `permits` configured (or `permits: false`), as for `guardTool`
 * @param opts - `{ escalate? }`: what a PreToolUse ESCALATE answers (default `'deny'`)
 * @returns `{ PreToolUse, UserPromptSubmit, PostToolUse, PostCompact }`, each one matcher with `onFailure: 'block'`
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
  const enforcement = enforcementOf(pep, 'pepHooks');
  const escalate =
    readOptions<PepHooksOptions>('pepHooks', opts, { escalate: RULES.oneOf('deny', 'ask') }).escalate ?? 'deny';
  requirePermits(pep, 'pepHooks');

  const preToolUseHook: HookCallback = async (input, _toolUseID, { signal }) => {
    const tool = input.hook_event_name === 'PreToolUse' ? input.tool_name : 'unknown';
    const failed = () => enforcement.refuse({ stage: 'action', tool }, 'invalid_request', 'adapter error').toolMessage;
    try {
      if (input.hook_event_name !== 'PreToolUse') return preToolUse('deny', failed());
      const session = sessionOf({ thread: input.session_id });
      const outcome = await decideTool(enforcement, tool, input.tool_input, signal, session);
      if (outcome.kind === 'allow') return preToolUse('allow', undefined, outcome.args);
      if (outcome.kind === 'held' && escalate === 'ask') return preToolUse('ask', outcome.message);
      return preToolUse('deny', outcome.message);
    } catch {
      return preToolUse('deny', failed());
    }
  };

  const textHook: HookCallback = async (input: HookInput, _toolUseID, { signal }) => {
    const event = input.hook_event_name === 'PostToolUse' ? 'PostToolUse' : 'UserPromptSubmit';
    try {
      const step = readHookEvent(input);
      if (step.event === 'PreToolUse') throw new TypeError('not a text event');
      const opts = callOptions({ session: step.session, signal });
      if (step.event === 'UserPromptSubmit') {
        const r = await enforcement.decideText('input', step.content, opts);
        return answerPrompt('claude-code', step, r).stdout as SyncHookJSONOutput;
      }
      // The output as the model would see it: `after` interceptors, then the context_egress check.
      const ranWith = (input as { tool_input?: unknown }).tool_input;
      const ran = { args: isPlainObject(ranWith) ? ranWith : {}, session: step.session, signal };
      const r = await enforcement.finishAction(step.tool, ran, step.response, true);
      return answerPostToolUse('claude-code', step, r).stdout as SyncHookJSONOutput;
    } catch {
      return textFailure(enforcement, event, input);
    }
  };

  return {
    PreToolUse: [{ hooks: [preToolUseHook], onFailure: 'block' }],
    UserPromptSubmit: [{ hooks: [textHook], onFailure: 'block' }],
    PostToolUse: [{ hooks: [textHook], onFailure: 'block' }],
    PostCompact: [{ hooks: [compactHook(enforcement)], onFailure: 'block' }],
  };
}

/**
 * PostCompact: the summary compaction wrote (from the whole conversation, tool outputs included) is
 * checked at `context_egress` in the event's session, never at `input` (docs/adapters.md "Text made
 * from tool output"). A hook cannot rewrite the summary, so anything but an unchanged pass stops the
 * session (`continue: false`) with the `toolMessage` as its reason, before the summary is used.
 */
function compactHook(enforcement: Enforcement): HookCallback {
  const stop = (reason: string): SyncHookJSONOutput => ({ continue: false, stopReason: reason });
  return async (input, _toolUseID, { signal }) => {
    try {
      const summary = (input as { compact_summary?: unknown }).compact_summary;
      const session = (input as { session_id?: unknown }).session_id;
      if (input.hook_event_name !== 'PostCompact' || typeof summary !== 'string')
        throw new TypeError('not PostCompact');
      const opts = callOptions({ session: sessionOf({ thread: session }), signal });
      const r = await enforcement.decideText('context_egress', summary, opts);
      if (r.kind === 'refused') return stop(r.toolMessage);
      return r.text === summary ? {} : stop(toolMessage(r.decision, undefined));
    } catch {
      return stop(enforcement.refuse({ stage: 'context_egress' }, 'invalid_request', 'adapter error').toolMessage);
    }
  };
}

/** The block a text hook answers on an error of its own (observed); a PostToolUse output is withheld. */
function textFailure(enforcement: Enforcement, event: 'PostToolUse' | 'UserPromptSubmit', input: HookInput) {
  const stage = event === 'PostToolUse' ? 'context_egress' : 'input';
  const reason = enforcement.refuse({ stage }, 'invalid_request', 'adapter error').toolMessage;
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
