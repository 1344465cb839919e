/**
 * The dev PDP's policy format (docs/dev-pdp.md): the zod schema, its JSON Schema, and compilation
 * into matchers. Every problem in a policy is reported at once, by path and reason.
 * @packageDocumentation
 */
import { z } from 'zod';
import { isTextStage, STAGES, type Stage, VERDICTS, type Verdict } from '../decision.js';
import { jsonWhere } from '../internal/json-position.js';
import { DEV_PDP_DEFAULTS } from './defaults.js';
import { compileGlob, type ToolGlob } from './glob.js';
import { compileLinearRegex, type LinearRegex } from './regex.js';

/** A JSON scalar, the only kind of value `eq`, `ne` and `in` compare against (strict equality). */
export type PolicyScalar = string | number | boolean | null;

/** One `when` condition: exactly one operator. */
export type ConditionSpec =
  | { eq: PolicyScalar }
  | { ne: PolicyScalar }
  | { gt: number }
  | { gte: number }
  | { lt: number }
  | { lte: number }
  | { in: PolicyScalar[] }
  | { exists: boolean }
  | { matches: string };

/** One latch of a policy, as written in the policy JSON. */
export interface LatchSpec {
  /** Unique id, reported in `latches` and in evidence. */
  id: string;
  /** The stage or stages the latch applies to. */
  stage: Stage | Stage[];
  /**
   * Tool-name pattern in normalized form; `*` matches any run of characters, possibly empty. Matched
   * on the action stage, and on context_egress against the `tool` whose result the content is.
   */
  tool?: string;
  /** RE2-syntax regex searched in the content of a text stage (lookaround and backreferences are refused). */
  content?: string;
  /** Conditions on dotted `args` paths, all of which must hold. */
  when?: Record<string, ConditionSpec>;
  /** The verdict of the latch when it engages. */
  verdict: Verdict;
  /** Why, for people; returned as the decision's `reason` when this latch decides. */
  reason?: string;
  /** On a text WARN: every match of `content` is replaced by this text. */
  redact?: string;
  /**
   * Action stage, verdict WARN only: dotted `args.` paths mapped to JSON values; the decision's
   * `transformedArgs` are the args with these paths set, and the permit binds them.
   */
  setArgs?: Record<string, unknown>;
  /** Free text for policy authors; ignored. */
  description?: string;
}

/** A policy, as written in the policy JSON. */
export interface PolicySpec {
  /** Optional link to the JSON Schema, for editors. */
  $schema?: string;
  /** Free text for policy authors; ignored. */
  description?: string;
  /** The agent ids this PDP answers for; any other agent gets 404. */
  agents: string[];
  /** The latches, in policy order (order decides `reason` and the order of redactions). */
  latches: LatchSpec[];
}

function regexSource(what: string) {
  return z
    .string()
    .max(DEV_PDP_DEFAULTS.maxRegexLength)
    .superRefine((source, ctx) => {
      const compiled = compileLinearRegex(source);
      if (!compiled.ok) ctx.addIssue({ code: 'custom', message: `${what}: ${compiled.reason}` });
    })
    .meta({
      description: `${what}: an RE2-syntax regular expression, searched in linear time (no lookaround, no backreferences)`,
    });
}

const stageSchema = z.enum(STAGES);
const verdictSchema = z.enum(VERDICTS);
const scalarSchema = z.union([z.string(), z.number(), z.boolean(), z.null()]);
const numberOperand = z.number().meta({ description: 'a finite number; a non-number value never holds' });

const conditionSchema = z
  .union([
    z.strictObject({ eq: scalarSchema }),
    z.strictObject({ ne: scalarSchema }),
    z.strictObject({ gt: numberOperand }),
    z.strictObject({ gte: numberOperand }),
    z.strictObject({ lt: numberOperand }),
    z.strictObject({ lte: numberOperand }),
    z.strictObject({ in: z.array(scalarSchema) }),
    z.strictObject({ exists: z.boolean() }),
    z.strictObject({ matches: regexSource('matches') }),
  ])
  .meta({
    description:
      'exactly one operator: eq, ne (strict equality; ne holds when the path is absent), gt gte lt lte (numbers only), ' +
      'in (strict membership), exists (true or false), matches (a string the regex finds)',
  });

