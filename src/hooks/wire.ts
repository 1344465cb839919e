/**
 * The wire of `agent-pep hook claude-code|codex` (docs/adapters.md): a host's hook event (stdin
 * JSON) read into a step, and a decision turned into the host's answer (stdout JSON and exit code).
 * Pure: no I/O, so every mapping is unit-testable.
 *
 * Codex reads the Claude Code wire, with differences this module relies on (read in
 * openai/codex `codex-rs/hooks/src/engine/output_parser.rs`):
 * - PreToolUse `permissionDecision: "ask"` is unsupported there and fails open (the tool runs), so a
 *   Codex ESCALATE is always a deny; a bare `allow` (without `updatedInput`) is reported as a hook failure,
 *   so a Codex ALLOW prints `{}`; `continue`, `stopReason` and `suppressOutput` are refused on PreToolUse.
 * - PostToolUse cannot replace a tool's output (an `updatedMCPToolOutput` is refused and fails open), so a
 *   Codex PostToolUse block also sets `continue: false`, which stops the turn.
 * - exit 2 blocks only when stderr carries a reason, so every exit-2 answer writes one.
 * @internal
 */
import { isDeepStrictEqual } from 'node:util';
import { type PolicyDecision, synthesizeBlock } from '../decision.js';
import type { ActionResult, FinishResult, Refused, TextResult } from '../enforce/results.js';
import { refusedBy } from '../enforce/results.js';
import { actionRule, SIMULATED_MESSAGE, textRule } from '../enforce/rules.js';
import { resultText } from '../enforce/text.js';
import { toolMessage } from '../errors.js';
import { isPlainObject } from '../internal/guards.js';
import { sessionOf } from '../internal/session.js';

/** The two hosts whose command hooks this answers. */
export type HookHost = 'claude-code' | 'codex';

/** The event kinds the hook answers; any other is refused (fail closed). */
export const HOOK_EVENTS = ['PreToolUse', 'PostToolUse', 'UserPromptSubmit'] as const;

/** One of {@link HOOK_EVENTS}. */
export type HookEventName = (typeof HOOK_EVENTS)[number];

/** A hook event read from stdin, reduced to what the PEP sends. */
export type HookStep =
  | { event: 'PreToolUse'; session: string; tool: string; args: Record<string, unknown> }
  | {
      event: 'PostToolUse';
      session: string;
      tool: string;
      response: unknown;
      content: string;
      /** The tool input the host ran, when the event carries it as an object. */
      args?: Record<string, unknown>;
    }
  | { event: 'UserPromptSubmit'; session: string; content: string };

/** What the command prints and how it exits. */
export interface HookAnswer {
  /** The JSON object printed on stdout. */
  stdout: Record<string, unknown>;
  /** A line for stderr (the reason a host reads on exit 2), or undefined. */
  stderr: string | undefined;
  /** 0 for a policy answer, 2 for a failure of the hook itself (both hosts block on exit 2 with a stderr reason). */
  exitCode: 0 | 2;
}

/** A hook event that cannot be answered; the message names the problem, never the content. */
export class HookEventError extends Error {
  override readonly name = 'HookEventError';
  /** The event kind, when it was read before the problem. */
  readonly event: HookEventName | undefined;
  constructor(message: string, event?: HookEventName) {
    super(message);
    this.event = event;
  }
}

function nonEmptyString(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0;
}

/**
 * A tool result as the text checked at `context_egress`: the text a model reads (a string as is,
 * anything else its JSON followed by every string in it that holds a line break; docs/adapters.md).
 */
export function responseText(response: unknown): string {
  return resultText(response);
}

/**
 * Reads one parsed hook event.
 * @throws HookEventError for an unknown event kind, a missing `session_id`, or fields of the wrong type
 */
