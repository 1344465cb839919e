/**
 * The dev PDP's policy format (docs/dev-pdp.md): the zod schema, its JSON Schema, and compilation
 * into matchers. Every problem in a policy is reported at once, by path and reason.
 * @packageDocumentation
 */

import { isRecord, isTextStage, jsonWhere, STAGES, type Stage, VERDICTS, type Verdict } from 'agent-pep/internal';
import { z } from 'zod';
import { DEV_PDP_DEFAULTS } from './defaults.js';
import { type ModelSettingsSpec, modelSettingsSchema } from './model-settings.js';
import { compileLinearRegex, type LinearRegex } from './regex.js';
import {
  type CompiledSessionCondition,
  compileSessionConditions,
  filtersOf,
  flowGroupsOf,
  type SessionConditionSpec,
  sessionSchema,
} from './sessions/conditions.js';
import {
  type CompiledIntent,
  captureNames,
  compileIntents,
  type IntentSpec,
  intentsSchema,
} from './sessions/intents.js';
import { labelSchema } from './sessions/names.js';
import {
  compileValues,
  type OriginMap,
  type ValueExtractors,
  type ValueSpec,
  valuesSchema,
} from './sessions/values.js';
import {
  type CompiledToolGroups,
  compileTool,
  compileToolGroups,
  originsOf,
  type ToolGroupSpec,
  type ToolMatcher,
  toolGroupsSchema,
  toolSchema,
  unknownGroup,
} from './tool-groups.js';

export type { ModelSettingsSpec } from './model-settings.js';
export type { FlowSpec, SessionConditionSpec, StepFilterSpec } from './sessions/conditions.js';
export type { ClientGrantSpec, GrantConstraintSpec, GrantSpec } from './sessions/grants.js';
export type { IntentSpec } from './sessions/intents.js';
export type { ValueSpec } from './sessions/values.js';
export type { ToolGroupSpec } from './tool-groups.js';

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
  | { matches: string }
  | { notMatches: string };

/** One latch of a policy, as written in the policy JSON. */
export interface LatchSpec {
  /** Unique id, reported in `latches` and in evidence. */
  id: string;
  /** The stage or stages the latch applies to. */
  stage: Stage | Stage[];
  /**
   * Tool-name pattern in normalized form; `*` matches any run of characters, possibly empty; or
   * `@name`, one of the policy's `toolGroups`. Matched on the action stage, and on context_egress
   * against the `tool` whose result the content is.
   */
  tool?: string;
  /** RE2-syntax regex searched in the content of a text stage (lookaround and backreferences are refused). */
  content?: string;
  /** Conditions on dotted `args` paths, all of which must hold. */
  when?: Record<string, ConditionSpec>;
  /**
   * Conditions on the session's state as it was before this step, all of which must hold (one
   * object is a list of one): `{ has }`, `{ hasAny }`, `{ lacks }`, `{ seen: F }`, `{ count: F, gte }`.
   */
  session?: SessionConditionSpec | SessionConditionSpec[];
  /** The verdict of the latch when it engages. */
  verdict: Verdict;
  /** Labels added to the session when the latch engages, whatever its verdict. */
  labels?: string[];
  /** Why, for people; returned as the decision's `reason` when this latch decides. */
  reason?: string;
  /** On a text WARN: every match of `content` is replaced by this text. */
  redact?: string;
  /**
   * Action stage, verdict WARN only: dotted `args.` paths mapped to JSON values; the decision's
   * `transformedArgs` are the args with these paths set, and the permit binds them.
   */
  setArgs?: Record<string, unknown>;
  /**
   * `"audit"`: the latch is evaluated and recorded in evidence (`audit: [{ latch, verdict }]`), never
   * enforced: it changes no verdict, adds no label, redacts nothing (shadow mode). @defaultValue 'enforce'
   */
  mode?: 'enforce' | 'audit';
  /**
   * `"model_request"`: the latch engages only on a model-request check (a `context_egress` decision the
   * SDK sends with `purpose: "model_request"`, content the JSON of the request's settings). A latch
   * without `purpose` engages on every request of its stages, model requests included.
   */
  purpose?: 'model_request';
  /**
   * `purpose: "model_request"`, verdict WARN only: caps the model request's numbers (lowered to the cap,
   * set when absent) and replaces its texts; the WARN's `transformedContent` is the capped settings' JSON.
   */
  modelSettings?: ModelSettingsSpec;
  /**
   * Action stage, verdict WARN only: the action runs in the sandbox registered under `to` in
   * `createPep({ sandboxes })` (with `profile`), not in the tool. Two engaged latches that route to
   * different sandboxes make a BLOCK.
   */
  route?: RouteSpec;
  /** Free text for policy authors; ignored. */
  description?: string;
}

