/**
 * `agent-pep check`: asks a PDP about one step, as an agent would, and prints the decision as JSON
 * (docs/cli.md). Exit codes: 0 ALLOW or WARN, 3 BLOCK (a PDP's or a synthesized one: a PDP
 * that is down is a BLOCK here too), 4 ESCALATE, 2 for a usage error.
 * @internal
 */
import { TEXT_STAGES } from '../decision.js';
import { createPep } from '../pep.js';
import { apiKeyFromEnv, jsonObjectFlag, protocolFlag, readStdin } from './input.js';
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
function isTextStage(v) {
    return TEXT_STAGES.includes(v);
}
/** What the decision prints: everything but the permit, unless asked for. */
function printable(d, showPermit) {
    if (showPermit)
        return d;
    const { permitId: _permit, ...rest } = d;
    return rest;
}
/** Runs the command; resolves with the exit code of the verdict ({@link CHECK_EXIT}). */
export async function run(argv, io) {
    const { values } = parseCommandLine(COMMAND, {
        args: argv,
        strict: true,
        allowPositionals: false,
        options: {
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
        },
    });
    if (values.help) {
        io.stdout.write(USAGE);
        return EXIT.ok;
    }
    let options;
    let step;
    try {
        if (values.pdp === undefined)
            throw new UsageError('--pdp URL is required');
        if (values.agent === undefined)
            throw new UsageError('--agent ID is required');
        const timeoutMs = integerFlag(values.timeout, 'timeout', 1, 2 ** 31 - 1);
        options = {
            pdpUrl: values.pdp,
            agentId: values.agent,
            session: values.session ?? 'agent-pep-check',
            permits: false,
        };
        if (timeoutMs !== undefined)
            options.timeoutMs = timeoutMs;
        if (values.simulated)
            options.simulated = true;
        const envName = values['api-key-env'];
        if (envName !== undefined)
            options.apiKey = apiKeyFromEnv(envName, io.env);
        if (values.protocol !== undefined)
            options.protocol = protocolFlag(values.protocol);
        if (values.stage !== undefined) {
            if (!isTextStage(values.stage)) {
                throw new UsageError('--stage must be input, context_egress, output or delivery (use --tool and --args for an action)');
            }
            if (values.text === undefined)
                throw new UsageError('--stage needs --text T (or --text - for stdin)');
            if (values.args !== undefined)
                throw new UsageError('--args is for an action (--tool NAME --args JSON), not a text stage');
            if (values.tool !== undefined && values.stage !== 'context_egress') {
                throw new UsageError('--tool with --stage is only for context_egress');
            }
            step = { stage: values.stage, text: values.text, tool: values.tool };
        }
        else if (values.tool !== undefined) {
            if (values.text !== undefined)
                throw new UsageError('--text is for a text stage (--stage STAGE --text T)');
            if (values.args === undefined)
                throw new UsageError('--tool needs --args JSON (use {} for none)');
            step = { tool: values.tool, args: jsonObjectFlag('args', values.args) };
        }
        else {
            throw new UsageError('give --stage STAGE --text T, or --tool NAME --args JSON');
        }
    }
    catch (error) {
        usageExit(COMMAND, error.message);
    }
    let pep;
    try {
        pep = createPep(options);
    }
    catch (error) {
        // a bad --pdp URL, agent id, session, API key (the message names the option, never its value)
        const message = error.message.split('\n')[0] ?? '';
        if (error.option === 'pdpUrl') {
            usageExit(COMMAND, `--pdp: ${message} (the PDP's base URL, as http://127.0.0.1:8787)`);
        }
        usageExit(COMMAND, message);
    }
    let decision;
    try {
        if ('stage' in step) {
            const text = step.text === '-' ? await readStdin(io.stdin) : step.text;
            decision =
                step.stage === 'context_egress'
                    ? await pep.checkContextEgress(text, step.tool !== undefined ? { tool: step.tool } : {})
                    : step.stage === 'input'
                        ? await pep.checkInput(text)
                        : step.stage === 'output'
                            ? await pep.checkOutput(text)
                            : await pep.checkDelivery(text);
        }
        else {
            decision = await pep.authorizeAction(step.tool, step.args);
        }
    }
    finally {
        await pep.close();
    }
    io.stdout.write(`${JSON.stringify(printable(decision, values['show-permit'] === true), null, 2)}\n`);
    // a synthesized BLOCK (the PEP failed closed) says why on stderr too: the PDP's error code and the
    // URL tried, so a wrong agent id or PDP URL says what it is (docs/cli.md)
    if (decision.synthesized !== undefined) {
        const detail = decision.synthesized.message.split('\n')[0] ?? '';
        io.stderr.write(`agent-pep: the policy check failed (${decision.synthesized.code})${detail ? `: ${detail}` : ''}\n`);
    }
    return CHECK_EXIT[decision.verdict] ?? EXIT.failure;
}
