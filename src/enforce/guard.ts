/**
 * The enforcement helpers (docs/api.md and docs/interceptors.md) over the enforcement layer:
 * `guardTool` runs a tool only on a verified action, then its `after` interceptors and the optional
 * result check; `guardText` resolves with the text to use. A refusal throws a {@link PolicyEnforcementError}.
 * @internal
 */

import { checkToolName } from '../core/request.js';
import { isTextStage, type PolicyDecision, type TextStage } from '../decision.js';
import { PolicyBlockedError, type PolicyEnforcementError, PolicyEscalatedError } from '../errors.js';
import { MAX_TOOL_NAME_LENGTH } from '../internal/tool-name.js';
import { optionError, refuseUnknownKeys } from '../options/kit.js';
import type { ActionCallOptions, EgressCallOptions } from '../options/pep.js';
import type { Kernel } from './kernel.js';
import type { Refused } from './results.js';
import { isStandardSchema, type StandardSchemaV1, validateArgs } from './schema.js';

/** What `guardTool`'s `execute` receives besides the args. */
export interface ToolExecutionContext {
  /** The verified permit to present to the side-effecting service (undefined only with `permits: false`). */
  permitId: string | undefined;
  /** The PDP's decision (ALLOW or WARN). */
  decision: PolicyDecision;
  /** The caller's signal, if any. */
  signal: AbortSignal | undefined;
  /** The session the decision was made in (the call's `session`, else the client's). */
  session: string;
}

/**
 * A tool wrapped by `guardTool`: authorizes, verifies the permit, then executes.
 * @typeParam R - what the tool resolves with
 * @typeParam A - the args it takes (a plain object of JSON values at run time; with a `schema`, its input type)
 */
export type GuardedTool<R, A = Record<string, unknown>> = (args: A, opts?: ActionCallOptions) => Promise<R>;

/**
 * Options of `guardTool`.
 * @typeParam R - what the tool resolves with
 * @typeParam A - the args `execute` receives (a `schema`'s output)
 * @typeParam I - the args the guarded tool takes (a `schema`'s input; `A` without one)
 */
export interface GuardToolOptions<R, A extends object = Record<string, unknown>, I = A> {
  /**
   * A Standard Schema (zod, valibot, arktype, ...: anything with the `~standard` v1 interface) that
   * validates every call's args before the decision. Args that do not match are refused with a
   * `PolicyBlockedError` `invalid_request` (its message names the issues' paths, never a value): no
   * request is sent and the tool never runs. Args that match are decided on as the schema outputs
   * them (defaults filled in, values coerced), so the PDP decides on what runs; a PDP WARN's
   * `transformedArgs` must match the schema too, else the call is refused the same way.
   * @defaultValue undefined (no validation)
   */
  schema?: StandardSchemaV1<I, A>;
  /**
   * Check the tool's result at `context_egress` (with `tool: name`) before it is returned, after the
   * `after` interceptors: `true` sends it as the text a model reads (a string as is, anything else as
   * its JSON followed by every string in it that holds a line break, docs/adapters.md), a function
   * turns it into the text to check. WARN returns `transformedContent` in place of the result; BLOCK
   * and ESCALATE throw. This is where a tool output carrying an injected instruction or a secret is
   * stopped before it reaches the model. @defaultValue false
   */
  checkResult?: boolean | ((result: R) => string);
}

/** The error a refusal throws from a guard helper. */
export function refusalError(r: Refused): PolicyEnforcementError {
  const options = r.cause !== undefined ? { cause: r.cause } : undefined;
  return r.decision.verdict === 'ESCALATE'
    ? new PolicyEscalatedError(r.decision, r.tool)
    : new PolicyBlockedError(r.decision, r.tool, options);
}

function checkGuardToolArgs(name: unknown, execute: unknown, options: unknown): void {
  if (typeof name !== 'string') throw new TypeError('guardTool: name must be a string');
  try {
    checkToolName(name);
  } catch {
    throw new TypeError(
      `guardTool: name must be a tool name of at most ${MAX_TOOL_NAME_LENGTH} characters that normalizes to something`,
    );
  }
  if (typeof execute !== 'function') throw new TypeError('guardTool: execute must be a function');
  if (options !== undefined && (typeof options !== 'object' || options === null)) {
    throw new TypeError('guardTool: options must be an object');
  }
  for (const key of Object.keys(options ?? {})) {
    if (key !== 'checkResult' && key !== 'schema') {
      optionError('guardTool', key, `unknown option ${JSON.stringify(key.slice(0, 40))}`);
    }
  }
  const schema = (options as { schema?: unknown } | undefined)?.schema;
  if (schema !== undefined && !isStandardSchema(schema)) {
    optionError('guardTool', 'schema', 'expected a Standard Schema (an object with a `~standard` v1 member)');
  }
  const checkResult = (options as { checkResult?: unknown } | undefined)?.checkResult;
  if (checkResult !== undefined && typeof checkResult !== 'boolean' && typeof checkResult !== 'function') {
    optionError('guardTool', 'checkResult', 'expected a boolean or a function');
  }
}

/** The per-call keys a guard helper takes (docs/api.md, `CallOptions`); `guardText` at context_egress also `tool`. */
const GUARD_CALL_KEYS: ReadonlySet<string> = new Set(['signal', 'session', 'simulated']);
const GUARD_EGRESS_KEYS: ReadonlySet<string> = new Set([...GUARD_CALL_KEYS, 'tool']);
const GUARD_ACTION_KEYS: ReadonlySet<string> = new Set([...GUARD_CALL_KEYS, 'toolPin']);