/** A sandbox an action is routed to: the name registered in `createPep({ sandboxes })`, and a profile. */
export interface RouteSpec {
  /** The sandbox's name, 1-128 characters. */
  to: string;
  /** A profile the sandbox runner gets, at most 128 characters. */
  profile?: string;
}

/** The verdict a stage gives when no enforced latch engaged there: ALLOW (the default) or BLOCK. */
export type DefaultVerdict = 'ALLOW' | 'BLOCK';

/** A policy, as written in the policy JSON. */
export interface PolicySpec {
  /** Optional link to the JSON Schema, for editors. */
  $schema?: string;
  /** Free text for policy authors; ignored. */
  description?: string;
  /** The agent ids this PDP answers for; any other agent gets 404. */
  agents: string[];
  /**
   * Named lists of tool patterns, used as `tool: "@name"` in latches, session filters, grants and flows;
   * `{ tools, origin }` also names where the tools live (for `flows` and `sameOrigin`).
   */
  toolGroups?: Record<string, ToolGroupSpec>;
  /** Intent rules: what the user's own words at the input stage grant (docs/dev-pdp.md, "Intent grants"). */
  intents?: IntentSpec[];
  /** `false` ignores the grants an application sends with `checkInput(text, { intent })`. @defaultValue true */
  intentsFromClient?: boolean;
  /** Value extractors beside the built-ins (e-mail, URL, host, IBAN, card), e.g. the secret formats to follow. */
  values?: ValueSpec[];
  /**
   * The verdict of each stage when no enforced latch engaged at that stage (`mode: "audit"` latches do
   * not count): `{ "action": "BLOCK" }` blocks every tool no latch matches. A stage not named gives ALLOW.
   */
  default?: Partial<Record<Stage, DefaultVerdict>>;
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
    z.strictObject({ notMatches: regexSource('notMatches') }),
  ])
  .meta({
    description:
      'exactly one operator: eq, ne (strict equality; ne holds when the path is absent), gt gte lt lte (numbers only), ' +
      'in (strict membership), exists (true or false), matches (a string the regex finds), ' +
      'notMatches (holds unless the value is a string the regex finds; holds when the path is absent)',
  });

/** Path syntax of a `when` key: `args.` and one or more non-empty dot-separated property names. */
const WHEN_PATH = /^args(\.[^.]+)+$/;

const latchSchema = z
  .strictObject({
    id: z.string().min(1).max(200).meta({ description: 'unique latch id' }),
    stage: z.union([stageSchema, z.array(stageSchema).min(1)]).meta({ description: 'a stage or a list of stages' }),
    tool: toolSchema.optional(),
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
    session: sessionSchema.optional(),
    verdict: verdictSchema,
    labels: z
      .array(labelSchema)
      .min(1)
      .optional()
      .meta({ description: 'labels added to the session when the latch engages, whatever its verdict' }),
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
    purpose: z.literal('model_request').optional().meta({
      description:
        'model_request: the latch engages only on a model-request check (context_egress, purpose model_request)',
    }),
    modelSettings: modelSettingsSchema.optional(),
    route: z
      .strictObject({
        to: z.string().min(1).max(128).meta({ description: 'the sandbox name registered in createPep({ sandboxes })' }),
        profile: z.string().max(128).optional(),
      })
      .optional()
      .meta({ description: 'action stage, verdict WARN only: the action runs in this sandbox instead of the tool' }),
    mode: z.enum(['enforce', 'audit']).optional().meta({
      description: 'audit: evaluated and recorded in evidence (audit), never enforced (shadow mode); default enforce',
    }),
    description: z.string().optional(),
  })
  .meta({
    description:
      'a latch engages when its stage, tool, content, every when condition and every session condition match',
  });

/** The zod schema of a policy file (docs/dev-pdp.md). Cross-field rules are checked by {@link compilePolicy}. */
export const policySchema = z
  .strictObject({
    $schema: z.string().optional(),
    description: z.string().optional(),
    agents: z.array(z.string().min(1)).min(1).meta({ description: 'the agent ids this PDP answers for' }),
    toolGroups: toolGroupsSchema.optional(),
    intents: intentsSchema.optional(),
    intentsFromClient: z
      .boolean()
      .optional()
      .meta({ description: 'false ignores the grants an application sends with checkInput (intent); default true' }),
    values: valuesSchema.optional(),
    default: z
      .partialRecord(stageSchema, z.enum(['ALLOW', 'BLOCK']))
      .optional()
      .meta({
        description:
          'per stage, the verdict when no enforced latch engaged there (ALLOW or BLOCK); a stage not named gives ALLOW',
      }),
    latches: z.array(latchSchema).meta({ description: 'latches in policy order' }),
  })
  .meta({
    title: 'agent-pep dev PDP policy',
    description: 'A policy for the agent-pep reference PDP (agent-pep/dev-pdp). See docs/dev-pdp.md.',
  });

