/**
 * Codex's hook wire: Claude Code's event shape, with the answers `../wire.ts` writes for Codex (no `ask`;
 * a PostToolUse block stops the turn). Read in openai/codex `codex-rs/hooks/src/engine/output_parser.rs`
 * and https://developers.openai.com/codex/hooks.
 * @internal
 */
import { readHookEvent } from '../wire.js';
import type { HostWire } from './host.js';

/** Codex: PreToolUse, PostToolUse and UserPromptSubmit; ESCALATE is always a deny. */
export const codex: HostWire = {
  name: 'codex',
  escalateDefault: 'deny',
  canAsk: false,
  failureExitCode: 2,
  read(value) {
    const step = readHookEvent(value);
    return { ...step, native: step.event };
  },
  render: (_context, answer) => answer,
};
