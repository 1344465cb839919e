/**
 * Names in a session-aware policy (docs/dev-pdp.md): labels and tool-group names are at most 64
 * characters from `[A-Za-z0-9_.:-]`, wherever they appear.
 * @packageDocumentation
 */
import { z } from 'zod';

/** A label or tool-group name: 1 to 64 characters from `[A-Za-z0-9_.:-]`. @internal */
export const NAME_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/;

/** What a name must look like, for error messages. @internal */
export const NAME_RULE = 'at most 64 characters from A-Z a-z 0-9 _ . : -';

/** The zod schema of a label. @internal */
export const labelSchema = z
  .string()
  .regex(NAME_PATTERN, { error: `a label is ${NAME_RULE}` })
  .meta({ description: `a session label: ${NAME_RULE}` });

/** The zod schema of a tool-group name (the key of `toolGroups`, `@name` in a `tool`). @internal */
export const groupNameSchema = z
  .string()
  .regex(NAME_PATTERN, { error: `a tool-group name is ${NAME_RULE}` })
  .meta({ description: `a tool-group name: ${NAME_RULE}` });