/** Path syntax of a `when` key: `args.` and one or more non-empty dot-separated property names. */
const WHEN_PATH = /^args(\.[^.]+)+$/;
/** A tool pattern in normalized form, with `*` wildcards. */
const TOOL_PATTERN = /^[a-z0-9*]+(_[a-z0-9*]+)*$/;

const latchSchema = z
  .strictObject({
    id: z.string().min(1).max(200).meta({ description: 'unique latch id' }),
    stage: z.union([stageSchema, z.array(stageSchema).min(1)]).meta({ description: 'a stage or a list of stages' }),
    tool: z
      .string()
      .regex(TOOL_PATTERN, {
        error: 'tool must be a normalized tool name (a-z, 0-9, single _) with optional * wildcards',
      })
      .optional()
      .meta({
        description: 'normalized tool-name pattern; * matches any run of characters, _ included, possibly empty',
      }),
    content: regexSource('content').optional(),
    when: z
      .record(
        z.string().regex(WHEN_PATH, { error: 'a when key must be a dotted path into args, like args.amount' }),
        conditionSchema,
      )
      .optional()
      .meta({
        description: 'dotted args paths (args.amount, args.to.domain) mapped to one operator each; all must hold',
      }),
    verdict: verdictSchema,
    reason: z.string().max(1000).optional(),
    redact: z
      .string()
      .max(1000)
      .optional()
      .meta({ description: 'on a text WARN, every match of content is replaced by this text (taken literally)' }),
    setArgs: z
      .record(
        z.string().regex(WHEN_PATH, { error: 'a setArgs key must be a dotted path into args, like args.limit' }),
        z.json(),
      )
      .optional()
      .meta({
        description:
          'action stage, verdict WARN only: dotted args paths mapped to JSON values; transformedArgs are the args with them set',
      }),
    description: z.string().optional(),
  })
  .meta({ description: 'a latch engages when its stage, tool, content and every when condition match' });

/** The zod schema of a policy file (docs/dev-pdp.md). Cross-field rules are checked by {@link compilePolicy}. */
export const policySchema = z
  .strictObject({
    $schema: z.string().optional(),
    description: z.string().optional(),
    agents: z.array(z.string().min(1)).min(1).meta({ description: 'the agent ids this PDP answers for' }),
    latches: z.array(latchSchema).meta({ description: 'latches in policy order' }),
  })
  .meta({
    title: 'agent-pep dev PDP policy',
    description: 'A policy for the agent-pep reference PDP (agent-pep/dev-pdp). See docs/dev-pdp.md.',
  });

/**
 * The JSON Schema (draft 2020-12) of a policy file, generated from {@link policySchema} with zod's
 * `z.toJSONSchema`. Published as `agent-pep/policy.schema.json`.
 */
export function policyJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(policySchema) as Record<string, unknown>;
}

/** One problem found in a policy. */
export interface PolicyIssue {
  /** Where, like `latches[2].content` or `(root)`. */
  path: string;
  /** What is wrong. Never quotes content or args (a policy holds neither). */
  message: string;
  /** The id of the latch the problem is in, when it is in a latch that has a string id. */
  latch?: string;
}

/**
 * Thrown (or rejected with) for a policy that cannot be used; `issues` lists every problem, each by
 * path and, inside a latch, with that latch's id.
 */
export class InvalidPolicyError extends TypeError {
  override readonly name = 'InvalidPolicyError';
  /** Stable code. */
  readonly code = 'policy_invalid';
  /** The option at fault, as on every option `TypeError` of `startDevPdp`. */
  readonly option = 'policy';
  /** Every problem found, by path. */
  readonly issues: readonly PolicyIssue[];
  constructor(issues: readonly PolicyIssue[], options?: ErrorOptions) {
    super(
      `invalid policy: ${issues.map((i) => `${i.path}${i.latch !== undefined ? ` (latch ${JSON.stringify(i.latch)})` : ''}: ${i.message}`).join('; ')}`,
      options,
    );
    this.issues = issues;
  }
}

