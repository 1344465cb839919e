/**
 * The enforcement helpers (docs/api.md and docs/interceptors.md) over the enforcement layer:
 * `guardTool` runs a tool only on a verified action, then its `after` interceptors and the optional
 * result check; `guardText` resolves with the text to use. A refusal throws a {@link PolicyEnforcementError}.
 * @internal
 */
import { checkToolName } from '../core/request.js';
import { isTextStage } from '../decision.js';
import { PolicyBlockedError, PolicyEscalatedError } from '../errors.js';
import { optionError } from '../options/kit.js';
/** The error a refusal throws from a guard helper. */
export function refusalError(r) {
    const options = r.cause !== undefined ? { cause: r.cause } : undefined;
    return r.decision.verdict === 'ESCALATE'
        ? new PolicyEscalatedError(r.decision, r.tool)
        : new PolicyBlockedError(r.decision, r.tool, options);
}
function checkGuardToolArgs(name, execute, options) {
    if (typeof name !== 'string')
        throw new TypeError('guardTool: name must be a string');
    try {
        checkToolName(name);
    }
    catch {
        throw new TypeError('guardTool: name must be a tool name of at most 256 characters that normalizes to something');
    }
    if (typeof execute !== 'function')
        throw new TypeError('guardTool: execute must be a function');
    if (options !== undefined && (typeof options !== 'object' || options === null)) {
        throw new TypeError('guardTool: options must be an object');
    }
    for (const key of Object.keys(options ?? {})) {
        if (key !== 'checkResult')
            optionError('guardTool', key, `unknown option ${JSON.stringify(key.slice(0, 40))}`);
    }
    const checkResult = options?.checkResult;
    if (checkResult !== undefined && typeof checkResult !== 'boolean' && typeof checkResult !== 'function') {
        optionError('guardTool', 'checkResult', 'expected a boolean or a function');
    }
}
/**
 * Builds `guardTool` and `guardText` over one client's enforcement layer.
 * @internal
 */
export function makeGuards(kernel) {
    return {
        guardTool(name, execute, options) {
            checkGuardToolArgs(name, execute, options);
            kernel.requirePermits('guardTool');
            const check = options?.checkResult ?? false;
            return async (args, callOpts) => {
                const decided = await kernel.decideAction(name, args, callOpts);
                if (decided.kind === 'substituted')
                    return decided.result;
                if (decided.kind === 'refused')
                    throw refusalError(decided);
                const { args: run, permitId, decision, signal } = decided;
                const result = await execute(run, { permitId, decision, signal });
                const finished = await kernel.finishAction(name, decided, result, check);
                if (finished.kind === 'refused')
                    throw refusalError(finished);
                return finished.result;
            };
        },
        async guardText(stage, content, o) {
            if (!isTextStage(stage))
                throw new TypeError('guardText: stage must be input, context_egress, output or delivery');
            const r = await kernel.decideText(stage, content, o);
            if (r.kind === 'refused')
                throw refusalError(r);
            return r.text;
        },
    };
}
