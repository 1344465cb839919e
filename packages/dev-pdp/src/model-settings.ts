/**
 * Model-request settings (docs/dev-pdp.md, "Model requests"): the SDK asks about each model request as
 * a `context_egress` decision with `purpose: "model_request"` and content the JSON of its scalar
 * settings. A latch's `modelSettings` caps or replaces them: a number is lowered to the cap (set when
 * the request had none), a text (`model`, `system`) is replaced. The WARN's `transformedContent` is the
 * JSON of the settings after every engaged latch, which the SDK applies by the same rule.
 * @packageDocumentation
 */
import { isRecord } from 'agent-pep/internal';
import { z } from 'zod';

/** What a latch's `modelSettings` may cap (numbers) or replace (texts), as written in the policy JSON. */
export interface ModelSettingsSpec {
  /** Replaces the model. */
  model?: string;
  /** Replaces the system prompt (instructions). */
  system?: string;
  /** Caps the temperature (>= 0). */
  temperature?: number;
  /** Caps top-p (>= 0). */
  topP?: number;
  /** Caps the output tokens (an integer >= 0). */
  maxOutputTokens?: number;
}

/** The numbers, capped; the texts, replaced. Keys in the order the SDK writes them. */
const NUMBERS = ['temperature', 'topP', 'maxOutputTokens'] as const;
const TEXTS = ['model', 'system'] as const;

/** The zod schema of `modelSettings`. @internal */
export const modelSettingsSchema = z
  .strictObject({
    model: z.string().min(1).max(200).optional(),
    system: z.string().max(100_000).optional(),
    temperature: z.number().min(0).optional(),
    topP: z.number().min(0).optional(),
    maxOutputTokens: z.int().min(0).optional(),
  })
  .refine((s) => Object.keys(s).length > 0, { error: 'modelSettings names at least one setting' })
  .meta({
    description:
      'purpose model_request, verdict WARN only: caps temperature, topP, maxOutputTokens (lowered to the cap, set when absent) and replaces model, system',
  });

/**
 * The settings of a model request's content, with every engaged latch's `modelSettings` applied in
 * policy order (a number only goes down; a later latch's text wins), as JSON in the SDK's key order.
 * @returns the JSON, or `undefined` when the content is not a JSON object (the request cannot be capped)
 * @internal
 */
export function capModelSettings(content: string, caps: readonly ModelSettingsSpec[]): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    return undefined;
  }
  if (!isRecord(parsed)) return undefined;
  const out: Record<string, unknown> = { ...parsed };
  for (const cap of caps) {
    for (const key of NUMBERS) {
      const limit = cap[key];
      if (limit === undefined) continue;
      const was = out[key];
      out[key] = typeof was === 'number' ? Math.min(was, limit) : limit;
    }
    for (const key of TEXTS) if (cap[key] !== undefined) out[key] = cap[key];
  }
  const ordered: Record<string, unknown> = {};
  for (const key of [...TEXTS, ...NUMBERS]) if (out[key] !== undefined) ordered[key] = out[key];
  // a setting the PDP does not know is passed on as sent (the SDK decides what it accepts)
  for (const [key, value] of Object.entries(out)) if (!Object.hasOwn(ordered, key)) ordered[key] = value;
  return JSON.stringify(ordered);
}
