/**
 * Pure latch evaluation (docs/dev-pdp.md): which latches engage, which verdict wins, which
 * reason is given, and how a text WARN redacts.
 * @packageDocumentation
 */
import type { Stage, Verdict } from 'agent-pep/internal';
import { capModelSettings, type ModelSettingsSpec } from './model-settings.js';
import { lookup, setPath } from './paths.js';
import type { CompiledCondition, CompiledLatch, CompiledPolicy, RouteSpec } from './policy.js';
import {
  type CallFacts,
  callConditionsHold,
  historyConditionsHold,
  labelConditionsHold,
  NO_CALL_FACTS,
  needsHistory,
} from './sessions/evaluate.js';
import { EMPTY_SESSION, type SessionView } from './sessions/state.js';

/** What one decision is asked about. Tool names must already be normalized. */
export interface EvaluationInput {
  stage: Stage;
  /** Action stage, and context_egress when given: the normalized tool name. */
  tool?: string;
  /** Action stage: the args (a plain object of JSON values). */
  args?: Record<string, unknown>;
  /** Text stages: the content. */
  content?: string;
  /** The session's state before this step (labels and history). @defaultValue an empty session */
  session?: SessionView;
  /** What the `granted`, `flows` and `sameOrigin` conditions read about the call. @defaultValue no call */
  facts?: CallFacts;
  /** `'model_request'`: a model-request check (context_egress); only then do `purpose` latches engage. */
  purpose?: 'model_request';
}

/** The outcome of evaluating a policy. */
export interface Evaluation {
  verdict: Verdict;
  /** Reason of the first latch, in policy order, whose verdict won. */
  reason?: string;
  /** Every engaged latch id, in policy order. */
  latches: string[];
  /** The labels of every engaged latch, each once, in policy order (added to the session); absent when none. */
  labels?: string[];
  /** Text stage WARN only: the content with every engaged `redact` applied, in policy order. */
  transformedContent?: string;
  /**
   * Action WARN only, when an engaged latch has `setArgs`: a copy of the args with every engaged
   * `setArgs` path set, in policy order (a later latch wins on the same path).
   */
  transformedArgs?: Record<string, unknown>;
  /** The `mode: "audit"` latches that engaged, with their verdicts, in policy order; absent when none. */
  audit?: { latch: string; verdict: Verdict }[];
  /** Action WARN only, when an engaged latch has `route`: the sandbox the action runs in. */
  route?: RouteSpec;
}

/** The reason of a stage's `default` BLOCK (no enforced latch engaged). */
export const DEFAULT_BLOCK_REASON = "no latch matched: the policy's default for this stage is BLOCK";

/** BLOCK > ESCALATE > WARN > ALLOW. */
const SEVERITY: Readonly<Record<Verdict, number>> = Object.freeze({ ALLOW: 0, WARN: 1, ESCALATE: 2, BLOCK: 3 });

/** True when the condition holds for `args`. Exported for tests. @internal */
export function conditionHolds(condition: CompiledCondition, args: Record<string, unknown> | undefined): boolean {
  const { found, value } = lookup(args, condition.path);
  switch (condition.op) {
    case 'eq':
      return found && value === condition.value;
    case 'ne':
      return !found || value !== condition.value;
    case 'gt':
      return found && typeof value === 'number' && value > condition.value;
    case 'gte':
      return found && typeof value === 'number' && value >= condition.value;
    case 'lt':
      return found && typeof value === 'number' && value < condition.value;
    case 'lte':
      return found && typeof value === 'number' && value <= condition.value;
    case 'in':
      return found && condition.value.some((candidate) => candidate === value);
    case 'exists':
      return condition.value ? found : !found;
    case 'matches':
      return found && typeof value === 'string' && condition.value.test(value);
    case 'notMatches':
      return !(found && typeof value === 'string' && condition.value.test(value));
  }
}

/** Everything but the history conditions: stage, tool, content, when, and the label conditions. */
function engagesBeforeHistory(latch: CompiledLatch, input: EvaluationInput, session: SessionView): boolean {
  if (!latch.stages.has(input.stage)) return false;
  if (latch.purpose !== undefined && latch.purpose !== input.purpose) return false;
  if (latch.tool && (input.tool === undefined || !latch.tool.test(input.tool))) return false;
  if (!labelConditionsHold(latch.session, session)) return false;
  if (!callConditionsHold(latch.session, input.facts ?? NO_CALL_FACTS)) return false;
  if (!latch.when.every((condition) => conditionHolds(condition, input.args))) return false;
  return !latch.content || (input.content !== undefined && latch.content.test(input.content));
}

/**
 * The engaged latches, in policy order. The history conditions of every latch still in the running
 * are decided together, in one pass over the history.
 */
