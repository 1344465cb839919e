/**
 * The commands of the `agent-pep` bin (docs/cli.md), one module per command, each loaded only when
 * named: {@link runCli} reads the first word and runs that command with the given I/O. The process
 * around it (exit codes, crashes) is src/cli/main.ts.
 * @internal
 */
import { VERSION } from '../version.js';
import type { CliIo } from './io.js';
import { usageExit } from './usage.js';

/** One command's module: runs with `argv` (after the command's word) and resolves with the exit code. */
export interface CommandModule {
  run(argv: string[], io: CliIo): Promise<number>;
}

/** One command: its one-line summary and its module, loaded on use. */
interface Command {
  readonly summary: string;
  load(): Promise<CommandModule>;
}

/** Every command of the bin, by its first word. */
const COMMANDS: Readonly<Record<string, Command>> = {
  'dev-pdp': {
    summary: 'run the local reference PDP',
    load: () => import('./dev-pdp.js').then((m) => m.loadDevPdpCommand()),
  },
  'check-policy': {
    summary: "check a dev PDP policy; '--tools a,b' lists latches no tool matches",
    load: () => import('./dev-pdp.js').then((m) => m.loadCheckPolicyCommand()),
  },
  check: { summary: 'ask the PDP about one step; print the decision', load: () => import('./check.js') },
  'verify-permit': { summary: 'verify a permit for one tool call', load: () => import('./verify-permit.js') },
  evidence: { summary: "'evidence verify FILE': check an evidence log", load: () => import('./evidence.js') },
  hook: { summary: "answer a coding agent's hook; 'hook serve', 'hook init'", load: () => import('./hook.js') },
  pin: { summary: "'pin mcp --server CMD...': print an MCP server's tool pins", load: () => import('./pin.js') },
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

/**
 * Runs `agent-pep <argv>` with `io`: `--help`, `--version`, or the command the first word names.
 * @returns the exit code
 * @throws CliExit for a usage error (or a command's own end with lines for stderr)
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) usageExit('', 'a command is required');
  if (name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(USAGE);
    return 0;
  }
  if (name === '--version' || name === '-v') {
    io.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (command === undefined) usageExit('', `unknown command ${JSON.stringify(name.slice(0, 40))}`);
  return (await command.load()).run(rest, io);
}
