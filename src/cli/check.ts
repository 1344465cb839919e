/**
 * `agent-pep check`: asks a PDP about one step, as an agent would, and prints the decision as JSON
 * (docs/cli.md). Exit codes: 0 ALLOW or WARN, 3 BLOCK (a PDP's or a synthesized one: a PDP
 * that is down is a BLOCK here too), 4 ESCALATE, 2 for a usage error.
 * @internal
 */

import { type PolicyDecision, TEXT_STAGES, type TextStage } from '../decision.js';
import type { PepOptions } from '../options/pep.js';
import { createPep } from '../pep.js';
import { apiKeyFromEnv, jsonObjectFlag, protocolFlag, readStdin } from './input.js';
import type { CliIo } from './io.js';
import { EXIT, integerFlag, parseCommandLine, UsageError, usageExit } from './usage.js';

export const USAGE = `Usage: agent-pep check --pdp URL --agent ID [options]
         (--stage input|context_egress|output|delivery --text T | --tool NAME --args JSON)

Asks the PDP about one step and prints the decision as JSON. The permit of an ALLOW or WARN
action is left out unless --show-permit is given.

Options:
  --pdp URL             the PDP's base URL (required)
  --agent ID            the agent id sent as agentId (required)
  --session S           the session id (default agent-pep-check)
  --api-key-env VAR     read the PDP API key from the environment variable VAR
                        (never from a flag, so it stays out of shell history and ps)
  --protocol P          agent-pep (default) or authzen (AuthZEN 1.0)
  --stage STAGE         a text stage: input, context_egress, output or delivery
  --text T              the content to check; - reads it from stdin
  --tool NAME           the tool of an action; with --stage context_egress, the tool
                        whose result the text is
  --args JSON           the action's arguments, a JSON object
  --simulated           ask for a dry run (no permit is minted)
  --timeout MS          deadline of the decision in milliseconds (default 2000)
  --show-permit         include the permit (permitId) in the output
  -h, --help            show this help

Exit codes: 0 ALLOW or WARN, 3 BLOCK, 4 ESCALATE, 2 usage error.
`;

const COMMAND = 'check';

/** Exit codes of `check`, by verdict. */
export const CHECK_EXIT = Object.freeze({ ALLOW: 0, WARN: 0, BLOCK: 3, ESCALATE: 4 });

function isTextStage(v: string): v is TextStage {
  return (TEXT_STAGES as readonly string[]).includes(v);
}

/** What the decision prints: everything but the permit, unless asked for. */
function printable(d: PolicyDecision, showPermit: boolean): PolicyDecision {
  if (showPermit) return d;
  const { permitId: _permit, ...rest } = d;
  return rest;
}

