/**
 * Session conditions of a latch (docs/dev-pdp.md): `has`, `hasAny`, `lacks` on the session's labels,
 * `seen` and `count` over its history through a filter `{ tool, stage, verdict, latch, within }`.
 * The zod schema, and compilation against the policy's tool groups.
 * @packageDocumentation
 */
import { z } from 'zod';
import { STAGES, VERDICTS } from '../../decision.js';
import { compileTool, toolSchema } from '../tool-groups.js';
import { labelSchema } from './names.js';
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
    description: 'past steps matching every field given: tool (pattern or @group), stage, verdict, latch (an engaged latch id), within (the last n steps)',
});
/** The zod schema of one session condition. @internal */
export const sessionConditionSchema = z
    .union([
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
    description: 'one of: { has: label }, { hasAny: [labels] }, { lacks: label }, { seen: filter }, { count: filter, gte: n }',
});
/** The zod schema of a latch's `session`: one condition, or a list, all of which must hold. @internal */
export const sessionSchema = z
    .union([sessionConditionSchema, z.array(sessionConditionSchema).min(1)])
    .meta({ description: 'session conditions, all of which must hold (one object is a list of one)' });
const listOf = (value) => (Array.isArray(value) ? value : [value]);
function compileFilter(spec, groups) {
    const out = {};
    if (spec.tool !== undefined)
        out.tool = compileTool(spec.tool, groups);
    if (spec.stage !== undefined)
        out.stages = new Set(listOf(spec.stage));
    if (spec.verdict !== undefined)
        out.verdicts = new Set(listOf(spec.verdict));
    if (spec.latch !== undefined)
        out.latches = new Set(listOf(spec.latch));
    if (spec.within !== undefined)
        out.within = spec.within;
    return Object.freeze(out);
}
/** Compiles a validated `session` field. @internal */
export function compileSessionConditions(spec, groups) {
    if (spec === undefined)
        return Object.freeze([]);
    return Object.freeze(listOf(spec).map((c) => {
        if ('has' in c)
            return { kind: 'has', label: c.has };
        if ('hasAny' in c)
            return { kind: 'hasAny', labels: Object.freeze([...c.hasAny]) };
        if ('lacks' in c)
            return { kind: 'lacks', label: c.lacks };
        if ('seen' in c)
            return { kind: 'seen', filter: compileFilter(c.seen, groups) };
        return { kind: 'count', filter: compileFilter(c.count, groups), gte: c.gte };
    }));
}
/** Every filter of a raw `session` field, with its path below the latch, for the reference checks. @internal */
export function filtersOf(session) {
    const out = [];
    const list = Array.isArray(session) ? session : [session];
    list.forEach((condition, i) => {
        if (typeof condition !== 'object' || condition === null)
            return;
        const at = Array.isArray(session) ? `session[${i}]` : 'session';
        for (const key of ['seen', 'count']) {
            const filter = condition[key];
            if (typeof filter === 'object' && filter !== null && !Array.isArray(filter)) {
                out.push({ path: `${at}.${key}`, filter: filter });
            }
        }
    });
    return out;
}
