/**
 * One hook event answered, the same way by the process hook (`agent-pep hook <host>`) and the HTTP
 * endpoint (`agent-pep hook serve`): the event's bytes read with the one JSON body decoder, the step
 * decided through the enforcement layer every adapter uses, the answer written by the Claude Code wire
 * (`wire.ts`) and rendered in the host's shape (`hosts/`). A failure of any part is the host's deny.
 * @internal
 */
import type { PolicyDecision } from '../decision.js';
import { kernelOf } from '../enforce/registry.js';
import { jsonWhere } from '../internal/json-position.js';
import type { Pep } from '../pep.js';
import { decodeJsonBody } from '../wire/json.js';
import { type AnswerContext, contextOf, type HostStep, type HostWire, type Outcome, outcomeOf } from './hosts/host.js';
import {
  answerAction,
  answerPostToolUse,
  answerPrompt,
  failureAnswer,
  type HookAnswer,
  HookEventError,
  type HookHost,
} from './wire.js';

/** What an answer says, for a log line: the outcome's kind, or `failed` when the hook failed closed. */
export type AnswerLabel = Outcome['kind'] | 'failed';

/** An answer in the host's shape, and what it says. */
export interface HostAnswer {
  answer: HookAnswer;
  label: AnswerLabel;
  /** The fail-closed code of a synthesized decision (`pdp_status`, `permit_invalid`, ...), for the log; else undefined. */
  code?: string | undefined;
}

/**
 * Reads a hook event's bytes (`wire/json.ts`: UTF-8 without a BOM, JSON, I-JSON).
 * @param source - where the bytes came from, for the message on an empty event
 * @throws HookEventError naming the problem (never the content)
 */
export function parseEvent(bytes: Buffer, source: 'stdin' | 'the request body'): unknown {
  const d = decodeJsonBody(bytes);
  if (d.ok) return d.value;
  switch (d.problem) {
    case 'utf8':
      throw new HookEventError('the hook event is not valid UTF-8');
    case 'json': {
      const text = d.text ?? '';
      if (text.trim() === '') throw new HookEventError(`the hook event is not JSON: ${source} is empty`);
      throw new HookEventError(`the hook event is not JSON${jsonWhere(text)}`);
    }
    case 'duplicate':
      // I-JSON: a name given twice reads one way here (the last wins) and may read another way to the host
      throw new HookEventError('the hook event names a member twice');
    default:
      // Values are read by the step that uses them: an output too deep to read is answered in the
      // host's PostToolUse form, its output withheld (docs/adapters.md).
      return d.value;
  }
}

/** The host whose Claude Code wire answers are rendered: Codex's own, Claude Code's for every other host. */
function baseOf(wire: HostWire): HookHost {
  return wire.name === 'codex' ? 'codex' : 'claude-code';
}

/**
 * Decides one step and answers it in the host's shape: PreToolUse as an action, UserPromptSubmit as
 * input, PostToolUse through the `after` chain and the context_egress check of the output as the model
 * reads it.
 * @param escalate - what ESCALATE becomes (`ask` only for a host that can ask)
 */
export async function answerStep(
  pep: Pep,
  wire: HostWire,
  step: HostStep,
  escalate: 'ask' | 'deny',
): Promise<HostAnswer> {
  const enforcement = kernelOf(pep);
  if (enforcement === undefined) throw new Error('the client has no enforcement layer');
  const host = baseOf(wire);
  const opts = { session: step.session };
  let base: HookAnswer;
  let decision: PolicyDecision | undefined;
  switch (step.event) {
    case 'PreToolUse': {
      const r = await enforcement.decideAction(step.tool, step.args, opts);
      decision = r.decision;
      base = withFailureDetail(answerAction(host, step, r, { escalate }), r.decision);
      if (r.kind === 'verified' && step.readContent !== undefined) {
        base = (await checkRead(enforcement, host, step, step.readContent)) ?? base;
      }
      break;
    }
    case 'PostToolUse': {
      const ran = { args: step.args ?? {}, session: step.session, signal: undefined };
      const r = await enforcement.finishAction(step.tool, ran, step.response, true);
      decision = r.kind === 'refused' ? r.decision : undefined;
      base = withFailureDetail(answerPostToolUse(host, step, r), decision);
      break;
    }
    default: {
      const r = await enforcement.decideText('input', step.content, opts);
      decision = r.decision;
      base = withFailureDetail(answerPrompt(host, step, r), r.decision);
    }
  }
  const label: AnswerLabel = base.exitCode === 2 ? 'failed' : outcomeOf(step.event, base).kind;
  return { answer: wire.render(contextOf(step), base), label, code: decision?.synthesized?.code };
}

/**
 * A file read allowed as an action, its content checked as the output the model would read (the
 * `after` chain and context_egress): `undefined` when it goes on unchanged, else a deny with the
 * check's reason (a host cannot change what a read gives, so a redaction is a deny too).
 */
async function checkRead(
  enforcement: NonNullable<ReturnType<typeof kernelOf>>,
  host: HookHost,
  step: HostStep & { event: 'PreToolUse' },
  content: string,
): Promise<HookAnswer | undefined> {
  const ran = { args: step.args, session: step.session, signal: undefined };
  const fin = await enforcement.finishAction(step.tool, ran, content, true);
  if (fin.kind === 'released' && fin.result === content) return undefined;
  const post = { event: 'PostToolUse' as const, session: step.session, tool: step.tool, response: content, content };
  const blocked = withFailureDetail(
    answerPostToolUse(host, post, fin),
    fin.kind === 'refused' ? fin.decision : undefined,
  );
  const reason =
    typeof blocked.stdout.reason === 'string' ? blocked.stdout.reason : 'ERROR: the file read is withheld by policy';
  const stdout = {
    hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason },
  };
  return { stdout, stderr: blocked.stderr, exitCode: blocked.exitCode };
}

/**
 * The host's answer when the hook itself fails (bad input, its own deadline, an exception): a deny in
 * the event's form when the kind is known, else the host's generic deny.
 * @param response - a PostToolUse event's `tool_response`, when it was read (withheld in the answer)
 */
export function failedAnswer(wire: HostWire, context: AnswerContext, reason: string, response?: unknown): HookAnswer {
  return wire.render(context, failureAnswer(baseOf(wire), context.event, reason, response));
}

/** The context a failure is answered in: the step's, else what the error knows of the event. */
export function failureContext(error: unknown, step: HostStep | undefined): AnswerContext {
  if (step !== undefined) return contextOf(step);
  return { event: error instanceof HookEventError ? error.event : undefined };
}

/**
 * A failed-closed answer's stderr line (exit 2) with what the PEP knows of the failure: the
 * synthesized BLOCK's message, which names the PDP's error code (`unknown_agent`, `not_found`) and
 * the URL tried, so a misconfiguration says what it is (docs/cli.md). Never args, content or a key.
 */
function withFailureDetail(answer: HookAnswer, decision: PolicyDecision | undefined): HookAnswer {
  const detail = decision?.synthesized?.message;
  if (answer.stderr === undefined || detail === undefined || detail === '') return answer;
  return { ...answer, stderr: `${answer.stderr}: ${detail.split('\n')[0]}` };
}
