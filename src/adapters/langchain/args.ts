/**
 * The args a LangChain tool's body gets (docs/adapters.md "Schemas: defaults and coercions"): the tool's
 * zod schema parses them before the body runs, so the adapter decides on the parse, made twice, and
 * refuses a schema that makes something a permit cannot bind.
 * @internal
 */
import { isDeepStrictEqual } from 'node:util';
import { StructuredTool, Tool } from '@langchain/core/tools';
import { type InteropZodType, interopParseAsync, isInteropZodSchema } from '@langchain/core/utils/types';
import { isPlainObject } from '../../internal/guards.js';
import { withoutUndefinedMembers } from '../../internal/json.js';

/** Thrown in the guarded execute when the tool's schema would change the args decided: not run. */
export class SchemaChanges {}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

/** Whether a tool object is a LangChain `StructuredTool` (it parses with `this.schema`, then `_call`). */
function isStructuredTool(tool: unknown): tool is StructuredTool {
  return tool instanceof StructuredTool;
}

/**
 * How a tool call's args are decided:
 * - `asWritten`: no zod schema, or LangChain's string tool (its schema hands on `args.input`);
 * - `parsed`: the schema's output, a plain object, as JSON has it (`decided`): what the body gets, since
 *   the schema was seen to parse the args to it twice;
 * - `unfit`: the args do not fit; `tool`, a view of the tool whose body refuses to run (its parse
 *   refuses them with LangChain's own error; were it to pass, nothing undecided runs);
 * - `refused`: the schema makes something a permit cannot bind, or parses the same args differently.
 */
export type ArgsPlan =
  | { kind: 'asWritten' }
  | { kind: 'parsed'; schema: InteropZodType; decided: Record<string, unknown> }
  | { kind: 'unfit'; tool: StructuredTool }
  | { kind: 'refused'; why: string };

/**
 * `schema`'s parse of `args`, as JSON has it, when it is a plain object and a second parse gives the same:
 * the tool parses the args once more before its body runs, and a schema that parses them differently
 * each time (a counter, a default made per parse such as a fresh id) would run args the permit does
 * not bind. Undefined otherwise.
 * @param first - the first parse, when the caller already made it
 * @throws what the first parse throws (the args do not fit)
 */
export async function stableParse(
  schema: InteropZodType,
  args: unknown,
  first: unknown = undefined,
): Promise<Record<string, unknown> | undefined> {
  if (first === undefined) first = await interopParseAsync(schema, args);
  if (!isObject(first) || Array.isArray(first) || !isPlainObject(first)) return undefined;
  let second: unknown;
  try {
    second = await interopParseAsync(schema, args);
  } catch {
    return undefined;
  }
  const decided = withoutUndefinedMembers(first);
  return isObject(second) && isDeepStrictEqual(withoutUndefinedMembers(second), decided)
    ? (decided as Record<string, unknown>)
    : undefined;
}

/**
 * How the args of a call to `tool` are decided (see {@link ArgsPlan}): the tool parses its args with its
 * zod schema before its body runs (coercions, defaults, transforms), so the PDP decides on what the body
 * will get, not on what the model wrote.
 */
export async function planArgs(tool: unknown, args: unknown): Promise<ArgsPlan> {
  const schema = isObject(tool) ? tool.schema : undefined;
  if (schema === undefined || !isInteropZodSchema(schema)) return { kind: 'asWritten' };
  let parsed: unknown;
  try {
    parsed = await interopParseAsync(schema, args);
  } catch {
    if (!isStructuredTool(tool)) return { kind: 'refused', why: 'args do not fit the tool schema' };
    // The tool's own parse refuses them; were it to pass, `_call` refuses to run.
    const refusing = Object.create(tool, {
      _call: {
        value: () => {
          throw new SchemaChanges();
        },
      },
    }) as StructuredTool;
    return { kind: 'unfit', tool: refusing };
  }
  // LangChain's string tools (`DynamicTool`, a schemaless `tool()`) hand on `args.input` as it is.
  if (tool instanceof Tool && typeof parsed === 'string' && isObject(args) && parsed === args.input) {
    return { kind: 'asWritten' };
  }
  const decided = await stableParse(schema, args, parsed).catch(() => undefined);
  if (decided !== undefined) return { kind: 'parsed', schema, decided };
  return { kind: 'refused', why: 'the tool schema makes no object of the args, or parses them differently each time' };
}

/**
 * What the tool is given for the args `args` the enforcement layer runs (the tool parses them once more
 * before its body runs). The args decided: the call as the model wrote it (`written`, seen to parse to
 * them twice). Others (a WARN's transformedArgs, an interceptor's): themselves, which must parse to
 * themselves twice, or the body would run args the permit does not bind.
 * @throws SchemaChanges when the schema would change them
 */
export async function toolArgsFor(
  plan: ArgsPlan,
  decided: unknown,
  written: unknown,
  args: Record<string, unknown>,
): Promise<unknown> {
  if (plan.kind !== 'parsed') return args;
  if (isDeepStrictEqual(args, decided)) return written;
  const again = await stableParse(plan.schema, args).catch(() => undefined);
  if (again === undefined || !isDeepStrictEqual(again, args)) throw new SchemaChanges();
  return args;
}
