/**
 * `agent-pep/openai-agents`: the OpenAI Agents SDK (`@openai/agents` 0.x) adapter (docs/adapters.md). Each stage sits on one of the SDK's public extension points and decides through a
 * {@link Pep}, so deadlines, fail-closed codes, permits, interceptors and observers all apply:
 * - action: {@link guardTools} wraps function tools (`needsApproval` for ESCALATE, `invoke` through
 *   `pep.guardTool`);
 * - input: {@link pepInputGuardrail}, an agent input guardrail that blocks the model call;
 * - context egress: {@link pepModelInputFilter}, a `callModelInputFilter` over new tool outputs;
 * - output: {@link pepOutputGuardrail}, an agent output guardrail.
 * @packageDocumentation
 * @module adapters/openai-agents
 */
import { createHash } from 'node:crypto';
import {
  type CallModelInputFilter,
  type FunctionTool,
  getCurrentTrace,
  type InputGuardrail,
  type ModelInputData,
  type OutputGuardrail,
  type RunContext,
} from '@openai/agents';
import type { PolicyDecision, Stage } from '../decision.js';
import { PolicyEnforcementError, toolMessage } from '../errors.js';
import { sessionOf } from '../internal/session.js';
import type { ModelRequest } from '../options/interceptors.js';
import { optionError, refuseUnknownKeys } from '../options/kit.js';
import type { EgressCallOptions } from '../options/pep.js';
import type { Pep, ToolExecutionContext } from '../pep.js';
import { argsBySchema, enforcementOf, TextMemory } from './kit.js';
import { checksModelRequests, decideSettings } from './model-request.js';
import { perStepVisibility, readHideBlocked } from './visible-tools.js';

/** What the SDK passes a function tool's `invoke` as its third argument. */
type ToolCallDetails = NonNullable<Parameters<FunctionTool['invoke']>[2]>;

// biome-ignore lint/suspicious/noExplicitAny: any function tool, whatever its context, parameters and result
type AnyFunctionTool = FunctionTool<any, any, any>;

/** Options of {@link guardTools}. */
export interface GuardToolsOptions {
  /**
   * Check each tool's result at `context_egress` (with the tool's name) inside the tool, before the
   * SDK hands it to the model, as `pep.guardTool`'s `checkResult` does: WARN returns the PDP's
   * `transformedContent` as the result, BLOCK or ESCALATE return the denial text. Use this or
   * {@link pepModelInputFilter}, not both (each would ask the PDP). @defaultValue false
   */
  checkResult?: boolean;
  /**
   * Offer the model only the tools `pep.visibleTools` shows for the run's session (docs/visibility.md):
   * each tool's `isEnabled` also asks it, in one batch per turn for all these tools. A hidden tool
   * called anyway is still decided per call. @defaultValue false
   */
  hideBlocked?: boolean;
}

/** What {@link pepInputGuardrail} and {@link pepOutputGuardrail} put into the guardrail's `outputInfo`. */
export interface PepGuardrailInfo {
  /** The decision's verdict (a BLOCK also for a simulated or otherwise unenforceable decision). */
  verdict: PolicyDecision['verdict'];
  /** The stage that was checked: `input` or `output`. */
  stage: Stage;
  /** The request id of the decision, for the PDP's evidence feed. */
  requestId: string;
  /** The PDP's decision id, when it gave one. */
  decisionId?: string;
  /** `'blocked'`, `'escalated'` or the fail-closed code; absent on ALLOW and WARN. */
  code?: string;
  /** The `toolMessage` text (docs/adapters.md) for a step that did not pass (`ERROR: input blocked by policy: ...`); absent on ALLOW and WARN. */
  message?: string;
  /** The review the step is held for (ESCALATE). */
  escalationId?: string;
  /**
   * WARN: the text the PDP wants used instead. A guardrail cannot rewrite, so a WARN trips the wire
   * and the host may run again (input) or deliver (output) this text. Not enumerable, so that it stays
   * out of the tripwire error's message (the SDK puts `JSON.stringify(outputInfo)` there).
   */
  readonly transformedContent?: string;
}