/** A compiled `when` condition. @internal */
export type CompiledCondition =
  | { path: readonly string[]; op: 'eq' | 'ne'; value: PolicyScalar }
  | { path: readonly string[]; op: 'gt' | 'gte' | 'lt' | 'lte'; value: number }
  | { path: readonly string[]; op: 'in'; value: readonly PolicyScalar[] }
  | { path: readonly string[]; op: 'exists'; value: boolean }
  | { path: readonly string[]; op: 'matches'; value: LinearRegex };

/** One `setArgs` entry: the path (segments after `args.`) and the JSON value to set. @internal */
export interface CompiledSetArg {
  readonly path: readonly string[];
  readonly value: unknown;
}

/** A latch ready for evaluation. @internal */
export interface CompiledLatch {
  readonly id: string;
  readonly stages: ReadonlySet<Stage>;
  /** Whole-name glob of the tool pattern (linear). */
  readonly tool?: ToolGlob;
  /** Searched RE2 regex (linear). */
  readonly content?: LinearRegex;
  readonly redact?: string;
  readonly when: readonly CompiledCondition[];
  /** Action WARN: the paths to set in `transformedArgs`, in policy order. */
  readonly setArgs: readonly CompiledSetArg[];
  readonly verdict: Verdict;
  readonly reason?: string;
}

/** A policy ready for evaluation. @internal */
export interface CompiledPolicy {
  readonly agents: ReadonlySet<string>;
  readonly latches: readonly CompiledLatch[];
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else {
      const key = String(part);
      out += /^[A-Za-z_$][\w$]*$/.test(key) ? (out ? `.${key}` : key) : `[${JSON.stringify(key)}]`;
    }
  }
  return out || '(root)';
}

/** What each `when` operator needs, for the message of a condition of the wrong type. */
const OPERAND_NEEDS: Readonly<Record<string, string>> = {
  eq: 'a string, number, boolean or null',
  ne: 'a string, number, boolean or null',
  gt: 'a number',
  gte: 'a number',
  lt: 'a number',
  lte: 'a number',
  in: 'an array of strings, numbers, booleans or nulls',
  exists: 'true or false',
  matches: 'a string (an RE2 regex)',
  notMatches: 'a string (an RE2 regex)',
};
const OPERATORS_LINE = 'eq ne gt gte lt lte in exists matches';

/** The value at a zod issue's path in the raw policy. */
function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let v = raw;
  for (const key of path) v = isRecord(v) || Array.isArray(v) ? (v as Record<PropertyKey, unknown>)[key] : undefined;
  return v;
}

/**
 * What is wrong with one `when` condition, by operator: `gt needs a number`; the regex's own problem
 * for `matches`; an unknown operator or several named.
 */
function conditionMessage(issue: z.core.$ZodIssue, raw: unknown): string {
  const cond = valueAt(raw, issue.path);
  const keys = isRecord(cond) ? Object.keys(cond) : [];
  const op = keys[0];
  if (keys.length === 1 && op !== undefined && Object.hasOwn(OPERAND_NEEDS, op)) {
    const nested =
      'errors' in issue && Array.isArray(issue.errors) ? (issue.errors as z.core.$ZodIssue[][]).flat() : [];
    const custom = nested.find((i) => i.code === 'custom' && i.path.length <= 1);
    return custom?.message ?? `${op} needs ${OPERAND_NEEDS[op]}`;
  }
  if (keys.length === 1 && op !== undefined) {
    return `unknown operator ${JSON.stringify(op.slice(0, 40))}: a condition is one of ${OPERATORS_LINE}`;
  }
  if (keys.length > 1) return `a condition is one operator (${OPERATORS_LINE}), not ${keys.length}`;
  return `a condition must be one operator: ${OPERATORS_LINE}, with a value of the right type`;
}