/** The flags of `check`, as `parseArgs` takes them. */
const FLAGS = {
  pdp: { type: 'string' },
  agent: { type: 'string' },
  session: { type: 'string' },
  'api-key-env': { type: 'string' },
  protocol: { type: 'string' },
  stage: { type: 'string' },
  text: { type: 'string' },
  tool: { type: 'string' },
  args: { type: 'string' },
  simulated: { type: 'boolean' },
  timeout: { type: 'string' },
  'show-permit': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The flags as parsed. */
type CheckFlags = ReturnType<typeof parseCommandLine<{ options: typeof FLAGS }>>['values'];

/** The one step to ask about: a text at a stage, or an action. */
type Step =
  | { stage: TextStage; text: string | undefined; tool: string | undefined }
  | { tool: string; args: Record<string, unknown> };

/** The client options the flags give (`permits: false`: the CLI verifies no permit). @throws UsageError */
function clientOptions(values: CheckFlags, io: CliIo): Record<string, unknown> {
  if (values.pdp === undefined) throw new UsageError('--pdp URL is required');
  if (values.agent === undefined) throw new UsageError('--agent ID is required');
  const timeoutMs = integerFlag(values.timeout, 'timeout', 1, 2 ** 31 - 1);
  const options: Record<string, unknown> = {
    pdpUrl: values.pdp,
    agentId: values.agent,
    session: values.session ?? 'agent-pep-check',
    permits: false,
  };
  if (timeoutMs !== undefined) options.timeoutMs = timeoutMs;
  if (values.simulated) options.simulated = true;
  const envName = values['api-key-env'];
  if (envName !== undefined) options.apiKey = apiKeyFromEnv(envName, io.env);
  if (values.protocol !== undefined) options.protocol = protocolFlag(values.protocol);
  return options;
}

/** The step the flags name: `--stage` with `--text`, or `--tool` with `--args`. @throws UsageError */
function stepOf(values: CheckFlags): Step {
  if (values.stage !== undefined) {
    if (!isTextStage(values.stage)) {
      throw new UsageError(
        '--stage must be input, context_egress, output or delivery (use --tool and --args for an action)',
      );
    }
    if (values.text === undefined) throw new UsageError('--stage needs --text T (or --text - for stdin)');
    if (values.args !== undefined)
      throw new UsageError('--args is for an action (--tool NAME --args JSON), not a text stage');
    if (values.tool !== undefined && values.stage !== 'context_egress') {
      throw new UsageError('--tool with --stage is only for context_egress');
    }
    return { stage: values.stage, text: values.text, tool: values.tool };
  }
  if (values.tool !== undefined) {
    if (values.text !== undefined) throw new UsageError('--text is for a text stage (--stage STAGE --text T)');
    if (values.args === undefined) throw new UsageError('--tool needs --args JSON (use {} for none)');
    return { tool: values.tool, args: jsonObjectFlag('args', values.args) };
  }
  throw new UsageError('give --stage STAGE --text T, or --tool NAME --args JSON');
}

/** The client, or a usage exit naming the bad option (never its value). */
function clientOf(options: Record<string, unknown>): ReturnType<typeof createPep> {
  try {
    return createPep(options as unknown as PepOptions);
  } catch (error) {
    // a bad --pdp URL, agent id, session, API key (the message names the option, never its value)
    const message = (error as Error).message.split('\n')[0] ?? '';
    if ((error as { option?: unknown }).option === 'pdpUrl') {
      usageExit(COMMAND, `--pdp: ${message} (the PDP's base URL, as http://127.0.0.1:8787)`);
    }
    usageExit(COMMAND, message);
  }
}

/** Asks the PDP about `step` (the text from stdin for `--text -`), then closes the client. */
async function decideStep(pep: ReturnType<typeof createPep>, step: Step, io: CliIo): Promise<PolicyDecision> {
  try {
    if (!('stage' in step)) return await pep.authorizeAction(step.tool, step.args);
    const text = step.text === '-' ? await readStdin(io.stdin) : (step.text as string);
    if (step.stage === 'context_egress') {
      return await pep.checkContextEgress(text, step.tool !== undefined ? { tool: step.tool } : {});
    }
    if (step.stage === 'input') return await pep.checkInput(text);
    if (step.stage === 'output') return await pep.checkOutput(text);
    return await pep.checkDelivery(text);
  } finally {
    await pep.close();
  }
}

/** Runs the command; resolves with the exit code of the verdict ({@link CHECK_EXIT}). */
export async function run(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseCommandLine(COMMAND, { args: argv, strict: true, allowPositionals: false, options: FLAGS });
  if (values.help) {
    io.stdout.write(USAGE);
    return EXIT.ok;
  }
  let options: Record<string, unknown>;
  let step: Step;
  try {
    options = clientOptions(values, io);
    step = stepOf(values);
  } catch (error) {
    usageExit(COMMAND, (error as Error).message);
  }
  const decision = await decideStep(clientOf(options), step, io);
  io.stdout.write(`${JSON.stringify(printable(decision, values['show-permit'] === true), null, 2)}\n`);
  // a synthesized BLOCK (the PEP failed closed) says why on stderr too: the PDP's error code and the
  // URL tried, so a wrong agent id or PDP URL says what it is (docs/cli.md)
  if (decision.synthesized !== undefined) {
    const detail = decision.synthesized.message.split('\n')[0] ?? '';
    io.stderr.write(
      `agent-pep: the policy check failed (${decision.synthesized.code})${detail ? `: ${detail}` : ''}\n`,
    );
  }
  return CHECK_EXIT[decision.verdict] ?? EXIT.failure;
}