function engagedLatches(policy: CompiledPolicy, input: EvaluationInput): CompiledLatch[] {
  const session = input.session ?? EMPTY_SESSION;
  const candidates = policy.latches.filter((latch) => engagesBeforeHistory(latch, input, session));
  const historical = candidates.filter((latch) => needsHistory(latch.session));
  if (historical.length === 0) return candidates;
  const held = historyConditionsHold(
    historical.map((latch) => latch.session),
    session.history,
  );
  const failing = new Set(historical.filter((_, i) => !held[i]));
  return candidates.filter((latch) => !failing.has(latch));
}

/**
 * Evaluates a compiled policy for one request. Pure: no I/O; the session's state is read, never changed.
 *
 * @param policy - from `compilePolicy`
 * @param input - stage, and the normalized tool and args (action) or the content (text stages), and
 *   the session's state before the step (`session`; an empty session when absent)
 * @returns the verdict, the deciding reason, every engaged latch id, the labels they add and, on a text WARN, the
 *   redacted content (the original when no engaged latch redacts, so a text WARN is always enforceable);
 *   `mode: "audit"` latches only in `audit`, never in the verdict, latches, labels or redactions; when no enforced latch engaged, the
 *   stage's `default` (BLOCK with {@link DEFAULT_BLOCK_REASON}, or ALLOW); on a WARN, the engaged
 *   `modelSettings` applied to a model request's settings (`transformedContent`) and the `route`
 */
export function evaluatePolicy(policy: CompiledPolicy, input: EvaluationInput): Evaluation {
  const all = engagedLatches(policy, input);
  const engaged = all.filter((latch) => !latch.audit);
  const audited = all.filter((latch) => latch.audit).map((latch) => ({ latch: latch.id, verdict: latch.verdict }));
  const out = enforced(engaged, input, policy.defaults?.[input.stage] ?? 'ALLOW');
  if (audited.length > 0) out.audit = audited;
  return out;
}

/** The evaluation of the enforced latches that engaged. */
function enforced(engaged: readonly CompiledLatch[], input: EvaluationInput, byDefault: Verdict): Evaluation {
  if (engaged.length === 0) {
    return byDefault === 'BLOCK'
      ? { verdict: 'BLOCK', reason: DEFAULT_BLOCK_REASON, latches: [] }
      : { verdict: 'ALLOW', latches: [] };
  }
  let verdict: Verdict = 'ALLOW';
  for (const latch of engaged) if (SEVERITY[latch.verdict] > SEVERITY[verdict]) verdict = latch.verdict;
  const labels = [...new Set(engaged.flatMap((latch) => latch.labels))];
  const out: Evaluation = { verdict, latches: engaged.map((latch) => latch.id) };
  if (labels.length > 0) out.labels = labels;
  const decider = engaged.find((latch) => latch.verdict === verdict);
  if (decider?.reason !== undefined) out.reason = decider.reason;
  if (verdict === 'WARN' && input.stage !== 'action' && input.content !== undefined) {
    let text = input.content;
    for (const latch of engaged) {
      if (latch.redact === undefined || !latch.content) continue;
      text = latch.content.replaceAll(text, latch.redact);
    }
    out.transformedContent = text;
  }
  if (verdict === 'WARN' && input.stage === 'action' && engaged.some((latch) => latch.setArgs.length > 0)) {
    // a copy: the request's args are never touched
    const args = structuredClone(input.args ?? {});
    for (const latch of engaged) for (const entry of latch.setArgs) setPath(args, entry.path, entry.value);
    out.transformedArgs = args;
  }
  return verdict === 'WARN' ? withEffects(out, engaged, input) : out;
}

/**
 * A WARN's model-settings caps and route. Fails closed to a BLOCK when they cannot be applied: a model
 * request whose content is not a JSON object, two latches routing to different sandboxes.
 */
function withEffects(out: Evaluation, engaged: readonly CompiledLatch[], input: EvaluationInput): Evaluation {
  const caps = engaged.flatMap((latch): ModelSettingsSpec[] => (latch.modelSettings ? [latch.modelSettings] : []));
  if (caps.length > 0 && input.purpose === 'model_request' && out.transformedContent !== undefined) {
    const capped = capModelSettings(out.transformedContent, caps);
    if (capped === undefined) return blocked(out, 'the model request settings are not a JSON object');
    out.transformedContent = capped;
  }
  const routes = engaged.flatMap((latch): RouteSpec[] => (latch.route ? [latch.route] : []));
  const [route] = routes;
  if (route !== undefined && input.stage === 'action') {
    if (routes.some((r) => r.to !== route.to || r.profile !== route.profile)) {
      return blocked(out, 'engaged latches route the action to different sandboxes');
    }
    out.route = route.profile === undefined ? { to: route.to } : { to: route.to, profile: route.profile };
  }
  return out;
}

/** The evaluation turned into a BLOCK (no transformation survives). */
function blocked(out: Evaluation, reason: string): Evaluation {
  const { transformedContent: _c, transformedArgs: _a, route: _r, ...rest } = out;
  return { ...rest, verdict: 'BLOCK', reason };
}
