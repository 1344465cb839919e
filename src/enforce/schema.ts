/**
 * Standard Schema (https://standardschema.dev, v1): the `~standard` interface that zod, valibot,
 * arktype and others implement, read here without a dependency on any of them. `guardTool`'s `schema`
 * option validates a call's args with it before the decision (docs/api.md: `GuardToolOptions.schema`).
 * @internal
 */

/** One problem a Standard Schema found: its message and where (the path only is ever reported). */
export interface StandardSchemaIssue {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

/** What a Standard Schema's `validate` gives: the parsed value, or the issues. */
export type StandardSchemaResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<StandardSchemaIssue> };

/**
 * A Standard Schema v1 (zod 3.24+ and 4, valibot 1, arktype 2, ...): an object with a `~standard`
 * member. `Output` is what `guardTool`'s `execute` receives.
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardSchemaResult<Output> | Promise<StandardSchemaResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  };
}

/** Whether `v` looks like a Standard Schema v1 (checked at `guardTool`, a TypeError otherwise). */
export function isStandardSchema(v: unknown): v is StandardSchemaV1 {
  if ((typeof v !== 'object' && typeof v !== 'function') || v === null) return false;
  const s = (v as { '~standard'?: unknown })['~standard'];
  return (
    typeof s === 'object' &&
    s !== null &&
    (s as { version?: unknown }).version === 1 &&
    typeof (s as { validate?: unknown }).validate === 'function'
  );
}

/** Most issue paths named in a refusal's message. */
const MAX_PATHS = 5;

/** An issue's path as `a.b.0` (keys only, never a value), or `(args)` for the whole object. */
function pathOf(issue: StandardSchemaIssue): string {
  const parts = (issue.path ?? []).map((p) => String(typeof p === 'object' && p !== null ? p.key : p).slice(0, 40));
  return parts.length === 0 ? '(args)' : parts.join('.');
}

/**
 * Validates `args` with `schema`: the parsed value, or why not. The message names the paths of the
 * issues only, never a value or the schema's own message (which may quote one).
 */
export async function validateArgs(
  schema: StandardSchemaV1,
  args: unknown,
): Promise<{ ok: true; value: unknown } | { ok: false; message: string }> {
  let result: StandardSchemaResult<unknown>;
  try {
    result = await schema['~standard'].validate(args);
  } catch {
    return { ok: false, message: 'the args schema threw while validating' };
  }
  if (result.issues === undefined) return { ok: true, value: result.value };
  const paths = [...new Set(result.issues.map(pathOf))];
  const shown = paths.slice(0, MAX_PATHS).join(', ') + (paths.length > MAX_PATHS ? ', ...' : '');
  return { ok: false, message: `the args do not match the tool's schema at ${shown}` };
}