/**
 * A guard helper's per-call options: an unknown key (or options that are not an object) is a
 * programming error, thrown as the `TypeError` with `err.option` (CONTRACT section 2), never a BLOCK a
 * caller would read as a policy decision. Values are the decision's to judge (BLOCK `invalid_request`).
 * @throws TypeError with `option` naming the key, or `'(options)'`
 */
function checkGuardCallOptions(scope: string, opts: unknown, egress: boolean | 'action'): void {
  if (opts === undefined) return;
  if (typeof opts !== 'object' || opts === null || Array.isArray(opts)) {
    optionError(scope, '(options)', 'expected an object of call options');
  }
  refuseUnknownKeys(
    scope,
    opts,
    egress === 'action' ? GUARD_ACTION_KEYS : egress ? GUARD_EGRESS_KEYS : GUARD_CALL_KEYS,
  );
}

/** The guard helpers of a client (`pep.guardTool`, `pep.guardText`): the enforcement layer as exceptions. */
export interface Guards {
  /**
   * Wraps a tool so that it runs only after an ALLOW or WARN whose permit verifies (docs/permits.md).
   * An interceptor's `substitute` result is returned without running the tool; `after` interceptors and
   * `checkResult` see the result before it is returned (docs/interceptors.md).
   * @param name - the tool name (at most 256 characters; must normalize to something)
   * @param execute - the side effect; receives the effective args (`transformedArgs` or the snapshot).
   *   Its args type is the guarded tool's: `guardTool('send_email', async (args: { to: string }) => ...)`
   * @param options - `{ checkResult, schema }`
   * @returns `(args, opts?) => Promise<R>`, which throws `PolicyBlockedError` (BLOCK, a failed permit, a
   *   simulated decision, an `after` deny) or `PolicyEscalatedError` (ESCALATE), and a `TypeError` with
   *   `err.option` for an unknown key in `opts` (the tool never runs, nothing is sent)
   * @throws TypeError at creation when `permits` is not configured (unless `permits: false`), or `name` is bad
   */
  guardTool<R, A extends object = Record<string, unknown>, I = A>(
    name: string,
    execute: (args: A, ctx: ToolExecutionContext) => R | Promise<R>,
    options?: GuardToolOptions<R, A, I>,
  ): GuardedTool<R, I>;
  /**
   * Checks text at a stage and resolves with the text to use (original on ALLOW, transformed on WARN).
   * @param opts - `{ signal, session, simulated }`, and at `context_egress` also `tool` (the tool whose result this is)
   * @throws PolicyBlockedError on BLOCK (PDP, interceptor or synthesized) or a simulated decision
   * @throws PolicyEscalatedError on ESCALATE
   * @throws TypeError with `err.option` on an unknown key in `opts` (or `opts` not an object): a
   *   programming error, never read as a policy decision (a bad value is BLOCK `invalid_request`)
   */
  guardText(stage: TextStage, content: string, opts?: EgressCallOptions): Promise<string>;
}

/**
 * `args` as `schema` outputs them, or the refusal thrown (BLOCK `invalid_request`, observed).
 * @throws PolicyBlockedError when they do not match
 */
async function schemaArgs(
  kernel: Kernel,
  name: string,
  schema: StandardSchemaV1,
  args: unknown,
  what: string,
): Promise<unknown> {
  const v = await validateArgs(schema, args);
  if (v.ok) return v.value;
  throw refusalError(kernel.refuse({ stage: 'action', tool: name }, 'invalid_request', `${what}: ${v.message}`));
}

/**
 * Builds `guardTool` and `guardText` over one client's enforcement layer.
 * @internal
 */
export function makeGuards(kernel: Kernel): Guards {
  return {
    guardTool(name, execute, options) {
      checkGuardToolArgs(name, execute, options);
      kernel.requirePermits('guardTool');
      const check = options?.checkResult ?? false;
      const schema = options?.schema;
      return async (args, callOpts) => {
        checkGuardCallOptions(`guardTool(${JSON.stringify(name.slice(0, 40))})`, callOpts, 'action');
        const input = schema === undefined ? args : await schemaArgs(kernel, name, schema, args, 'args');
        const decided = await kernel.decideAction(name, input, callOpts, true);
        if (decided.kind === 'substituted') return decided.result as never;
        if (decided.kind === 'refused') throw refusalError(decided);
        const { args: run, permitId, decision, signal, session } = decided;
        // The PDP's replacement must fit the tool too; it runs as bound (the permit binds it), unparsed.
        if (schema !== undefined && decision.transformedArgs !== undefined) {
          await schemaArgs(kernel, name, schema, run, "the PDP's transformedArgs");
        }
        // A routed action runs in its sandbox, never as the tool (docs/interceptors.md, "Routes to a sandbox").
        const { sandbox } = decided;
        const result =
          sandbox === undefined
            ? await execute(run as never, { permitId, decision, signal, session })
            : ((await sandbox.runner({
                tool: name,
                args: run,
                profile: sandbox.route.profile,
                permitId,
                decision,
                signal,
              })) as never);
        const finished = await kernel.finishAction(name, decided, result, check as boolean);
        if (finished.kind === 'refused') throw refusalError(finished);
        return finished.result as never;
      };
    },

    async guardText(stage, content, o) {
      if (!isTextStage(stage))
        throw new TypeError('guardText: stage must be input, context_egress, output or delivery');
      checkGuardCallOptions('guardText', o, stage === 'context_egress');
      const r = await kernel.decideText(stage, content, o);
      if (r.kind === 'refused') throw refusalError(r);
      return r.text;
    },
  };
}
