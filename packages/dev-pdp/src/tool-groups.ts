/**
 * Tool patterns and tool groups (docs/dev-pdp.md): a `tool` is a normalized glob (`bank_*`) or
 * `@name`, one of the policy's `toolGroups`, which matches when any of the group's globs does.
 * @packageDocumentation
 */
import { z } from 'zod';
import { compileGlob, type ToolGlob } from './glob.js';
import { groupNameSchema, NAME_PATTERN } from './sessions/names.js';

/** A tool pattern in normalized form, with `*` wildcards. @internal */
export const TOOL_PATTERN = /^[a-z0-9*]+(_[a-z0-9*]+)*$/;

/** A reference to a tool group: `@` and the group's name. @internal */
export const GROUP_REFERENCE = /^@[A-Za-z0-9_.:-]{1,64}$/;

/** The zod schema of one glob (inside a group). @internal */
export const toolGlobSchema = z
  .string()
  .regex(TOOL_PATTERN, {
    error: 'a tool pattern is a normalized tool name (a-z, 0-9, single _) with optional * wildcards',
  })
  .meta({ description: 'normalized tool-name pattern; * matches any run of characters, _ included, possibly empty' });

/** The zod schema of a `tool` field of a latch or a session filter: a glob or `@group`. @internal */
export const toolSchema = z
  .string()
  .refine((value) => TOOL_PATTERN.test(value) || GROUP_REFERENCE.test(value), {
    error: 'tool must be a normalized tool name (a-z, 0-9, single _) with optional * wildcards, or @group',
  })
  .meta({
    description:
      'a normalized tool-name pattern (* matches any run of characters, _ included, possibly empty), or "@name" for a group of toolGroups',
  });

/**
 * One tool group, as written: a list of patterns, or `{ tools, origin?, except? }`: `origin` names where
 * the tools live (an MCP server, a service); `except` lists patterns the group leaves out, so a tool is in
 * the group when one of `tools` matches it and none of `except` does (`{ tools: ["*"], except: [...] }`:
 * every tool but these).
 */
export type ToolGroupSpec = string[] | { tools: string[]; origin?: string; except?: string[] };

/** The zod schema of the top-level `toolGroups`. @internal */
export const toolGroupsSchema = z
  .record(
    groupNameSchema,
    z.union([
      z.array(toolGlobSchema).min(1),
      z.strictObject({
        tools: z.array(toolGlobSchema).min(1),
        origin: z
          .string()
          .regex(/^[A-Za-z0-9_.:-]{1,64}$/, { error: 'an origin is at most 64 characters from A-Z a-z 0-9 _ . : -' })
          .optional()
          .meta({ description: 'where the tools live (an MCP server, a service), for flows and sameOrigin' }),
        except: z
          .array(toolGlobSchema)
          .min(1)
          .optional()
          .meta({ description: 'patterns of tools the group leaves out even when one of its tools patterns matches' }),
      }),
    ]),
  )
  .meta({
    description:
      'named lists of tool patterns, used as tool: "@name" in latches and session filters; { tools, origin, except } also names where they live and what the group leaves out',
  });

/** Group name -> declared origin, in policy order. @internal */
export function originsOf(groups: Record<string, ToolGroupSpec> | undefined): ReadonlyMap<string, string> {
  const out = new Map<string, string>();
  for (const [name, spec] of Object.entries(groups ?? {})) {
    if (!Array.isArray(spec) && spec.origin !== undefined) out.set(name, spec.origin);
  }
  return out;
}

/** A compiled `tool` field: a glob, or a group matching when any of its globs does. @internal */
export type ToolMatcher = ToolGlob;

/** The groups of a policy, compiled. @internal */
export type CompiledToolGroups = ReadonlyMap<string, ToolMatcher>;

/** Compiles `toolGroups` (already validated). @internal */
export function compileToolGroups(groups: Record<string, ToolGroupSpec> | undefined): CompiledToolGroups {
  const out = new Map<string, ToolMatcher>();
  for (const [name, spec] of Object.entries(groups ?? {})) {
    const globs = (Array.isArray(spec) ? spec : spec.tools).map(compileGlob);
    const except = (Array.isArray(spec) ? [] : (spec.except ?? [])).map(compileGlob);
    const test = (tool: string) => globs.some((glob) => glob.test(tool)) && !except.some((glob) => glob.test(tool));
    out.set(name, Object.freeze({ source: `@${name}`, test }));
  }
  return out;
}

/**
 * Compiles a validated `tool` field against the compiled groups.
 * @throws TypeError for an unknown group (the policy's reference check reports it first)
 * @internal
 */
export function compileTool(tool: string, groups: CompiledToolGroups): ToolMatcher {
  if (!tool.startsWith('@')) return compileGlob(tool);
  const group = groups.get(tool.slice(1));
  if (group === undefined) throw new TypeError('a tool group the policy checks accepted is unknown');
  return group;
}

/** The group a `tool` field names, when it names one that `groups` lacks; else undefined. @internal */
export function unknownGroup(tool: unknown, groups: unknown): string | undefined {
  if (typeof tool !== 'string' || !GROUP_REFERENCE.test(tool)) return undefined;
  const name = tool.slice(1);
  const known = typeof groups === 'object' && groups !== null && !Array.isArray(groups) && Object.hasOwn(groups, name);
  return known && NAME_PATTERN.test(name) ? undefined : name;
}