/**
 * The JSON Schema (draft 2020-12) of a policy file, generated from {@link policySchema} with zod's
 * `z.toJSONSchema`. Published as `@agent-pep/dev-pdp/policy.schema.json`.
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
  | { path: readonly string[]; op: 'matches' | 'notMatches'; value: LinearRegex };

/** One `setArgs` entry: the path (segments after `args.`) and the JSON value to set. @internal */
export interface CompiledSetArg {
  readonly path: readonly string[];
  readonly value: unknown;
}

/** A latch ready for evaluation. @internal */
export interface CompiledLatch {
  readonly id: string;
  readonly stages: ReadonlySet<Stage>;
  /** Whole-name glob of the tool pattern, or the group's globs (linear). */
  readonly tool?: ToolMatcher;
  /** Searched RE2 regex (linear). */
  readonly content?: LinearRegex;
  readonly redact?: string;
  readonly when: readonly CompiledCondition[];
  /** Action WARN: the paths to set in `transformedArgs`, in policy order. */
  readonly setArgs: readonly CompiledSetArg[];
  readonly verdict: Verdict;
  readonly reason?: string;
  /** Labels added to the session when the latch engages. */
  readonly labels: readonly string[];
  /** Session conditions, all of which must hold. */
  readonly session: readonly CompiledSessionCondition[];
  /** True for `mode: "audit"`: evaluated and recorded, never enforced. */
  readonly audit: boolean;
  /** `"model_request"`: engages only on a model-request check. */
  readonly purpose?: 'model_request';
  /** Model-request WARN: the settings capped or replaced. */
  readonly modelSettings?: ModelSettingsSpec;
  /** Action WARN: the sandbox the action runs in. */
  readonly route?: RouteSpec;
}

