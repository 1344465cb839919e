/**
 * The hook wires of every host `agent-pep hook` answers, by name (docs/adapters.md).
 * @internal
 */
import { claudeCode } from './claude-code.js';
import { codex } from './codex.js';
import { copilotCli } from './copilot-cli.js';
import { cursor } from './cursor.js';
import { geminiCli } from './gemini-cli.js';
import type { HostName, HostWire } from './host.js';

export { HOST_NAMES, type HostName, type HostStep, type HostWire } from './host.js';

/** Every host's wire, by the name `agent-pep hook <host>` and `/hooks/<host>` use. */
export const HOSTS: Readonly<Record<HostName, HostWire>> = Object.freeze({
  'claude-code': claudeCode,
  codex,
  cursor,
  'gemini-cli': geminiCli,
  'copilot-cli': copilotCli,
});

/** The wire of `name`, or undefined for a name that is not a host. */
export function hostWire(name: string): HostWire | undefined {
  return Object.hasOwn(HOSTS, name) ? HOSTS[name as HostName] : undefined;
}
