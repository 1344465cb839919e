/**
 * The dev PDP's policy format (CONTRACT.md section 6): the zod schema, its JSON Schema, and compilation
 * into matchers. Every problem in a policy is reported at once, by path and reason.
 * @packageDocumentation
 */
import { z } from 'zod';
import { isTextStage, STAGES, type Stage, type Verdict } from '../decision.js';

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
  /** Tool-name pattern in normalized form; `*` matches any run of characters, possibly empty. */
  tool?: string;
  /** ECMAScript regex (`u` flag) searched in the content of a text stage. */
  content?: string;
  /** Conditions on dotted `args` paths, all of which must hold. */
  when?: Record<string, ConditionSpec>;
  /** The verdict of the latch when it engages. */
  verdict: Verdict;
  /** Why, for people; returned as the decision's `reason` when this latch decides. */
  reason?: string;
  /** On a text WARN: every match of `content` is replaced by this text. */
  redact?: string;
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
    .max(4096)
    .superRefine((source, ctx) => {
      try {
        new RegExp(source, 'u');
      } catch (error) {
        const detail = error instanceof SyntaxError ? error.message : 'not a regular expression';
        ctx.addIssue({
          code: 'custom',
          message: `${what} is not a valid ECMAScript regex with the u flag (${detail})`,
        });
      }
    })
    .meta({ description: `${what}: an ECMAScript regular expression, compiled with the u flag and searched` });
}

const stageSchema = z.enum(STAGES);
const verdictSchema = z.enum(['ALLOW', 'WARN', 'BLOCK', 'ESCALATE']);
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
    description: z.string().optional(),
  })
  .meta({ description: 'a latch engages when its stage, tool, content and every when condition match' });

/** The zod schema of a policy file (CONTRACT.md section 6). Cross-field rules are checked by {@link compilePolicy}. */
export const policySchema = z
  .strictObject({
    $schema: z.string().optional(),
    description: z.string().optional(),
    agents: z.array(z.string().min(1)).min(1).meta({ description: 'the agent ids this PDP answers for' }),
    latches: z.array(latchSchema).meta({ description: 'latches in policy order' }),
  })
  .meta({
    title: 'agent-pep dev PDP policy',
    description: 'A policy for the agent-pep reference PDP (agent-pep/dev-pdp). See CONTRACT.md section 6.',
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
}

/**
 * Thrown (or rejected with) for a policy that cannot be used; `issues` lists every problem.
 */
export class PolicyError extends TypeError {
  override readonly name = 'PolicyError';
  /** Stable code. */
  readonly code = 'policy_invalid';
  /** Every problem found, by path. */
  readonly issues: readonly PolicyIssue[];
  constructor(issues: readonly PolicyIssue[], options?: ErrorOptions) {
    super(`invalid policy: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, options);
    this.issues = issues;
  }
}

/** A compiled `when` condition. @internal */
export type CompiledCondition =
  | { path: readonly string[]; op: 'eq' | 'ne'; value: PolicyScalar }
  | { path: readonly string[]; op: 'gt' | 'gte' | 'lt' | 'lte'; value: number }
  | { path: readonly string[]; op: 'in'; value: readonly PolicyScalar[] }
  | { path: readonly string[]; op: 'exists'; value: boolean }
  | { path: readonly string[]; op: 'matches'; value: RegExp };

/** A latch ready for evaluation. @internal */
export interface CompiledLatch {
  readonly id: string;
  readonly stages: ReadonlySet<Stage>;
  /** Anchored whole-name matcher of the tool pattern. */
  readonly tool?: RegExp;
  /** Search regex (`u`, not global: no lastIndex state). */
  readonly content?: RegExp;
  /** Global copy of `content` for `redact` (`gu`); used only through String.prototype.replace. */
  readonly redactPattern?: RegExp;
  readonly redact?: string;
  readonly when: readonly CompiledCondition[];
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

function zodIssues(error: z.ZodError): PolicyIssue[] {
  const out: PolicyIssue[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'invalid_union' && issue.path.length >= 2 && issue.path[issue.path.length - 2] === 'when') {
      out.push({
        path: formatPath(issue.path),
        message:
          'a condition must be one operator: eq ne gt gte lt lte in exists matches, with a value of the right type',
      });
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
      if (latch.tool !== undefined && !hasAction) {
        out.push({ path: `${at}.tool`, message: 'tool can only match on the action stage; add "action" to stage' });
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

/** `bank_*` -> `/^bank_.*$/u`: `*` is any run (possibly empty), everything else literal, whole name. */
function globToRegExp(pattern: string): RegExp {
  const body = pattern
    .split('*')
    .map((part) => part.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}$`, 'su');
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
  return { path: segments, op: 'matches', value: new RegExp(spec.matches, 'u') };
}

function compileLatch(spec: LatchSpec): CompiledLatch {
  const stages = new Set<Stage>(Array.isArray(spec.stage) ? spec.stage : [spec.stage]);
  const when = Object.entries(spec.when ?? {}).map(([path, cond]) => compileCondition(path, cond));
  const latch: {
    -readonly [K in keyof CompiledLatch]: CompiledLatch[K];
  } = { id: spec.id, stages, when, verdict: spec.verdict };
  if (spec.tool !== undefined) latch.tool = globToRegExp(spec.tool);
  if (spec.content !== undefined) {
    latch.content = new RegExp(spec.content, 'u');
    latch.redactPattern = new RegExp(spec.content, 'gu');
  }
  if (spec.redact !== undefined) latch.redact = spec.redact;
  if (spec.reason !== undefined) latch.reason = spec.reason;
  return Object.freeze(latch);
}

/**
 * Validates a policy and compiles it for evaluation: regexes with the `u` flag, tool globs anchored
 * to the whole normalized name.
 *
 * @param input - the policy: an object, or its JSON text
 * @returns the compiled policy
 * @throws PolicyError (a TypeError) listing every problem by path and reason: schema violations,
 *   invalid regexes, duplicate latch ids, and fields that could never engage (a `tool` or `when` on a
 *   latch without the action stage, a `content` without a text stage, a `redact` without `content` or
 *   on a verdict other than WARN)
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
      throw new PolicyError([{ path: '(root)', message: 'the policy text is not valid JSON' }], { cause });
    }
  }
  const parsed = policySchema.safeParse(raw);
  const issues = [...(parsed.success ? [] : zodIssues(parsed.error)), ...crossFieldIssues(raw)];
  if (issues.length > 0 || !parsed.success) {
    throw new PolicyError(issues.length > 0 ? issues : [{ path: '(root)', message: 'invalid policy' }]);
  }
  const spec = parsed.data as PolicySpec;
  return Object.freeze({
    agents: new Set(spec.agents),
    latches: Object.freeze(spec.latches.map(compileLatch)),
  });
}