function zodIssues(error: z.ZodError, raw: unknown): PolicyIssue[] {
  const out: PolicyIssue[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'invalid_union' && issue.path.length >= 2 && issue.path[issue.path.length - 2] === 'when') {
      out.push({ path: formatPath(issue.path), message: conditionMessage(issue, raw) });
    } else if (issue.code === 'invalid_union') {
      out.push({
        path: formatPath(issue.path),
        message: 'must be a stage or a non-empty list of stages (input, context_egress, output, delivery, action)',
      });
    } else if (issue.code === 'invalid_key') {
      const inner = issue.issues[0]?.message;
      out.push({ path: formatPath(issue.path), message: inner ?? issue.message });
    } else {
      out.push({ path: formatPath(issue.path), message: issue.message });
    }
  }
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stagesOf(value: unknown): Stage[] | undefined {
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0 || !list.every((s) => typeof s === 'string' && (STAGES as readonly string[]).includes(s))) {
    return undefined;
  }
  return list as Stage[];
}

/** Rules across fields, checked on the raw input so they are reported together with schema problems. */
function crossFieldIssues(raw: unknown): PolicyIssue[] {
  const out: PolicyIssue[] = [];
  if (!isRecord(raw) || !Array.isArray(raw.latches)) return out;
  const seen = new Map<string, number>();
  raw.latches.forEach((latch: unknown, i) => {
    if (!isRecord(latch)) return;
    const at = `latches[${i}]`;
    if (typeof latch.id === 'string') {
      const first = seen.get(latch.id);
      if (first !== undefined) out.push({ path: `${at}.id`, message: `duplicate latch id (also latches[${first}])` });
      else seen.set(latch.id, i);
    }
    const stages = stagesOf(latch.stage);
    if (stages) {
      const hasAction = stages.includes('action');
      const hasText = stages.some(isTextStage);
      if (latch.tool !== undefined && !hasAction && !stages.includes('context_egress')) {
        out.push({
          path: `${at}.tool`,
          message: 'tool matches on the action stage and on context_egress only; add one of them to stage',
        });
      }
      if (latch.when !== undefined && !hasAction) {
        out.push({
          path: `${at}.when`,
          message: 'when looks at args, which only the action stage has; add "action" to stage',
        });
      }
      if (latch.content !== undefined && !hasText) {
        out.push({
          path: `${at}.content`,
          message: 'content can only match on a text stage (input, context_egress, output, delivery)',
        });
      }
      if (latch.setArgs !== undefined && (hasText || !hasAction)) {
        out.push({
          path: `${at}.setArgs`,
          message: 'setArgs transforms args: the latch\'s stage must be "action" only',
        });
      }
    }
    if (latch.setArgs !== undefined && latch.verdict !== undefined && latch.verdict !== 'WARN') {
      out.push({ path: `${at}.setArgs`, message: 'setArgs is applied only on a WARN; set verdict to "WARN"' });
    }
    if (latch.redact !== undefined) {
      if (latch.content === undefined)
        out.push({ path: `${at}.redact`, message: 'redact needs a content regex to replace' });
      if (latch.verdict !== undefined && latch.verdict !== 'WARN') {
        out.push({ path: `${at}.redact`, message: 'redact is applied only on a WARN; set verdict to "WARN"' });
      }
    }
  });
  return out;
}

function compileCondition(path: string, spec: ConditionSpec): CompiledCondition {
  const segments = path.split('.').slice(1);
  if ('eq' in spec) return { path: segments, op: 'eq', value: spec.eq };
  if ('ne' in spec) return { path: segments, op: 'ne', value: spec.ne };
  if ('gt' in spec) return { path: segments, op: 'gt', value: spec.gt };
  if ('gte' in spec) return { path: segments, op: 'gte', value: spec.gte };
  if ('lt' in spec) return { path: segments, op: 'lt', value: spec.lt };
  if ('lte' in spec) return { path: segments, op: 'lte', value: spec.lte };
  if ('in' in spec) return { path: segments, op: 'in', value: Object.freeze([...spec.in]) };
  if ('exists' in spec) return { path: segments, op: 'exists', value: spec.exists };
  return { path: segments, op: 'matches', value: mustCompile(spec.matches) };
}

