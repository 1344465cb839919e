/**
 * Session conditions of a latch (docs/dev-pdp.md): `has`, `hasAny`, `lacks` on the session's labels,
 * `seen` and `count` over its history through a filter `{ tool, stage, verdict, latch, within }`.
 * The zod schema, and compilation against the policy's tool groups.
 * @packageDocumentation
 */

import { STAGES, type Stage, VERDICTS, type Verdict } from 'agent-pep/internal';
import { z } from 'zod';
import { type CompiledToolGroups, compileTool, type ToolMatcher, toolSchema } from '../tool-groups.js';
import { labelSchema } from './names.js';

/** Which past steps a `seen` or `count` looks at; a step matches when every field given matches. */
export interface StepFilterSpec {
  /** A tool pattern or `@group`; a step without a tool never matches it. */
  tool?: string;
  /** A stage or a list of stages. */
  stage?: Stage | Stage[];
  /** A verdict or a list of verdicts. */
  verdict?: Verdict | Verdict[];
  /** A latch id or a list of them: the step engaged one of them. */
  latch?: string | string[];
  /** Only the last n steps before this one. */
  within?: number;
}

/**
 * Where a flowing value came from: `"user"` (the user's input), `"untrusted"` (any tool's output, at
 * `context_egress`), or `"@group"` (the output of a tool of that group).
 */
export type FlowSourceSpec = string;

/** A `flows` condition: the call's args carry a value the session saw come from `from`. */
export interface FlowSpec {
  /** `"user"`, `"untrusted"` or `"@group"`. */
  from: FlowSourceSpec;
  /** Only the value at this dotted path (`args.to`), strings inside it included. */
  into?: string;
  /** Only values of this kind (a built-in kind or a policy `values` name). */
  kind?: string;
  /** Not a value that (also) came from here: `"user"`, `"untrusted"` or `"@group"`. */
  notFrom?: FlowSourceSpec;
}

/** One session condition, as written. */
export type SessionConditionSpec =
  | { has: string }
  | { hasAny: string[] }
  | { lacks: string }
  | { seen: StepFilterSpec }
  | { count: StepFilterSpec; gte: number }
  | { granted: boolean }
  | { flows: FlowSpec }
  | { sameOrigin: boolean };

const stageSchema = z.enum(STAGES);
const verdictSchema = z.enum(VERDICTS);
/** Largest `within` and `gte`. */
const MAX_STEPS = 1_000_000;

/** The zod schema of a step filter. @internal */
export const stepFilterSchema = z
  .strictObject({
    tool: toolSchema.optional(),
    stage: z.union([stageSchema, z.array(stageSchema).min(1)]).optional(),
    verdict: z.union([verdictSchema, z.array(verdictSchema).min(1)]).optional(),
    latch: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
    within: z.int().min(1).max(MAX_STEPS).optional().meta({ description: 'only the last n steps before this one' }),
  })
  .refine((filter) => Object.keys(filter).length > 0, {
    error: 'an empty filter is refused: give tool, stage, verdict, latch or within',
  })
  .meta({
    description:
      'past steps matching every field given: tool (pattern or @group), stage, verdict, latch (an engaged latch id), within (the last n steps)',
  });

const FLOW_SOURCE = /^(user|untrusted|@[A-Za-z0-9_.:-]{1,64})$/;
const flowSourceSchema = z
  .string()
  .regex(FLOW_SOURCE, { error: 'a flow source is "user", "untrusted" or "@group"' })
  .meta({
    description: '"user" (input text), "untrusted" (any tool output), or "@group" (output of a tool of the group)',
  });

/** The zod schema of a `flows` condition. @internal */
export const flowSchema = z
  .strictObject({
    from: flowSourceSchema,
    into: z
      .string()
      .regex(/^args(\.[^.]+)+$/, { error: 'into is a dotted path into args, like args.to' })
      .optional(),
    kind: z
      .string()
      .regex(/^[A-Za-z0-9_.:-]{1,64}$/)
      .optional(),
    notFrom: flowSourceSchema.optional(),
  })
  .meta({
    description:
      "holds when the call's args (or the value at into) carry a value of kind the session saw come from `from`, and never from notFrom",
  });

/** The zod schema of one session condition. @internal */
export const sessionConditionSchema = z
  .union([
    z.strictObject({
      granted: z.boolean().meta({ description: 'true: the call is inside a live grant; false: it is inside none' }),
    }),
    z.strictObject({ flows: flowSchema }),
    z.strictObject({
      sameOrigin: z.boolean().meta({
        description:
          "true: every value flowing into the args came from the called tool's origin; false: one came from another",
      }),
    }),
    z.strictObject({ has: labelSchema }),
    z.strictObject({ hasAny: z.array(labelSchema).min(1) }),
    z.strictObject({ lacks: labelSchema }),
    z.strictObject({ seen: stepFilterSchema }),
    z.strictObject({
      count: stepFilterSchema,
      gte: z.int().min(1).max(MAX_STEPS).meta({ description: 'at least this many matching past steps' }),
    }),
  ])
  .meta({
    description:
      'one of: { has: label }, { hasAny: [labels] }, { lacks: label }, { seen: filter }, { count: filter, gte: n }, ' +
      '{ granted: bool }, { flows: { from, into?, kind?, notFrom? } }, { sameOrigin: bool }',
  });

/** The zod schema of a latch's `session`: one condition, or a list, all of which must hold. @internal */
export const sessionSchema = z
  .union([sessionConditionSchema, z.array(sessionConditionSchema).min(1)])
  .meta({ description: 'session conditions, all of which must hold (one object is a list of one)' });

