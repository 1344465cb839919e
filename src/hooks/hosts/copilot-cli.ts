/**
 * GitHub Copilot CLI's hook wire, as its hooks reference gives it
 * (https://docs.github.com/en/copilot/reference/copilot-cli-reference/cli-hooks-reference): a
 * `preToolUse` command hook reads `{ sessionId, timestamp, cwd, toolName, toolArgs }` (camelCase, no
 * event name; `toolArgs` may be the arguments' JSON text) and answers
 * `{ permissionDecision: "allow" | "deny" | "ask", permissionDecisionReason, modifiedArgs }`.
 * Only `preToolUse` can stop anything: the outputs of `postToolUse` (for command hooks) and
 * `userPromptSubmitted` are not read, so those events are not answered here.
 *
 * "Hook failures (non-zero exit codes or timeouts) are logged and skipped—they never block agent
 * execution": every answer, a failure's included, is a JSON deny with exit code 0, and the hook's own
 * deadline sits well below the host's `timeoutSec` (default 30). ESCALATE is a deny unless
 * `--escalate ask` (an interactive session's prompt). An allowed call gets `{}` (the CLI's own
 * permission rules still apply); a rewrite is `modifiedArgs`.
 * @internal
 */
import { HookEventError } from '../wire.js';
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

function read(value: unknown): HostStep {
  const e = eventObject(value);
  const known = Object.hasOwn(e, 'toolName') && !Object.hasOwn(e, 'toolResult') && !Object.hasOwn(e, 'error');
  if (!known || Object.hasOwn(e, 'hook_event_name')) throw new HookEventError('unknown hook event kind');
  const session = sessionField(e, 'sessionId', 'PreToolUse');
  const tool = stringField(e, 'toolName', 'PreToolUse');
  return { event: 'PreToolUse', native: 'preToolUse', session, tool, args: argsField(e, 'toolArgs', 'PreToolUse') };
}

function render(context: AnswerContext, answer: Parameters<HostWire['render']>[1]) {
  // Every answer is read as a preToolUse answer: it is the only event answered.
  const outcome = outcomeOf(context.event ?? 'PreToolUse', answer);
  let stdout: Record<string, unknown>;
  if (outcome.kind === 'allow') {
    stdout =
      outcome.updatedInput === undefined ? {} : { permissionDecision: 'allow', modifiedArgs: outcome.updatedInput };
  } else if (outcome.kind === 'ask') {
    stdout = { permissionDecision: 'ask', permissionDecisionReason: outcome.reason };
  } else {
    const reason = 'reason' in outcome ? outcome.reason : 'ERROR: blocked by policy';
    stdout = { permissionDecision: 'deny', permissionDecisionReason: reason };
  }
  return rendered(copilotCli, answer, stdout);
}

/** GitHub Copilot CLI (`.github/hooks/*.json`): `preToolUse` only; a failure is a deny with exit code 0. */
export const copilotCli: HostWire = {
  name: 'copilot-cli',
  escalateDefault: 'deny',
  canAsk: true,
  failureExitCode: 0,
  read,
  render,
};