/** Compiles a source the schema already accepted. */
function mustCompile(source: string): LinearRegex {
  const compiled = compileLinearRegex(source);
  if (!compiled.ok) throw new TypeError('a regex the schema accepted failed to compile');
  return compiled.regex;
}

function compileLatch(spec: LatchSpec): CompiledLatch {
  const stages = new Set<Stage>(Array.isArray(spec.stage) ? spec.stage : [spec.stage]);
  const when = Object.entries(spec.when ?? {}).map(([path, cond]) => compileCondition(path, cond));
  const setArgs = Object.entries(spec.setArgs ?? {}).map(([path, value]) =>
    Object.freeze({ path: Object.freeze(path.split('.').slice(1)), value: structuredClone(value) }),
  );
  const latch: {
    -readonly [K in keyof CompiledLatch]: CompiledLatch[K];
  } = { id: spec.id, stages, when, setArgs: Object.freeze(setArgs), verdict: spec.verdict };
  if (spec.tool !== undefined) latch.tool = compileGlob(spec.tool);
  if (spec.content !== undefined) latch.content = mustCompile(spec.content);
  if (spec.redact !== undefined) latch.redact = spec.redact;
  if (spec.reason !== undefined) latch.reason = spec.reason;
  return Object.freeze(latch);
}

/** Adds the latch id to every issue inside `latches[i]`, so an author finds the latch by name. */
function withLatchIds(issues: PolicyIssue[], raw: unknown): PolicyIssue[] {
  const latches = isRecord(raw) && Array.isArray(raw.latches) ? raw.latches : [];
  return issues.map((issue) => {
    const index = /^latches\[(\d+)\]/.exec(issue.path)?.[1];
    const latch: unknown = index === undefined ? undefined : latches[Number(index)];
    const id = isRecord(latch) && typeof latch.id === 'string' ? latch.id : undefined;
    return id === undefined ? issue : { ...issue, latch: id };
  });
}

/**
 * Validates a policy and compiles it for evaluation: RE2-syntax regexes (linear time), tool globs
 * anchored to the whole normalized name (linear time).
 *
 * @param input - the policy: an object, or its JSON text
 * @returns the compiled policy
 * @throws InvalidPolicyError (a TypeError) listing every problem by path, latch id and reason: schema
 *   violations, regexes that are not RE2 syntax (lookaround, backreferences), duplicate latch ids, and
 *   fields that could never apply (a `tool` on a latch without the action or context_egress stage, a
 *   `when` without the action stage, a `content` without a text stage, a `redact` without `content` or
 *   on a verdict other than WARN, a `setArgs` outside an action WARN)
 * @example
 * ```ts
 * const policy = compilePolicy({ agents: ['support-ai'], latches: [] });
 * ```
 */
export function compilePolicy(input: unknown): CompiledPolicy {
  let raw = input;
  if (typeof input === 'string') {
    try {
      raw = JSON.parse(input);
    } catch (cause) {
      throw new InvalidPolicyError(
        [{ path: '(root)', message: `the policy text is not valid JSON${jsonWhere(input)}` }],
        {
          cause,
        },
      );
    }
  }
  const parsed = policySchema.safeParse(raw);
  const issues = withLatchIds([...(parsed.success ? [] : zodIssues(parsed.error, raw)), ...crossFieldIssues(raw)], raw);
  if (issues.length > 0 || !parsed.success) {
    throw new InvalidPolicyError(issues.length > 0 ? issues : [{ path: '(root)', message: 'invalid policy' }]);
  }
  const spec = parsed.data as PolicySpec;
  return Object.freeze({
    agents: new Set(spec.agents),
    latches: Object.freeze(spec.latches.map(compileLatch)),
  });
}