export function readHookEvent(value: unknown): HookStep {
  if (!isPlainObject(value)) throw new HookEventError('the hook event is not a JSON object');
  const name = value.hook_event_name;
  if (typeof name !== 'string' || !(HOOK_EVENTS as readonly string[]).includes(name)) {
    throw new HookEventError('unknown hook event kind');
  }
  const event = name as HookEventName;
  // The host's conversation id is the session (the one rule, internal/session.ts); a hook has no other.
  const session = sessionOf({ thread: value.session_id });
  if (session === undefined) throw new HookEventError('the hook event has no session_id', event);
  switch (event) {
    case 'PreToolUse': {
      if (!nonEmptyString(value.tool_name)) throw new HookEventError('PreToolUse without tool_name', event);
      if (!isPlainObject(value.tool_input)) throw new HookEventError('PreToolUse tool_input is not an object', event);
      return { event, session, tool: value.tool_name, args: value.tool_input };
    }
    case 'PostToolUse': {
      if (!nonEmptyString(value.tool_name)) throw new HookEventError('PostToolUse without tool_name', event);
      if (!Object.hasOwn(value, 'tool_response')) throw new HookEventError('PostToolUse without tool_response', event);
      const response = value.tool_response;
      let content: string;
      try {
        content = responseText(response);
      } catch {
        // JSON.stringify of an output nested too deep for the stack: refused in this event's form
        throw new HookEventError('PostToolUse tool_response cannot be read as text', event);
      }
      const step: HookStep = { event, session, tool: value.tool_name, response, content };
      if (isPlainObject(value.tool_input)) step.args = value.tool_input;
      return step;
    }
    default: {
      if (typeof value.prompt !== 'string') throw new HookEventError('UserPromptSubmit prompt is not a string', event);
      return { event, session, content: value.prompt };
    }
  }
}

const WITHHELD = '[withheld by policy]';

/**
 * A key a tool's output shape uses (`stdout`, `filePath`, `is_error`, `structuredPatch`), not data: at
 * most 40 characters of words, each a lowercase word (or one capitalised), at most 16 letters and
 * two digits, or an acronym of at most 4 capitals, joined by `_`, `-` or a change of case. A key
 * shaped like a credential (`AKIAIOSFODNN7EXAMPLE`, `ghp_16C7e42F...`, `sk_live_4eC39H...`) is none of these.
 */
const SHAPE_KEY =
  /^(?=.{1,40}$)_?(?:[a-z]{1,16}|[A-Z][a-z]{1,15}|[A-Z]{1,4}(?![A-Za-z]))[0-9]{0,2}(?:(?:[_-](?:[a-z]{1,16}|[A-Z][a-z]{1,15}|[A-Z]{1,4}(?![A-Za-z]))|(?:[A-Z][a-z]{1,15}|[A-Z]{1,4}(?![A-Za-z])))[0-9]{0,2})*$/;

/** Whether an output key is kept as it is in a withheld output (the shape), or withheld too. */
export function isShapeKey(key: string): boolean {
  return SHAPE_KEY.test(key);
}

/**
 * The output a model sees in place of a withheld tool result: every string replaced by the withheld
 * text and every number by 0, the shape kept, since Claude Code ignores an `updatedToolOutput` that is
 * not of the tool's output shape (to 64 levels; anything nested deeper is replaced whole, never passed
 * on as it is). Booleans and null are kept; so are keys shaped like a tool's output fields
 * ({@link isShapeKey}); any other key (a credential, a card number, an e-mail, a path) is withheld
 * too, numbered to stay distinct.
 */
