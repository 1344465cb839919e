#!/usr/bin/env node
/**
 * The `agent-pep` command line (docs/cli.md): dispatches to one module per command,
 * each loaded only when named. `agent-pep --version` prints the version; every command has `--help`;
 * a usage error exits 2 with one line naming it, then one line pointing to `--help`.
 * @packageDocumentation
 */
import { VERSION } from '../version.js';
import { EXIT, exitWith, usageExit } from './usage.js';

/** One command: its one-line summary and its module, loaded on use. */
interface Command {
  readonly summary: string;
  load(): Promise<{ run(argv: string[]): Promise<unknown> }>;
}

/** Every command of the bin, by its first word. */
const COMMANDS: Readonly<Record<string, Command>> = {
  'dev-pdp': { summary: 'run the local reference PDP', load: () => import('./dev-pdp.js') },
  check: { summary: 'ask the PDP about one step; print the decision', load: () => import('./check.js') },
  'verify-permit': { summary: 'verify a permit for one tool call', load: () => import('./verify-permit.js') },
  evidence: { summary: "'evidence verify FILE': check an evidence log", load: () => import('./evidence.js') },
  hook: { summary: 'answer a Claude Code or Codex command hook', load: () => import('./hook.js') },
};

const USAGE = `Usage: agent-pep <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(16)}${c.summary}`)
  .join('\n')}

Options:
  --version         print the version
  -h, --help        show this help; 'agent-pep <command> --help' for a command
`;

async function main(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  if (name === undefined) usageExit('', 'a command is required');
  if (name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  if (name === '--version' || name === '-v') {
    process.stdout.write(`${VERSION}\n`);
    return;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (command === undefined) usageExit('', `unknown command ${JSON.stringify(name.slice(0, 40))}`);
  await (await command.load()).run(rest);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  // A hook host lets the call through on any exit code but 0 and 2: a hook that crashes (even before it
  // could load) exits 2 with the reason on stderr, which both hosts read as a block.
  const code = process.argv[2] === 'hook' ? EXIT.usage : EXIT.failure;
  exitWith(error instanceof Error ? error.message : 'unexpected error', code);
});