const GUARD_TOOLS_OPTIONS: ReadonlySet<string> = new Set(['checkResult', 'hideBlocked']);
/** Most tool outputs {@link pepModelInputFilter} remembers; an older one forgotten is checked again. */
const EGRESS_MEMORY = 10_000;

/** The permit and decision of each call `guardTools` runs, keyed by the SDK's per-call details object. */
const contexts = new WeakMap<object, ToolExecutionContext>();

/**
 * The session of the step: the run's group id where the SDK carries one (`RunConfig.groupId`, visible
 * while tracing is on), else undefined (the client's session).
 */
function runSession(): string | undefined {
  try {
    return sessionOf({ thread: getCurrentTrace()?.groupId });
  } catch {
    return undefined;
  }
}

/** A BLOCK this adapter makes up itself when it cannot even build a request: observed like any synthesized BLOCK. */
function adapterBlock(pep: Pep, stage: Stage, message: string): PolicyDecision {
  return enforcementOf(pep, 'agent-pep/openai-agents').refuse({ stage }, 'invalid_request', message).decision;
}

/**
 * Wraps OpenAI Agents function tools so that each call runs only after the PDP allowed it and its
 * permit verified (docs/api.md and docs/adapters.md).
 *
 * The same kind of thing as `agent-pep/ai`'s `guardTools`, for an array of the SDK's function tools
 * rather than a tool set (docs/adapters.md "Names two entries share").
 *
 * @param pep - the client that decides (its `permits` must be configured, or `false` explicitly)
 * @param tools - function tools made with the SDK's `tool()`; the same objects are not changed
 * @param opts - `{ checkResult? }` (see {@link GuardToolsOptions})
 * @returns new tool objects in the same order, to give to `new Agent({ tools })`:
 *   - `needsApproval` asks the PDP with `simulated: true` (no permit is minted, no approval used up)
 *     and answers true on ESCALATE, so the call surfaces in `result.interruptions`; a tool's own
 *     `needsApproval` still applies;
 *   - `invoke` runs `pep.guardTool` on the model's arguments: the tool body runs exactly once, with
 *     the PDP's `transformedArgs` on WARN, only after an ALLOW or WARN whose permit verifies. A BLOCK,
 *     an ESCALATE, an outage or a permit that fails becomes the tool's output, the `toolMessage` text
 *     (`ERROR: Tool '<name>' denied by policy: <reason>` and the others), so the model can recover.
 * @throws TypeError when `tools` is not an array of function tools, for an unknown or bad option
 *   (`err.option` names it), or when the client has no `permits` configured (as `pep.guardTool`)
 * @remarks Fails closed: the body never runs on BLOCK, ESCALATE, a failed permit, a simulated
 * decision or an error of the adapter (arguments that are not a JSON object are answered
 * `invalid_request`). A host approval never bypasses the PDP: a run resumed approved asks the PDP
 * again for the identical call and runs the body only on an ALLOW whose permit verifies (a PDP that
 * still holds it answers ESCALATE, and the model is told the call is held). The permit binds the
 * arguments as the model sent them (or the PDP's `transformedArgs`); the tool's schema parses those.
 * The body finds its permit with {@link pepToolContext}.
 * @example
 * ```ts
 * const [refund] = guardTools(pep, [refundTool]);
 * const agent = new Agent({ name: 'support', tools: [refund] });
 * ```
 */
