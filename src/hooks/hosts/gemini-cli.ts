/**
 * Gemini CLI's hook wire, as its hooks reference gives it
 * (https://geminicli.com/docs/hooks/reference, google-gemini/gemini-cli `docs/hooks/reference.md`): every
 * event carries `session_id` and `hook_event_name`; `BeforeTool` (`tool_name`, `tool_input`) is the
 * action stage, `AfterTool` (`tool_response`) context_egress, `BeforeAgent` (`prompt`) input. A
 * `decision: "deny"` with a `reason` blocks the tool (the reason is the tool error the model reads),
 * replaces the tool result (AfterTool) or discards the prompt (BeforeAgent). Exit code 2 blocks with
 * stderr as the reason; any other failure, a timeout included, lets the call through, so the hook answers
 * within its own deadline, below the host's `timeout` (milliseconds, default 60000).
 *
 * Gemini CLI has no `ask`: ESCALATE is a deny. `hookSpecificOutput.tool_input` merges into the model's
 * arguments rather than replacing them, so a rewrite that drops an argument cannot be applied: a deny.
 * An allowed call gets `{}`, which leaves Gemini CLI's own confirmation in place.
 * @internal
 */
import { HookEventError, readHookEvent } from '../wire.js';
import {
  type AnswerContext,
  argsField,
  eventObject,
  type HostStep,
  type HostWire,
  outcomeOf,
  rendered,
  sessionField,
} from './host.js';

const KINDS = { BeforeTool: 'PreToolUse', AfterTool: 'PostToolUse', BeforeAgent: 'UserPromptSubmit' } as const;

function read(value: unknown): HostStep {
  const e = eventObject(value);
  const native = e.hook_event_name;
  if (native !== 'BeforeTool' && native !== 'AfterTool' && native !== 'BeforeAgent') {
    throw new HookEventError('unknown hook event kind');
  }
  const event = KINDS[native];
  sessionField(e, 'session_id', event);
  if (event === 'PreToolUse') argsField(e, 'tool_input', event);
  // The fields Gemini CLI shares with Claude Code are read by the one reader of them.
  const step = readHookEvent({ ...e, hook_event_name: event });
  return { ...step, native };
}

/** The text a replaced AfterTool output is sent as: a string, or the `llmContent` text of Gemini's result. */
function replacementText(output: unknown): string | undefined {
  if (typeof output === 'string') return output;
  const llm = (output as { llmContent?: unknown } | null)?.llmContent;
  return typeof output === 'object' && output !== null && typeof llm === 'string' ? llm : undefined;
}

function render(context: AnswerContext, answer: Parameters<HostWire['render']>[1]) {
  const outcome = outcomeOf(context.event, answer);
  let stdout: Record<string, unknown>;
  switch (outcome.kind) {
    case 'allow': {
      const updated = outcome.updatedInput;
      if (updated === undefined) stdout = {};
      else if (Object.keys(context.args ?? {}).every((k) => Object.hasOwn(updated, k))) {
        stdout = { hookSpecificOutput: { hookEventName: 'BeforeTool', tool_input: updated } };
      } else {
        stdout = {
          decision: 'deny',
          reason: 'ERROR: the policy removed an argument of this call, which Gemini CLI cannot apply',
        };
      }
      break;
    }
    case 'pass':
      stdout = {};
      break;
    case 'replace': {
      const text = replacementText(outcome.output);
      stdout =
        text === undefined
          ? { decision: 'deny', reason: 'ERROR: the tool output was changed by policy and is withheld' }
          : { decision: 'deny', reason: text };
      break;
    }
    default:
      stdout = { decision: 'deny', reason: outcome.reason };
  }
  return rendered(geminiCli, answer, stdout);
}

/** Gemini CLI (`.gemini/settings.json`): BeforeTool, AfterTool, BeforeAgent. */
export const geminiCli: HostWire = {
  name: 'gemini-cli',
  escalateDefault: 'deny',
  canAsk: false,
  failureExitCode: 2,
  read,
  render,
};
