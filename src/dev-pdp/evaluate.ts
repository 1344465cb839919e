/**
 * Pure latch evaluation (CONTRACT.md section 6): which latches engage, which verdict wins, which
 * reason is given, and how a text WARN redacts.
 * @packageDocumentation
 */
import type { Stage, Verdict } from '../decision.js';
import type { CompiledCondition, CompiledLatch, CompiledPolicy } from './policy.js';

/** What one decision is asked about. Tool names must already be normalized. */
export interface EvaluationInput {
  stage: Stage;
  /** Action stage: the normalized tool name. */
  tool?: string;
  /** Action stage: the args (a plain object of JSON values). */
  args?: Record<string, unknown>;
  /** Text stages: the content. */
  content?: string;
}

/** The outcome of evaluating a policy. */
export interface Evaluation {
  verdict: Verdict;
  /** Reason of the first latch, in policy order, whose verdict won. */
  reason?: string;
  /** Every engaged latch id, in policy order. */
  latches: string[];
  /** Text stage WARN only: the content with every engaged `redact` applied, in policy order. */
  transformedContent?: string;
}

/** BLOCK > ESCALATE > WARN > ALLOW. */
const SEVERITY: Readonly<Record<Verdict, number>> = Object.freeze({ ALLOW: 0, WARN: 1, ESCALATE: 2, BLOCK: 3 });

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

const ARRAY_INDEX = /^(0|[1-9]\d{0,8})$/;

/**
 * Walks a dotted path through own properties of plain objects, and through arrays by a decimal
 * index (`args.to.0.domain`); never the prototype chain, never into class instances.
 */
function lookup(
  args: Record<string, unknown> | undefined,
  path: readonly string[],
): { found: boolean; value?: unknown } {
  let current: unknown = args;
  for (const key of path) {
    if (Array.isArray(current)) {
      if (!ARRAY_INDEX.test(key) || Number(key) >= current.length) return { found: false };
      current = current[Number(key)];
    } else if (isPlainObject(current) && Object.hasOwn(current, key)) {
      current = current[key];
    } else {
      return { found: false };
    }
  }
  return { found: true, value: current };
}

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
  }
}

function engages(latch: CompiledLatch, input: EvaluationInput): boolean {
  if (!latch.stages.has(input.stage)) return false;
  if (latch.tool && (input.tool === undefined || !latch.tool.test(input.tool))) return false;
  if (latch.content && (input.content === undefined || !latch.content.test(input.content))) return false;
  return latch.when.every((condition) => conditionHolds(condition, input.args));
}

/**
 * Evaluates a compiled policy for one request. Pure: no I/O, no state.
 *
 * @param policy - from `compilePolicy`
 * @param input - stage, and the normalized tool and args (action) or the content (text stages)
 * @returns the verdict, the deciding reason, every engaged latch id and, on a text WARN, the
 *   redacted content (the original when no engaged latch redacts, so a text WARN is always enforceable)
 */
export function evaluatePolicy(policy: CompiledPolicy, input: EvaluationInput): Evaluation {
  const engaged = policy.latches.filter((latch) => engages(latch, input));
  if (engaged.length === 0) return { verdict: 'ALLOW', latches: [] };
  let verdict: Verdict = 'ALLOW';
  for (const latch of engaged) if (SEVERITY[latch.verdict] > SEVERITY[verdict]) verdict = latch.verdict;
  const out: Evaluation = { verdict, latches: engaged.map((latch) => latch.id) };
  const decider = engaged.find((latch) => latch.verdict === verdict);
  if (decider?.reason !== undefined) out.reason = decider.reason;
  if (verdict === 'WARN' && input.stage !== 'action' && input.content !== undefined) {
    let text = input.content;
    for (const latch of engaged) {
      if (latch.redact === undefined || !latch.redactPattern) continue;
      const replacement = latch.redact;
      // a function replacer keeps `$&`, `$1`... in the redact text literal
      text = text.replace(latch.redactPattern, () => replacement);
    }
    out.transformedContent = text;
  }
  return out;
}