export function withheld(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return WITHHELD;
  if (typeof value === 'number') return 0;
  if (typeof value !== 'object' || value === null) return value;
  if (depth > 64) return WITHHELD;
  if (Array.isArray(value)) return value.map((v) => withheld(v, depth + 1));
  let n = 0;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const key = isShapeKey(k) ? k : `${WITHHELD} ${++n}`;
    Object.defineProperty(out, key, {
      value: withheld(v, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

function preToolUse(
  host: HookHost,
  decision: 'allow' | 'deny' | 'ask',
  reason?: string,
  updatedInput?: Record<string, unknown>,
): Record<string, unknown> {
  if (host === 'codex' && decision === 'allow' && updatedInput === undefined) return {};
  const out: Record<string, unknown> = { hookEventName: 'PreToolUse', permissionDecision: decision };
  if (reason !== undefined) out.permissionDecisionReason = reason;
  if (updatedInput !== undefined) out.updatedInput = updatedInput;
  return { hookSpecificOutput: out };
}

/** A block of a text event (`UserPromptSubmit`, `PostToolUse`) in the host's form. */
function textBlock(host: HookHost, event: 'PostToolUse' | 'UserPromptSubmit', reason: string, response?: unknown) {
  const out: Record<string, unknown> = { decision: 'block', reason };
  if (host === 'codex') {
    // Codex cannot withhold a tool's output: stop the turn so the model is not called with it.
    if (event === 'PostToolUse') Object.assign(out, { continue: false, stopReason: reason });
    return out;
  }
  if (event === 'UserPromptSubmit') {
    out.hookSpecificOutput = { hookEventName: 'UserPromptSubmit', suppressOriginalPrompt: true };
  } else {
    out.hookSpecificOutput = { hookEventName: 'PostToolUse', updatedToolOutput: withheld(response) };
  }
  return out;
}

/** Options of {@link answerFor}. */
export interface AnswerOptions {
  /** What ESCALATE becomes: `ask` (the host's own prompt is the approval) or `deny` with the held text. */
  escalate: 'ask' | 'deny';
}

/** A refusal of a simulated decision, made by the pure mapping (the kernel observes its own). */
function simulatedRefusal(decision: PolicyDecision, tool: string | undefined): Refused {
  return refusedBy(synthesizeBlock(decision.stage, decision.requestId, 'simulated', SIMULATED_MESSAGE, 0), tool);
}

/**
 * The host's answer to a decision on a step (the decision mapped by the enforcement rules: what a
 * BLOCK, ESCALATE or simulated decision stops, and the args or text that continue).
 */
export function answerFor(host: HookHost, step: HookStep, decision: PolicyDecision, opts: AnswerOptions): HookAnswer {
  if (step.event === 'PreToolUse') {
    const rule = actionRule(decision, step.args);
    const r: ActionResult =
      rule.kind === 'go'
        ? {
            kind: 'verified',
            args: rule.value,
            permitId: decision.permitId,
            decision,
            session: step.session,
            signal: undefined,
          }
        : rule.kind === 'refuse'
          ? refusedBy(decision, step.tool)
          : simulatedRefusal(decision, step.tool);
    return answerAction(host, step, r, opts);
  }
  const rule = textRule(decision, step.content);
  const r: TextResult =
    rule.kind === 'go'
      ? { kind: 'passed', text: rule.value, decision }
      : rule.kind === 'refuse'
        ? refusedBy(decision, undefined)
        : simulatedRefusal(decision, undefined);
  if (step.event === 'UserPromptSubmit') return answerPrompt(host, step, r);
  const changed = r.kind === 'passed' && r.text !== step.content;
  const fin: FinishResult = r.kind === 'refused' ? r : { kind: 'released', result: changed ? r.text : step.response };
  return answerPostToolUse(host, step, fin, r.decision);
}

const ok = (stdout: Record<string, unknown>): HookAnswer => ({ stdout, stderr: undefined, exitCode: 0 });
/** A refusal's answer: a synthesized BLOCK (the PEP failed closed) exits 2 with the reason on stderr. */
const stop = (r: Refused, stdout: Record<string, unknown>, message: string): HookAnswer =>
  r.decision.synthesized !== undefined ? { stdout, stderr: message, exitCode: 2 } : ok(stdout);

/**
 * The answer to PreToolUse: allow (with `updatedInput` when the args that run differ from the host's,
 * or on WARN), deny with the `toolMessage`, or on ESCALATE `ask` (Claude Code, unless `escalate: 'deny'`).
 * An interceptor's substitute is a deny whose reason is its result (the tool never runs).
 */
export function answerAction(
  host: HookHost,
  step: Extract<HookStep, { event: 'PreToolUse' }>,
  r: ActionResult,
  opts: AnswerOptions,
): HookAnswer {
  if (r.kind === 'verified') {
    const changed = r.decision.verdict === 'WARN' || !isDeepStrictEqual(r.args, step.args);
    return ok(preToolUse(host, 'allow', undefined, changed ? r.args : undefined));
  }
  if (r.kind === 'substituted') return ok(preToolUse(host, 'deny', resultText(r.result)));
  if (r.decision.verdict === 'ESCALATE') {
    return ok(preToolUse(host, host === 'codex' || opts.escalate === 'deny' ? 'deny' : 'ask', r.toolMessage));
  }
  return stop(r, preToolUse(host, 'deny', r.toolMessage), r.toolMessage);
}

/** The answer to UserPromptSubmit: nothing on a pass with the same text; else a block (no host can rewrite a prompt). */
export function answerPrompt(
  host: HookHost,
  step: Extract<HookStep, { event: 'UserPromptSubmit' }>,
  r: TextResult,
): HookAnswer {
  if (r.kind === 'passed' && r.text === step.content) return ok({});
  const refused = r.kind === 'refused' ? r : refusedBy(r.decision, undefined);
  return stop(refused, textBlock(host, step.event, refused.toolMessage), refused.toolMessage);
}

/**
 * The answer to PostToolUse after the `after` interceptors and the result check: nothing when the
 * output goes on as it is; on Claude Code a changed output as `updatedToolOutput` (a string as is; an
 * object only when the text is JSON of one, else a block); a refusal withholds the output (Codex: stops the turn).
 */
export function answerPostToolUse(
  host: HookHost,
  step: Extract<HookStep, { event: 'PostToolUse' }>,
  r: FinishResult,
  changedBy?: PolicyDecision,
): HookAnswer {
  if (r.kind === 'released') {
    if (r.result === step.response) return ok({});
    if (host === 'claude-code') {
      const replaced =
        typeof r.result === 'string' ? replacedOutput(step.response, r.result) : { ok: true as const, value: r.result };
      if (replaced.ok) {
        return ok({ hookSpecificOutput: { hookEventName: 'PostToolUse', updatedToolOutput: replaced.value } });
      }
    }
  }
  // Refused, or changed where the host cannot take the change: withheld.
  const refused = r.kind === 'refused' ? r : refusedBy(changedBy ?? CHANGED, undefined);
  // The output check's refusal reads in its stage's form, naming the tool; an `after` interceptor's as the tool's.
  const reason =
    refused.decision.stage === 'action'
      ? refused.toolMessage
      : `${toolMessage(refused.decision)} (tool '${step.tool}')`;
  return stop(refused, textBlock(host, step.event, reason, step.response), reason);
}

/** What stands for a change the host cannot take, when no decision made it (an `after` interceptor's). */
const CHANGED: PolicyDecision = {
  verdict: 'BLOCK',
  stage: 'context_egress',
  requestId: '',
  reason: 'the output was changed and cannot be replaced here',
};

/** The transformed text as a tool output of the original's shape, or not ok. */
function replacedOutput(
  original: unknown,
  transformed: string | undefined,
): { ok: true; value: unknown } | { ok: false } {
  if (transformed === undefined) return { ok: false };
  if (typeof original === 'string') return { ok: true, value: transformed };
  try {
    const value = JSON.parse(transformed) as unknown;
    const sameKind = Array.isArray(original) === Array.isArray(value) && typeof value === typeof original;
    return sameKind && value !== null ? { ok: true, value } : { ok: false };
  } catch {
    return { ok: false };
  }
}

/**
 * The answer when the hook itself fails (bad stdin, unknown event, its own deadline, an exception):
 * a deny in the event's form when the kind is known, else a generic block, and exit 2 with the reason on stderr.
 * @param response - a PostToolUse event's `tool_response`, when it was read: Claude Code's answer then
 *   withholds it (as on a PDP BLOCK), so the output does not stay in the model's context
 */
export function failureAnswer(
  host: HookHost,
  event: HookEventName | undefined,
  reason: string,
  response?: unknown,
): HookAnswer {
  const message = `ERROR: agent-pep hook failed closed: ${reason}`;
  let stdout: Record<string, unknown>;
  if (event === 'PreToolUse') stdout = preToolUse(host, 'deny', message);
  else if (event === 'PostToolUse') stdout = textBlock(host, event, message, response);
  else if (event === 'UserPromptSubmit') stdout = textBlock(host, event, message);
  else stdout = { decision: 'block', reason: message };
  return { stdout, stderr: message, exitCode: 2 };
}