/** A compiled filter. @internal */
export interface CompiledStepFilter {
  readonly tool?: ToolMatcher;
  readonly stages?: ReadonlySet<Stage>;
  readonly verdicts?: ReadonlySet<Verdict>;
  readonly latches?: ReadonlySet<string>;
  /** Only steps at most this far back (1 is the last one). */
  readonly within?: number;
}

/** A compiled session condition. @internal */
export type CompiledSessionCondition =
  | { readonly kind: 'has'; readonly label: string }
  | { readonly kind: 'hasAny'; readonly labels: readonly string[] }
  | { readonly kind: 'lacks'; readonly label: string }
  | { readonly kind: 'seen'; readonly filter: CompiledStepFilter }
  | { readonly kind: 'count'; readonly filter: CompiledStepFilter; readonly gte: number }
  | { readonly kind: 'granted'; readonly value: boolean }
  | { readonly kind: 'flows'; readonly flow: CompiledFlow }
  | { readonly kind: 'sameOrigin'; readonly value: boolean };

/** A compiled flow source: the user, any tool output, or a group's tools. @internal */
export type CompiledFlowSource = { readonly user: true } | { readonly untrusted: true } | { readonly group: string };

/** A compiled `flows` condition. @internal */
export interface CompiledFlow {
  readonly from: CompiledFlowSource;
  readonly notFrom?: CompiledFlowSource;
  /** The path after `args.`, or absent for all args. */
  readonly into?: readonly string[];
  readonly kind?: string;
}

function compileSource(source: string): CompiledFlowSource {
  if (source === 'user') return { user: true };
  if (source === 'untrusted') return { untrusted: true };
  return { group: source.slice(1) };
}

function compileFlow(spec: FlowSpec): CompiledFlow {
  const out: { -readonly [K in keyof CompiledFlow]: CompiledFlow[K] } = { from: compileSource(spec.from) };
  if (spec.notFrom !== undefined) out.notFrom = compileSource(spec.notFrom);
  if (spec.into !== undefined) out.into = Object.freeze(spec.into.split('.').slice(1));
  if (spec.kind !== undefined) out.kind = spec.kind;
  return Object.freeze(out);
}

const listOf = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

function compileFilter(spec: StepFilterSpec, groups: CompiledToolGroups): CompiledStepFilter {
  const out: { -readonly [K in keyof CompiledStepFilter]: CompiledStepFilter[K] } = {};
  if (spec.tool !== undefined) out.tool = compileTool(spec.tool, groups);
  if (spec.stage !== undefined) out.stages = new Set(listOf(spec.stage));
  if (spec.verdict !== undefined) out.verdicts = new Set(listOf(spec.verdict));
  if (spec.latch !== undefined) out.latches = new Set(listOf(spec.latch));
  if (spec.within !== undefined) out.within = spec.within;
  return Object.freeze(out);
}

/** Compiles a validated `session` field. @internal */
export function compileSessionConditions(
  spec: SessionConditionSpec | SessionConditionSpec[] | undefined,
  groups: CompiledToolGroups,
): readonly CompiledSessionCondition[] {
  if (spec === undefined) return Object.freeze([]);
  return Object.freeze(
    listOf(spec).map((c): CompiledSessionCondition => {
      if ('has' in c) return { kind: 'has', label: c.has };
      if ('hasAny' in c) return { kind: 'hasAny', labels: Object.freeze([...c.hasAny]) };
      if ('lacks' in c) return { kind: 'lacks', label: c.lacks };
      if ('seen' in c) return { kind: 'seen', filter: compileFilter(c.seen, groups) };
      if ('granted' in c) return { kind: 'granted', value: c.granted };
      if ('flows' in c) return { kind: 'flows', flow: compileFlow(c.flows) };
      if ('sameOrigin' in c) return { kind: 'sameOrigin', value: c.sameOrigin };
      return { kind: 'count', filter: compileFilter(c.count, groups), gte: c.gte };
    }),
  );
}

/** Every `@group` a raw `session` field's flow conditions name, with its path below the latch. @internal */
export function flowGroupsOf(session: unknown): { path: string; group: string }[] {
  const out: { path: string; group: string }[] = [];
  const list = Array.isArray(session) ? session : [session];
  list.forEach((condition: unknown, i) => {
    if (typeof condition !== 'object' || condition === null) return;
    const flow = (condition as { flows?: unknown }).flows;
    if (typeof flow !== 'object' || flow === null) return;
    const at = Array.isArray(session) ? `session[${i}]` : 'session';
    for (const key of ['from', 'notFrom'] as const) {
      const source = (flow as Record<string, unknown>)[key];
      if (typeof source === 'string' && source.startsWith('@'))
        out.push({ path: `${at}.flows.${key}`, group: source.slice(1) });
    }
  });
  return out;
}

/** Every filter of a raw `session` field, with its path below the latch, for the reference checks. @internal */
export function filtersOf(session: unknown): { path: string; filter: Record<string, unknown> }[] {
  const out: { path: string; filter: Record<string, unknown> }[] = [];
  const list = Array.isArray(session) ? session : [session];
  list.forEach((condition: unknown, i) => {
    if (typeof condition !== 'object' || condition === null) return;
    const at = Array.isArray(session) ? `session[${i}]` : 'session';
    for (const key of ['seen', 'count'] as const) {
      const filter = (condition as Record<string, unknown>)[key];
      if (typeof filter === 'object' && filter !== null && !Array.isArray(filter)) {
        out.push({ path: `${at}.${key}`, filter: filter as Record<string, unknown> });
      }
    }
  });
  return out;
}
