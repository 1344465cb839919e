/**
 * `agent-pep check-policy --policy FILE [--tools a,b,c]`: validates a policy file and, given the
 * agent's tools, lists the latches that can never match one of them and the tools no latch covers
 * (docs/dev-pdp.md, "Known tools"). Exit codes: 0 the policy is valid and every latch's `tool`
 * matches a known tool (tools no latch covers are listed, not a failure); 3 a latch can never match a
 * known tool; 2 a usage error or an invalid policy.
 * @internal
 */
import type { CliIo } from 'agent-pep/internal';
import { decodeJsonOrUsage, EXIT, exitWith, parseCommandLine, readFileOrUsage, usageExit } from 'agent-pep/internal';
import { compilePolicy, InvalidPolicyError } from './policy.js';
import { checkToolCoverage, type ToolCoverage } from './tool-coverage.js';

/** Exit code when a latch can never match a known tool. */
export const EXIT_UNMATCHED_LATCH = 3;

export const CHECK_POLICY_USAGE = `Usage: agent-pep check-policy --policy FILE [--tools a,b,c] [--json]

Validates a policy of the reference PDP. With --tools (the agent's tool names), also lists
the latches whose tool can never match one of them (a typo, or a tool the agent does not
have) and the tools no latch covers (a latch covers a tool when it is enforced, has the
action stage, and its tool pattern or @group matches the tool's normalized name).

Options:
  --policy FILE     the policy JSON file (required)
  --tools LIST      the agent's tool names, comma-separated (may be repeated)
  --json            print { "valid": true, "unmatched": [...], "uncovered": [...] } as JSON
  -h, --help        show this help

Exit codes: 0 valid (tools no latch covers are listed, not a failure); 3 a latch can never
match a known tool; 2 a usage error or an invalid policy.
`;

const COMMAND = 'check-policy';

const FLAGS = {
  policy: { type: 'string' },
  tools: { type: 'string', multiple: true },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The tool names of the `--tools` flags: comma-separated, blanks dropped. */
function toolsOf(flags: string[] | undefined): string[] | undefined {
  if (flags === undefined) return undefined;
  const tools = flags
    .flatMap((flag) => flag.split(','))
    .map((t) => t.trim())
    .filter((t) => t.length > 0);
  if (tools.length === 0) usageExit(COMMAND, '--tools names no tool');
  return tools;
}

/** The human report: the two lists, each with its count. */
function report(policyPath: string, latches: number, coverage: ToolCoverage | undefined): string {
  let out = `${policyPath}: a valid policy (${latches} latches)\n`;
  if (coverage === undefined) return out;
  const { unmatched, uncovered } = coverage;
  out += `latches that can never match a known tool: ${unmatched.length}\n`;
  for (const u of unmatched) out += `  latches[${u.index}] ${u.latch}: tool ${u.tool}\n`;
  out += `known tools no latch covers: ${uncovered.length}\n`;
  for (const tool of uncovered) out += `  ${tool}\n`;
  return out;
}

/** The policy, compiled; exit 2 with one line per problem when it is invalid. */
async function compiledPolicy(policyPath: string): Promise<ReturnType<typeof compilePolicy>> {
  const what = `the policy file ${policyPath}`;
  let raw: unknown;
  try {
    raw = decodeJsonOrUsage(what, await readFileOrUsage(policyPath, what));
  } catch (error) {
    usageExit(COMMAND, (error as Error).message);
  }
  try {
    return compilePolicy(raw);
  } catch (error) {
    if (!(error instanceof InvalidPolicyError)) throw error;
    exitWith(
      `invalid policy ${policyPath}:\n${error.issues.map((i) => `  ${i.path}${i.latch !== undefined ? ` (latch ${i.latch})` : ''}: ${i.message}`).join('\n')}`,
      EXIT.usage,
    );
  }
}

/** Runs the command; resolves with the exit code. */
export async function run(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseCommandLine(COMMAND, { args: argv, strict: true, allowPositionals: false, options: FLAGS });
  if (values.help) {
    io.stdout.write(CHECK_POLICY_USAGE);
    return EXIT.ok;
  }
  if (values.policy === undefined) usageExit(COMMAND, '--policy FILE is required');
  const tools = toolsOf(values.tools);
  const policy = await compiledPolicy(values.policy);
  let coverage: ToolCoverage | undefined;
  try {
    coverage = tools === undefined ? undefined : checkToolCoverage(policy, tools);
  } catch (error) {
    usageExit(COMMAND, `--tools: ${(error as Error).message.replace(/^startDevPdp: knownTools /, '')}`);
  }
  if (values.json === true) {
    io.stdout.write(`${JSON.stringify({ valid: true, ...(coverage ?? {}) })}\n`);
  } else {
    io.stdout.write(report(values.policy, policy.latches.length, coverage));
  }
  return coverage !== undefined && coverage.unmatched.length > 0 ? EXIT_UNMATCHED_LATCH : EXIT.ok;
}
