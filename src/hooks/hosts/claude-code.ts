/**
 * Claude Code's hook wire: events and answers as Claude Code's hooks reference gives them
 * (https://code.claude.com/docs/en/hooks), read and written by `../wire.ts`. Command hooks read the event
 * on stdin; HTTP hooks (`"type": "http"`) POST the same JSON and read the same answer from a 2xx body.
 * @internal
 */
import { readHookEvent } from '../wire.js';
import type { HostWire } from './host.js';

/** Claude Code: PreToolUse, PostToolUse and UserPromptSubmit, answered as `../wire.ts` writes them. */
export const claudeCode: HostWire = {
  name: 'claude-code',
  escalateDefault: 'ask',
  canAsk: true,
  failureExitCode: 2,
  read(value) {
    const step = readHookEvent(value);
    return { ...step, native: step.event };
  },
  render: (_context, answer) => answer,
};
