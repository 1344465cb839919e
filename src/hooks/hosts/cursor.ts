/**
 * Cursor's hook wire, as Cursor's hooks reference gives it (https://cursor.com/docs/agent/hooks): every
 * event carries `hook_event_name` and `conversation_id` (the session); a permission event is answered
 * `{ permission: "allow" | "deny" | "ask", user_message, agent_message }`, `beforeSubmitPrompt`
 * `{ continue, user_message }`. Cursor lets a call through when a hook crashes, times out or prints
 * nothing unless the hook's entry sets `failClosed: true` (`agent-pep hook init cursor` sets it); exit
 * code 2 blocks too.
 *
 * Events read: `preToolUse` (`tool_name`, `tool_input`; may rewrite the input), `beforeShellExecution`
 * (tool `Shell`, args `{ command, cwd }`), `beforeMCPExecution` (`tool_name`, `tool_input` as an object
 * or its JSON text), `beforeReadFile` (tool `Read`, args `{ file_path }`; the file's `content`, which
 * Cursor sends before the model reads it, is then checked at context_egress: a BLOCK or a redaction,
 * which Cursor cannot apply to a read, is a deny), `beforeSubmitPrompt` (input
 * stage) and `afterFileEdit` (tool `Edit`, its edits checked at context_egress; Cursor reads no answer
 * to it, so it only reaches the PDP's record). `ask` exists only on `beforeShellExecution` and
 * `beforeMCPExecution` (and is ignored in some of Cursor's run modes: `--escalate ask` is the user's
 * choice); elsewhere an ESCALATE is a deny.
 * @internal
 */
import { HookEventError, responseText } from '../wire.js';
import {
  type AnswerContext,
  argsField,
  eventObject,
  type HostStep,
  type HostWire,
  outcomeOf,
  rendered,
  sessionField,
  stringField,
} from './host.js';

const ASKS = new Set(['beforeShellExecution', 'beforeMCPExecution']);
const REWRITES = new Set(['preToolUse']);

function read(value: unknown): HostStep {
  const e = eventObject(value);
  const native = e.hook_event_name;
  switch (native) {
    case 'preToolUse':
    case 'beforeMCPExecution': {
      const session = sessionField(e, 'conversation_id', 'PreToolUse');
      const tool = stringField(e, 'tool_name', 'PreToolUse');
      return { event: 'PreToolUse', native, session, tool, args: argsField(e, 'tool_input', 'PreToolUse') };
    }
    case 'beforeShellExecution': {
      const session = sessionField(e, 'conversation_id', 'PreToolUse');
      const args: Record<string, unknown> = { command: stringField(e, 'command', 'PreToolUse') };
      if (typeof e.cwd === 'string') args.cwd = e.cwd;
      return { event: 'PreToolUse', native, session, tool: 'Shell', args };
    }
    case 'beforeReadFile': {
      const session = sessionField(e, 'conversation_id', 'PreToolUse');
      return {
        event: 'PreToolUse',
        native,
        session,
        tool: 'Read',
        args: { file_path: stringField(e, 'file_path', 'PreToolUse') },
        ...(typeof e.content === 'string' ? { readContent: e.content } : {}),
      };
    }
    case 'beforeSubmitPrompt': {
      const session = sessionField(e, 'conversation_id', 'UserPromptSubmit');
      if (typeof e.prompt !== 'string')
        throw new HookEventError('beforeSubmitPrompt prompt is not a string', 'UserPromptSubmit');
      return { event: 'UserPromptSubmit', native, session, content: e.prompt };
    }
    case 'afterFileEdit': {
      const session = sessionField(e, 'conversation_id', 'PostToolUse');
      const file_path = stringField(e, 'file_path', 'PostToolUse');
      if (!Array.isArray(e.edits)) throw new HookEventError('afterFileEdit edits is not an array', 'PostToolUse');
      const response = { file_path, edits: e.edits };
      return {
        event: 'PostToolUse',
        native,
        session,
        tool: 'Edit',
        response,
        content: responseText(response),
        args: { file_path },
      };
    }
    default:
      throw new HookEventError('unknown hook event kind');
  }
}

/**
 * The messages of an answer in both spellings Cursor has documented: `userMessage` / `agentMessage`
 * (Cursor 1.7's hooks page) and `user_message` / `agent_message` (the page since); a key a version does
 * not know is ignored, so each version shows its reason.
 */
const messages = (reason: string) => ({
  user_message: reason,
  agent_message: reason,
  userMessage: reason,
  agentMessage: reason,
});
const deny = (reason: string) => ({ permission: 'deny', ...messages(reason) });

function render(context: AnswerContext, answer: Parameters<HostWire['render']>[1]) {
  const outcome = outcomeOf(context.event, answer);
  const native = context.native ?? '';
  let stdout: Record<string, unknown>;
  switch (outcome.kind) {
    case 'allow':
      if (outcome.updatedInput === undefined) stdout = { permission: 'allow' };
      else if (REWRITES.has(native)) stdout = { permission: 'allow', updated_input: outcome.updatedInput };
      else stdout = deny('ERROR: the policy changed the arguments of this call, which Cursor cannot apply here');
      break;
    case 'ask':
      stdout = ASKS.has(native) ? { permission: 'ask', ...messages(outcome.reason) } : deny(outcome.reason);
      break;
    case 'deny':
      stdout = deny(outcome.reason);
      break;
    case 'pass':
    case 'replace':
      // afterFileEdit: Cursor reads no answer; beforeSubmitPrompt: go on
      stdout = context.event === 'UserPromptSubmit' ? { continue: true } : {};
      break;
    default:
      if (context.event === 'UserPromptSubmit') {
        stdout = { continue: false, user_message: outcome.reason, userMessage: outcome.reason };
      } else if (context.event === 'PostToolUse') stdout = {};
      // An event that could not be read: a deny in every form Cursor reads.
      else stdout = { ...deny(outcome.reason), continue: false };
  }
  return rendered(cursor, answer, stdout);
}

/** Cursor (`.cursor/hooks.json`, `failClosed: true`). ESCALATE is a deny unless `--escalate ask`. */
export const cursor: HostWire = {
  name: 'cursor',
  escalateDefault: 'deny',
  canAsk: true,
  failureExitCode: 2,
  read,
  render,
};