export function guardTools<const T extends readonly AnyFunctionTool[]>(
  pep: Pep,
  tools: T,
  opts?: GuardToolsOptions,
): { -readonly [K in keyof T]: T[K] } {
  if (opts !== undefined) {
    if (typeof opts !== 'object' || opts === null) optionError('guardTools', 'opts', 'expected an object');
    refuseUnknownKeys('guardTools', opts, GUARD_TOOLS_OPTIONS);
    if (opts.checkResult !== undefined && typeof opts.checkResult !== 'boolean') {
      optionError('guardTools', 'checkResult', 'expected a boolean');
    }
  }
  if (!Array.isArray(tools)) throw new TypeError('guardTools: tools must be an array of function tools');
  const checkResult = opts?.checkResult === true;
  const visible = readHideBlocked('guardTools', opts)
    ? perStepVisibility(
        pep,
        tools.map((t) => (t as { name?: unknown } | null)?.name).filter((n): n is string => typeof n === 'string'),
        () => runSession(),
      )
    : undefined;
  return tools.map((t, i) => {
    if (typeof t !== 'object' || t === null || t.type !== 'function' || typeof t.invoke !== 'function') {
      throw new TypeError(`guardTools: tools[${i}] is not a function tool (hosted and other tools cannot be guarded)`);
    }
    return guardOne(pep, t, checkResult, visible);
  }) as unknown as { -readonly [K in keyof T]: T[K] };
}

function guardOne(
  pep: Pep,
  original: AnyFunctionTool,
  checkResult: boolean,
  visible: ((step: object) => Promise<Set<string>>) | undefined,
): AnyFunctionTool {
  const name = original.name;
  /** The message a model sees for a tool call the adapter could not check (an observed refusal). */
  const notRunMessage = (tool: string, why = 'the tool call could not be checked'): string =>
    toolMessage(adapterBlock(pep, 'action', why), tool);
  const guardOptions = checkResult ? { checkResult: true } : undefined;
  // Made once now so that a client without `permits` (or a bad name) is a TypeError here, not at the first call.
  pep.guardTool(name, () => undefined, guardOptions);

  const needsApproval = async (runContext: RunContext, input: unknown, callId?: string): Promise<boolean> => {
    if (await original.needsApproval(runContext, input, callId)) return true;
    try {
      const raw = typeof input === 'string' ? (JSON.parse(input) as unknown) : input;
      const planned = argsBySchema(original.parameters, raw as Record<string, unknown>);
      if (planned.kind === 'refused') return false; // invoke refuses it
      const decision = await pep.authorizeAction(name, planned.args, {
        simulated: true,
        ...sessionOption(),
      });
      return decision.verdict === 'ESCALATE';
    } catch {
      // The real check in `invoke` decides (and fails closed); this one only chooses whether to ask a human.
      return false;
    }
  };

  const invoke = async (runContext: RunContext, input: string, details?: ToolCallDetails): Promise<unknown> => {
    let entered = false;
    try {
      const parsed = JSON.parse(input) as unknown;
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return notRunMessage(name);
      // The SDK hides the tool's own parser: defaults filled in from the JSON Schema, hidden coercions refused.
      const planned = argsBySchema(original.parameters, parsed as Record<string, unknown>);
      if (planned.kind === 'refused') return notRunMessage(name, planned.why);
      const args = planned.args;
      const callDetails: ToolCallDetails = details ?? {};
      const guarded = pep.guardTool(
        name,
        (effective, ctx) => {
          contexts.set(callDetails, ctx);
          entered = true;
          return original.invoke(runContext, JSON.stringify(effective), callDetails);
        },
        guardOptions,
      );
      const signal = details?.signal;
      return await guarded(args, { ...sessionOption(), ...(signal !== undefined ? { signal } : {}) });
    } catch (err) {
      if (err instanceof PolicyEnforcementError) return err.toolMessage;
      if (entered) throw err; // the tool's own error, after it ran: the SDK handles it as usual
      return notRunMessage(name);
    }
  };

  // hideBlocked: enabled only when the tool's own isEnabled says so and the policy shows it (one batch a turn).
  const isEnabled: AnyFunctionTool['isEnabled'] =
    visible === undefined
      ? original.isEnabled
      : async (runContext, agent) =>
          (await original.isEnabled(runContext, agent)) && (await visible(runContext)).has(name);
  return { ...original, needsApproval, invoke, isEnabled } as AnyFunctionTool;
}

/** `{ session }` for the run's group id, or nothing (the client's session). */
function sessionOption(): { session?: string } {
  const session = runSession();
  return session !== undefined ? { session } : {};
}