/** A policy ready for evaluation. @internal */
export interface CompiledPolicy {
  readonly agents: ReadonlySet<string>;
  readonly latches: readonly CompiledLatch[];
  /** The compiled `toolGroups`, by name. */
  readonly toolGroups?: CompiledToolGroups;
  /** Group name -> declared origin, in policy order. */
  readonly origins?: OriginMap;
  /** The intent rules. */
  readonly intents?: readonly CompiledIntent[];
  /** False when the policy ignores an application's grants. @defaultValue true */
  readonly intentsFromClient?: boolean;
  /** The value extractors: the built-ins and the policy's `values`. */
  readonly values?: ValueExtractors;
  /** Per stage, the verdict when no enforced latch engaged; a stage absent gives ALLOW. */
  readonly defaults?: Readonly<Partial<Record<Stage, DefaultVerdict>>>;
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

type ZodIssue = z.core.$ZodIssue;

/** A branch of a union that failed on its shape (a missing or unknown key, a wrong type) rather than on a value. */
function failedOnShape(issues: readonly ZodIssue[]): boolean {
  return issues.some(
    (i) =>
      (i.path.length === 0 && (i.code === 'unrecognized_keys' || i.code === 'invalid_type')) ||
      (i.path.length === 0 && i.code === 'invalid_union' && i.errors.every(failedOnShape)) ||
      (i.path.length === 1 && i.code === 'invalid_type' && i.message.endsWith('received undefined')),
  );
}

/** What a union at `path` accepts, when no branch fits the input's shape. */
function unionMessage(path: readonly PropertyKey[]): string {
  const names = path.filter((p): p is string => typeof p === 'string');
  const last = names[names.length - 1];
  if (names.includes('when') && last !== 'when') {
    return 'a condition must be one operator: eq ne gt gte lt lte in exists matches notMatches, with a value of the right type';
  }
  if (names.includes('session')) {
    return 'a session condition must be one of { has: label }, { hasAny: [labels] }, { lacks: label }, { seen: filter }, { count: filter, gte: n }, { granted: bool }, { flows: { from, into?, kind?, notFrom? } }, { sameOrigin: bool }';
  }
  if (last === 'verdict') return 'must be a verdict or a non-empty list of verdicts (ALLOW, WARN, BLOCK, ESCALATE)';
  if (last === 'latch') return 'must be a latch id or a non-empty list of latch ids';
  return 'must be a stage or a non-empty list of stages (input, context_egress, output, delivery, action)';
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

/** Flattens one zod issue: a union whose input fits exactly one branch's shape reports that branch's problems. */
function flatten(issue: ZodIssue, prefix: readonly PropertyKey[], raw: unknown): PolicyIssue[] {
  const at = [...prefix, ...issue.path];
  if (issue.code === 'invalid_union' && at.length >= 2 && at[at.length - 2] === 'when') {
    return [{ path: formatPath(at), message: conditionMessage({ ...issue, path: at } as ZodIssue, raw) }];
  }
  if (issue.code === 'invalid_union') {
    const fitting = at.includes('when') ? [] : issue.errors.filter((branch) => !failedOnShape(branch));
    if (fitting.length === 1) return (fitting[0] as ZodIssue[]).flatMap((inner) => flatten(inner, at, raw));
    return [{ path: formatPath(at), message: unionMessage(at) }];
  }
  if (issue.code === 'invalid_key') {
    const inner = issue.issues[0]?.message;
    return [{ path: formatPath(at), message: inner ?? issue.message }];
  }
  return [{ path: formatPath(at), message: issue.message }];
}

function zodIssues(error: z.ZodError, raw: unknown): PolicyIssue[] {
  return error.issues.flatMap((issue) => flatten(issue as ZodIssue, [], raw));
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
    out.push(...effectIssues(latch, stages, at));
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

/** `purpose`, `modelSettings` and `route`: each on the stage and verdict it can apply to. */
function effectIssues(latch: Record<string, unknown>, stages: Stage[] | undefined, at: string): PolicyIssue[] {
  const out: PolicyIssue[] = [];
  const warn = latch.verdict === undefined || latch.verdict === 'WARN';
  if (latch.purpose !== undefined && stages !== undefined && !stages.includes('context_egress')) {
    out.push({ path: `${at}.purpose`, message: 'a model request is a context_egress check; add it to stage' });
  }
  if (latch.modelSettings !== undefined) {
    if (latch.purpose !== 'model_request') {
      out.push({ path: `${at}.modelSettings`, message: 'modelSettings needs purpose "model_request"' });
    }
    if (!warn)
      out.push({
        path: `${at}.modelSettings`,
        message: 'modelSettings is applied only on a WARN; set verdict to "WARN"',
      });
  }
  if (latch.route !== undefined) {
    if (stages !== undefined && (stages.length !== 1 || stages[0] !== 'action')) {
      out.push({
        path: `${at}.route`,
        message: 'route sends an action to a sandbox: the latch\'s stage must be "action" only',
      });
    }
    if (!warn) out.push({ path: `${at}.route`, message: 'route is applied only on a WARN; set verdict to "WARN"' });
  }
  return out;
}

/**
 * References a policy must resolve, reported at the field that makes them, naming the latch: a
 * `tool: "@name"` (in a latch or a session filter) of a group `toolGroups` lacks, and a filter's
 * `latch` that names no latch of the policy.
 */
function referenceIssues(raw: unknown): PolicyIssue[] {
  const out: PolicyIssue[] = [];
  if (!isRecord(raw) || !Array.isArray(raw.latches)) return out;
  const ids = new Set(raw.latches.map((latch: unknown) => (isRecord(latch) ? latch.id : undefined)));
  raw.latches.forEach((latch: unknown, i) => {
    if (!isRecord(latch)) return;
    const at = `latches[${i}]`;
    const group = unknownGroup(latch.tool, raw.toolGroups);
    if (group !== undefined)
      out.push({ path: `${at}.tool`, message: `unknown tool group @${group} (not in toolGroups)` });
    if (latch.session === undefined) return;
    for (const { path, group } of flowGroupsOf(latch.session)) {
      if (unknownGroup(`@${group}`, raw.toolGroups) !== undefined) {
        out.push({ path: `${at}.${path}`, message: `unknown tool group @${group} (not in toolGroups)` });
      }
    }
    for (const { path, filter } of filtersOf(latch.session)) {
      const inFilter = unknownGroup(filter.tool, raw.toolGroups);
      if (inFilter !== undefined) {
        out.push({ path: `${at}.${path}.tool`, message: `unknown tool group @${inFilter} (not in toolGroups)` });
      }
      const named = Array.isArray(filter.latch) ? filter.latch : [filter.latch];
      for (const id of named) {
        if (typeof id === 'string' && id.length > 0 && !ids.has(id)) {
          out.push({
            path: `${at}.${path}.latch`,
            message: `no latch of this policy has the id ${JSON.stringify(id)}`,
          });
        }
      }
    }
  });
  return out;
}

/** An intent's grant may name only known groups, and only captures its pattern has. */
function intentIssues(raw: unknown): PolicyIssue[] {
  const out: PolicyIssue[] = [];
  if (!isRecord(raw) || !Array.isArray(raw.intents)) return out;
  raw.intents.forEach((intent: unknown, i) => {
    if (!isRecord(intent) || !isRecord(intent.grant)) return;
    const at = `intents[${i}].grant`;
    const tools = Array.isArray(intent.grant.tools) ? intent.grant.tools : [intent.grant.tools];
    for (const tool of tools) {
      const group = unknownGroup(tool, raw.toolGroups);
      if (group !== undefined)
        out.push({ path: `${at}.tools`, message: `unknown tool group @${group} (not in toolGroups)` });
    }
    if (typeof intent.pattern !== 'string') return;
    const compiled = compileLinearRegex(intent.pattern);
    if (!compiled.ok) return;
    for (const name of captureNames(intent.grant)) {
      if (!compiled.regex.groupNames.includes(name)) {
        out.push({ path: `${at}.args`, message: `"$${name}" names no capture (?P<${name}>..) of the pattern` });
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
  if ('matches' in spec) return { path: segments, op: 'matches', value: mustCompile(spec.matches) };
  return { path: segments, op: 'notMatches', value: mustCompile(spec.notMatches) };
}

/** Compiles a source the schema already accepted. */
function mustCompile(source: string): LinearRegex {
  const compiled = compileLinearRegex(source);
  if (!compiled.ok) throw new TypeError('a regex the schema accepted failed to compile');
  return compiled.regex;
}

function compileLatch(spec: LatchSpec, groups: CompiledToolGroups): CompiledLatch {
  const stages = new Set<Stage>(Array.isArray(spec.stage) ? spec.stage : [spec.stage]);
  const when = Object.entries(spec.when ?? {}).map(([path, cond]) => compileCondition(path, cond));
  const setArgs = Object.entries(spec.setArgs ?? {}).map(([path, value]) =>
    Object.freeze({ path: Object.freeze(path.split('.').slice(1)), value: structuredClone(value) }),
  );
  const latch: {
    -readonly [K in keyof CompiledLatch]: CompiledLatch[K];
  } = {
    id: spec.id,
    stages,
    when,
    setArgs: Object.freeze(setArgs),
    verdict: spec.verdict,
    labels: Object.freeze([...new Set(spec.labels ?? [])]),
    session: compileSessionConditions(spec.session, groups),
    audit: spec.mode === 'audit',
  };
  if (spec.tool !== undefined) latch.tool = compileTool(spec.tool, groups);
  if (spec.content !== undefined) latch.content = mustCompile(spec.content);
  if (spec.redact !== undefined) latch.redact = spec.redact;
  if (spec.reason !== undefined) latch.reason = spec.reason;
  if (spec.purpose !== undefined) latch.purpose = spec.purpose;
  if (spec.modelSettings !== undefined) latch.modelSettings = Object.freeze({ ...spec.modelSettings });
  if (spec.route !== undefined) latch.route = Object.freeze({ ...spec.route });
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
 *   on a verdict other than WARN, a `setArgs` outside an action WARN, a `purpose` without the
 *   context_egress stage, a `modelSettings` without `purpose: "model_request"` or outside a WARN, a
 *   `route` outside an action-only WARN, a `default` other than ALLOW or BLOCK)
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
  const issues = withLatchIds(
    [
      ...(parsed.success ? [] : zodIssues(parsed.error, raw)),
      ...crossFieldIssues(raw),
      ...referenceIssues(raw),
      ...intentIssues(raw),
    ],
    raw,
  );
  if (issues.length > 0 || !parsed.success) {
    throw new InvalidPolicyError(issues.length > 0 ? issues : [{ path: '(root)', message: 'invalid policy' }]);
  }
  const spec = parsed.data as PolicySpec;
  const toolGroups = compileToolGroups(spec.toolGroups);
  return Object.freeze({
    agents: new Set(spec.agents),
    latches: Object.freeze(spec.latches.map((latch) => compileLatch(latch, toolGroups))),
    toolGroups,
    origins: originsOf(spec.toolGroups),
    intents: compileIntents(spec.intents),
    intentsFromClient: spec.intentsFromClient !== false,
    values: compileValues(spec.values),
    defaults: Object.freeze({ ...spec.default }),
  });
}
