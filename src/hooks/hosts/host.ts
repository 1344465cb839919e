/**
 * What every coding-agent host's hook wire has in common (docs/adapters.md, "Coding-agent hooks"): a
 * host reads its own event JSON into a {@link HookStep}, and turns the answer the Claude Code wire gives
 * (`../wire.ts`, the one mapping of decisions to answers) into its own answer shape. A host that cannot
 * carry an answer (an `ask` where it has none, a rewrite it cannot apply) gets a deny: never less.
 * @internal
 */
import { isRecord } from '../../internal/guards.js';
import { sessionOf } from '../../internal/session.js';
import { type HookAnswer, HookEventError, type HookEventName, type HookStep } from '../wire.js';

/** The hosts whose hooks `agent-pep hook <host>` and `agent-pep hook serve` answer. */
export const HOST_NAMES = ['claude-code', 'codex', 'cursor', 'gemini-cli', 'copilot-cli'] as const;

/** One of {@link HOST_NAMES}. */
export type HostName = (typeof HOST_NAMES)[number];

/**
 * A step with the host's own name for its event (`beforeShellExecution`, `BeforeTool`, `preToolUse`).
 * `readContent`: what a file read will give the model, sent before it does (Cursor's `beforeReadFile`):
 * checked at context_egress once the read itself is allowed.
 */
export type HostStep = HookStep & { native: string; readContent?: string };

/**
 * What an answer of the Claude Code wire says, read back: the shape every other host renders from.
 * `allow` may carry the args that run; `replace` is a PostToolUse output changed by policy.
 */
export type Outcome =
  | { kind: 'allow'; updatedInput?: Record<string, unknown> }
  | { kind: 'deny'; reason: string }
  | { kind: 'ask'; reason: string }
  | { kind: 'pass' }
  | { kind: 'replace'; output: unknown }
  | { kind: 'block'; reason: string };

/** One host's hook wire. */
export interface HostWire {
  readonly name: HostName;
  /** What ESCALATE becomes unless `--escalate` says otherwise. */
  readonly escalateDefault: 'ask' | 'deny';
  /** Whether the host can show its own approval prompt (`--escalate ask`). */
  readonly canAsk: boolean;
  /**
   * The exit code of an answer given because the hook itself failed: 2 where the host blocks on exit 2,
   * 0 where any other exit code than 0 lets the call through (Copilot CLI).
   */
  readonly failureExitCode: 0 | 2;
  /**
   * Reads one parsed event.
   * @throws HookEventError (`../wire.ts`) for an event it does not answer or a field of the wrong type
   */
  read(value: unknown): HostStep;
  /** The host's answer from the Claude Code wire's answer to the same step (or to a failure of the hook). */
  render(context: AnswerContext, answer: HookAnswer): HookAnswer;
}

/** What is known of the event an answer is for: nothing, when it could not be read. */
export interface AnswerContext {
  /** The host's own event name (`beforeShellExecution`, `BeforeTool`, `preToolUse`). */
  native?: string | undefined;
  /** The step's kind. */
  event?: HookEventName | undefined;
  /** A PreToolUse step's args, as the host sent them. */
  args?: Record<string, unknown> | undefined;
}

/** The context of a step that was read. */
export function contextOf(step: HostStep): AnswerContext {
  return { native: step.native, event: step.event, args: step.event === 'PreToolUse' ? step.args : undefined };
}

function objectOf(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/** Reads a Claude Code wire answer back into an {@link Outcome} (a shape it does not know is a block). */
export function outcomeOf(event: HookEventName | undefined, answer: HookAnswer): Outcome {
  const out = answer.stdout;
  const specific = objectOf(out.hookSpecificOutput);
  const reason = typeof out.reason === 'string' ? out.reason : 'blocked by policy';
  if (event === 'PreToolUse') {
    const decision = specific?.permissionDecision;
    const why =
      typeof specific?.permissionDecisionReason === 'string' ? specific.permissionDecisionReason : 'denied by policy';
    if (decision === 'allow') {
      const updatedInput = objectOf(specific?.updatedInput);
      return updatedInput === undefined ? { kind: 'allow' } : { kind: 'allow', updatedInput };
    }
    if (decision === 'ask') return { kind: 'ask', reason: why };
    return { kind: 'deny', reason: why };
  }
  if (out.decision === 'block' || event === undefined) return { kind: 'block', reason };
  if (event === 'PostToolUse' && specific !== undefined && Object.hasOwn(specific, 'updatedToolOutput')) {
    return { kind: 'replace', output: specific.updatedToolOutput };
  }
  return Object.keys(out).length === 0 ? { kind: 'pass' } : { kind: 'block', reason };
}

/** An answer with the host's stdout; a failed-closed answer keeps its stderr line and takes the host's exit code. */
export function rendered(wire: HostWire, answer: HookAnswer, stdout: Record<string, unknown>): HookAnswer {
  if (answer.exitCode === 0) return { stdout, stderr: undefined, exitCode: 0 };
  return { stdout, stderr: answer.stderr, exitCode: wire.failureExitCode };
}

/** A non-empty string field of an event, or a {@link HookEventError} naming it. */
export function stringField(value: Record<string, unknown>, name: string, event?: HookEventName): string {
  const v = value[name];
  if (typeof v !== 'string' || v.length === 0) throw new HookEventError(`the hook event has no ${name}`, event);
  return v;
}

/**
 * The session of a hook event from the host's conversation id field (`name`), by the one rule
 * (`sessionOf`, internal/session.ts: a non-blank string, or a finite number as its text). A hook has
 * no other session, so none is a {@link HookEventError} (the hook denies).
 */
export function sessionField(value: Record<string, unknown>, name: string, event?: HookEventName): string {
  const session = sessionOf({ thread: value[name] });
  if (session === undefined) throw new HookEventError(`the hook event has no ${name}`, event);
  return session;
}

/**
 * A tool's arguments: an object, or a string holding the JSON of one (Cursor's `beforeMCPExecution` and
 * Copilot CLI's `toolArgs` send them as JSON text); anything else is a {@link HookEventError}.
 */
export function argsField(value: Record<string, unknown>, name: string, event: HookEventName): Record<string, unknown> {
  let v = value[name];
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v) as unknown;
    } catch {
      throw new HookEventError(`${name} is not JSON`, event);
    }
  }
  if (!isRecord(v)) throw new HookEventError(`${name} is not an object`, event);
  return v;
}

/** The event as an object, or a {@link HookEventError}. */
export function eventObject(value: unknown): Record<string, unknown> {
  if (!isRecord(value)) throw new HookEventError('the hook event is not a JSON object');
  return value;
}