/**
 * The permit and decision of the guarded call a tool body is running for.
 *
 * @param details - the third argument the SDK passes a tool's `execute` (`execute(args, runContext, details)`)
 * @returns `{ permitId, decision, signal }` (see `ToolExecutionContext`), or undefined outside a call
 *   that {@link guardTools} authorized
 * @remarks Present the `permitId` to the side-effecting service, which verifies it (docs/permits.md); the adapter already verified it before the body was called.
 * @example
 * ```ts
 * const refundTool = tool({ name: 'refund_payment', description: 'Refund an order', parameters,
 *   execute: async (args, _ctx, details) => payments.refund(args, pepToolContext(details)?.permitId) });
 * ```
 */
export function pepToolContext(details: unknown): ToolExecutionContext | undefined {
  return typeof details === 'object' && details !== null ? contexts.get(details) : undefined;
}

/**
 * Asks the PDP about text at a stage through the enforcement layer and says whether the guardrail trips:
 * anything but a text that continues unchanged. A guardrail cannot rewrite the text, so a WARN (or an
 * interceptor's replacement) that changes it trips, with the replacement kept off the info's JSON.
 */
async function checkStage(pep: Pep, stage: 'input' | 'output', text: string | undefined): Promise<GuardrailVerdict> {
  const enforcement = enforcementOf(pep, 'agent-pep/openai-agents');
  const result =
    text === undefined
      ? enforcement.refuse({ stage }, 'invalid_request', `the ${stage} could not be read as text`)
      : await enforcement.decideText(stage, text, sessionOption());
  const { decision } = result;
  const info: PepGuardrailInfo = { verdict: decision.verdict, stage, requestId: decision.requestId };
  if (decision.decisionId !== undefined) info.decisionId = decision.decisionId;
  if (result.kind === 'refused') {
    info.code = result.code;
    info.message = result.toolMessage;
    if (decision.escalationId !== undefined) info.escalationId = decision.escalationId;
    return { tripwireTriggered: true, outputInfo: info };
  }
  // A WARN without a replacement still trips: the PDP asked for a change the guardrail cannot make.
  const unchanged = result.text === text && !(decision.verdict === 'WARN' && decision.transformedContent === undefined);
  if (unchanged) return { tripwireTriggered: false, outputInfo: info };
  // Not enumerable: the SDK serializes outputInfo into the tripwire error's message, which must carry no content.
  if (result.text !== text)
    Object.defineProperty(info, 'transformedContent', { value: result.text, enumerable: false });
  return { tripwireTriggered: true, outputInfo: info };
}

interface GuardrailVerdict {
  tripwireTriggered: boolean;
  outputInfo: PepGuardrailInfo;
}

/**
 * The text of a content part list: its text parts joined as the model reads them (one after the other,
 * so a latch split across parts still matches); undefined when there is none.
 */
function partsText(parts: unknown): string | undefined {
  if (typeof parts === 'string') return parts;
  if (!Array.isArray(parts)) return undefined;
  const texts: string[] = [];
  for (const part of parts) {
    if (typeof part === 'object' && part !== null) {
      const { type, text } = part as { type?: unknown; text?: unknown };
      if ((type === 'input_text' || type === 'text' || type === 'output_text') && typeof text === 'string') {
        texts.push(text);
      }
    }
  }
  return texts.length > 0 ? texts.join('') : undefined;
}

/** The user's text in the run's input: a string as is, else every user message's text, joined. */
function inputText(input: unknown): string | undefined {
  if (typeof input === 'string') return input;
  if (!Array.isArray(input)) return undefined;
  const texts: string[] = [];
  for (const item of input) {
    if (typeof item !== 'object' || item === null) continue;
    const { role, content } = item as { role?: unknown; content?: unknown };
    // A summary or memory recall the app marked is not the user's words: the model input filter checks it at context_egress.
    if (role !== 'user' || isDerivedItem(item)) continue;
    const text = partsText(content);
    if (text !== undefined) texts.push(text);
  }
  return texts.join('\n');
}

/**
 * An agent input guardrail that sends the user's input to the PDP (stage `input`) before the model
 * is called.
 *
 * @param pep - the client that decides
 * @returns an `InputGuardrail` named `agent-pep input` with `runInParallel: false`, for
 *   `new Agent({ inputGuardrails: [...] })` or `new Runner({ inputGuardrails: [...] })`
 * @throws never when made; the run rejects with the SDK's `InputGuardrailTripwireTriggered` when the
 *   wire trips, its `result.output.outputInfo` a {@link PepGuardrailInfo}
 * @remarks The wire trips on anything but an ALLOW: BLOCK (PDP, interceptor or synthesized, so a PDP
 * that is down or slow stops the run), ESCALATE, a simulated decision, and WARN, because an SDK
 * guardrail cannot rewrite the input: `outputInfo.transformedContent` holds the PDP's text for the host
 * to run again with. The model is never called when it trips. The text sent is the input string, or the
 * text parts of every user message in an input list (images and files are not sent).
 * @example
 * ```ts
 * const agent = new Agent({ name: 'support', inputGuardrails: [pepInputGuardrail(pep)] });
 * ```
 */
export function pepInputGuardrail(pep: Pep): InputGuardrail {
  return {
    name: 'agent-pep input',
    runInParallel: false,
    async execute({ input }) {
      try {
        return await checkStage(pep, 'input', inputText(input));
      } catch {
        return checkStage(pep, 'input', undefined);
      }
    },
  };
}

/**
 * An agent output guardrail that sends the agent's final output to the PDP (stage `output`).
 *
 * @param pep - the client that decides
 * @returns an `OutputGuardrail` named `agent-pep output`, for `new Agent({ outputGuardrails: [...] })`
 * @throws never when made; the run rejects with the SDK's `OutputGuardrailTripwireTriggered` when the
 *   wire trips, its `result.output.outputInfo` a {@link PepGuardrailInfo}
 * @remarks The wire trips on anything but an ALLOW, as for {@link pepInputGuardrail}; on WARN
 * `outputInfo.transformedContent` is the text to deliver instead (an SDK guardrail cannot rewrite
 * the output). A structured output is sent as JSON. A streamed run has already emitted its text
 * deltas when the guardrail runs: deliver `result.finalOutput` after `await result.completed`, not the
 * deltas, to deliver only checked output.
 * @example
 * ```ts
 * const agent = new Agent({ name: 'support', outputGuardrails: [pepOutputGuardrail(pep)] });
 * ```
 */
// biome-ignore lint/suspicious/noExplicitAny: fits an agent of any output type
export function pepOutputGuardrail(pep: Pep): OutputGuardrail<any> {
  return {
    name: 'agent-pep output',
    async execute({ agentOutput }) {
      let text: string | undefined;
      try {
        text = typeof agentOutput === 'string' ? agentOutput : JSON.stringify(agentOutput);
      } catch {
        text = undefined;
      }
      try {
        return await checkStage(pep, 'output', text);
      } catch {
        return checkStage(pep, 'output', undefined);
      }
    },
  };
}

/** A `function_call_result` item of the model input. */
interface ToolResultItem {
  type: 'function_call_result';
  name?: unknown;
  callId?: unknown;
  output: unknown;
}

/**
 * `providerData.agentPep.source` values that mark a user-role input item as text the app made from
 * earlier items or tool output (a summary, a condensed history, a memory recall; docs/adapters.md
 * "Text made from tool output"): the input guardrail leaves it out, and `pepModelInputFilter` checks
 * it at `context_egress`, never at `input`.
 */
const DERIVED_SOURCES: ReadonlySet<string> = new Set(['summary', 'history', 'memory', 'tool-output']);

/** Whether an input item is a user-role message the app marked as made from tool output. */
function isDerivedItem(item: unknown): boolean {
  if (typeof item !== 'object' || item === null || (item as { role?: unknown }).role !== 'user') return false;
  const source = (item as { providerData?: { agentPep?: { source?: unknown } } }).providerData?.agentPep?.source;
  return typeof source === 'string' && DERIVED_SOURCES.has(source);
}

/** Every `function_call_result`, whatever else it carries (a history item without a name is checked too). */
function isToolResult(item: unknown): item is ToolResultItem {
  return typeof item === 'object' && item !== null && (item as { type?: unknown }).type === 'function_call_result';
}

/** The text of a tool output: a string, one text part (`text`, `input_text`, ...), or the text parts of a list. */
function outputText(output: unknown): string | undefined {
  if (typeof output === 'string') return output;
  if (typeof output === 'object' && output !== null && !Array.isArray(output)) return partsText([output]);
  return partsText(output);
}

/**
 * A `callModelInputFilter` that sends each new tool output in the model's input to the PDP (stage
 * `context_egress`, with the tool's name) before it goes to the model, and each user-role item the app
 * marked as made from tool output (`providerData: { agentPep: { source: 'summary' } }`, also
 * `'history'`, `'memory'`, `'tool-output'`: a summary or a memory recall) at `context_egress` too.
 *
 * @param pep - the client that decides
 * @returns a filter for `run(agent, input, { callModelInputFilter })` or `new Runner({ callModelInputFilter })`
 * @param opts - `{ modelRequest? }` ({@link PepModelInputFilterOptions})
 * @throws TypeError when made, on a bad option or a `pep` that is not a client; the filter itself throws only to stop
 *   a model request its settings check refused (the run then rejects with that {@link PolicyEnforcementError})
 * @remarks Each `function_call_result` is checked once (the outcome is remembered by session, call id
 * and output, and applied again on later turns, since the SDK rebuilds the input from the run's
 * items): ALLOW sends it as it is, WARN replaces it with the PDP's `transformedContent`, and BLOCK or
 * ESCALATE withhold it: the model sees the `toolMessage` text in its place (`ERROR: context_egress blocked
 * by policy: <reason>`, `... was not checked: the policy check failed (<code>)` when the PDP is down or
 * slow) and the run goes on. An outage is not remembered: that output is checked again next turn. Only text is checked: an output with no text part (an image, a file) is
 * passed as it is. Other input items are not changed.
 * @example
 * ```ts
 * const result = await run(agent, 'Where is my order?', { callModelInputFilter: pepModelInputFilter(pep) });
 * ```
 */
export function pepModelInputFilter(pep: Pep, opts?: PepModelInputFilterOptions): CallModelInputFilter {
  const enforcement = enforcementOf(pep, 'pepModelInputFilter');
  if (opts !== undefined && (typeof opts !== 'object' || opts === null)) {
    optionError('pepModelInputFilter', 'opts', 'expected an object');
  }
  refuseUnknownKeys('pepModelInputFilter', opts ?? {}, new Set(['modelRequest']));
  if (opts?.modelRequest !== undefined && typeof opts.modelRequest !== 'boolean') {
    optionError('pepModelInputFilter', 'modelRequest', 'expected a boolean');
  }
  const caps = checksModelRequests(enforcement, opts?.modelRequest);
  /** Outcome by key: the output to send instead, or null for the original. */
  const seen = new TextMemory<string | null>(EGRESS_MEMORY);

  async function checkOne(item: ToolResultItem): Promise<unknown> {
    let text: string | undefined;
    try {
      text = outputText(item.output);
    } catch {
      text = undefined;
    }
    if (text === undefined) return item;
    const opts: EgressCallOptions = { ...sessionOption() };
    if (typeof item.name === 'string' && item.name !== '') opts.tool = item.name;
    const replacement = await replacementFor(text, opts, String(item.callId));
    return replacement === null ? item : { ...item, output: replacement };
  }

  /** A user-role item made from tool output (a summary, a recall): its text checked at context_egress. */
  async function checkDerived(item: { content?: unknown }): Promise<unknown> {
    const text = partsText(item.content);
    if (text === undefined) return item;
    const replacement = await replacementFor(text, { ...sessionOption() }, 'derived');
    return replacement === null ? item : { ...item, content: replacement };
  }

  /** What to send in place of `text` (null: as it is), remembered by session, place and text. */
  async function replacementFor(text: string, opts: EgressCallOptions, place: string): Promise<string | null> {
    const key = JSON.stringify([opts.session ?? null, place, createHash('sha256').update(text).digest('base64url')]);
    let replacement = seen.get(key);
    if (replacement === undefined) {
      const outcome = await egressReplacement(pep, text, opts);
      replacement = outcome.replacement;
      // A PDP's own decision is remembered; a synthesized BLOCK (an outage) is not, so the output is
      // checked again on the next turn rather than withheld for good once the PDP is back.
      if (outcome.decided) seen.set(key, replacement);
    }
    return replacement;
  }

  return async ({ modelData, agent }): Promise<ModelInputData> => {
    // The model request's settings first: a deny or BLOCK (or a change this filter cannot apply) throws, and the run stops.
    const instructions = caps ? await cappedInstructions(enforcement, agent, modelData.instructions) : undefined;
    const input = await Promise.all(
      modelData.input.map(async (item) => {
        const derived = isDerivedItem(item);
        if (!isToolResult(item) && !derived) return item;
        try {
          return (
            derived ? await checkDerived(item as { content?: unknown }) : await checkOne(item as ToolResultItem)
          ) as typeof item;
        } catch {
          if (derived) {
            return {
              ...item,
              content: toolMessage(adapterBlock(pep, 'context_egress', 'could not be checked')),
            } as typeof item;
          }
          return {
            ...item,
            output: toolMessage(adapterBlock(pep, 'context_egress', 'could not be checked')),
          } as typeof item;
        }
      }),
    );
    return instructions === undefined ? { ...modelData, input } : { ...modelData, input, instructions };
  };
}

/** Options of {@link pepModelInputFilter}. */
export interface PepModelInputFilterOptions {
  /**
   * Check each model call's settings (docs/interceptors.md, "Model requests"): the agent's `model`
   * (when a string), `instructions` as `system`, and its `modelSettings` `temperature`, `topP` and
   * `maxTokens` (as `maxOutputTokens`). A replaced `instructions` is applied; a filter cannot change
   * the model or its settings, so a cap or a replacement of those stops the run (`ambiguous_decision`),
   * as a deny or a BLOCK does. @defaultValue true when the client has `modelRequest` interceptors, else false
   */
  modelRequest?: boolean;
}

/** The instructions to send after the settings were checked; throws the refusal that stops the run. */
async function cappedInstructions(
  enforcement: ReturnType<typeof enforcementOf>,
  agent: unknown,
  instructions: string | undefined,
): Promise<string | undefined> {
  const a = agent as {
    model?: unknown;
    modelSettings?: { temperature?: unknown; topP?: unknown; maxTokens?: unknown };
  };
  const asked: ModelRequest = {};
  if (typeof a?.model === 'string' && a.model !== '') asked.model = a.model;
  if (typeof instructions === 'string') asked.system = instructions;
  const s = a?.modelSettings ?? {};
  if (typeof s.temperature === 'number') asked.temperature = s.temperature;
  if (typeof s.topP === 'number') asked.topP = s.topP;
  if (typeof s.maxTokens === 'number') asked.maxOutputTokens = s.maxTokens;
  const cannot = ['model', 'temperature', 'topP', 'maxOutputTokens'] as const;
  const allowed = await decideSettings(enforcement, asked, sessionOption(), cannot);
  if (allowed instanceof Error) throw allowed;
  return allowed.system;
}

/**
 * What to send in place of a tool output's text (`replacement`: null to send it as it is), and whether
 * the PDP decided it (`decided`: false for a synthesized BLOCK, which is not remembered).
 */
async function egressReplacement(
  pep: Pep,
  text: string,
  opts: EgressCallOptions,
): Promise<{ replacement: string | null; decided: boolean }> {
  const result = await enforcementOf(pep, 'agent-pep/openai-agents').decideText('context_egress', text, opts);
  const decided = result.decision.synthesized === undefined;
  if (result.kind === 'refused') return { replacement: result.toolMessage, decided };
  return { replacement: result.text === text ? null : result.text, decided };
}
