/**
 * Model-request caps (docs/interceptors.md, "Model requests"): before each model request an adapter
 * sends, its scalar settings (`model`, `system`, `temperature`, `topP`, `maxOutputTokens`) go through
 * the `modelRequest` interceptors and then to the PDP as a `context_egress` decision with
 * `purpose: 'model_request'` and content the JSON of those settings. Either may cap or replace them; a
 * number may only go down (a cap one set is never raised by a later one), a text set by one may not be
 * replaced by another; a deny or a BLOCK stops the model call.
 * @internal
 */
import type { PolicyDecision } from '../decision.js';
import { ABORTED, LATE, race } from '../internal/deadline.js';
import { isRecord } from '../internal/guards.js';
import type { ModelRequest, ModelRequestResult } from '../options/interceptors.js';
import type { CompiledInterceptor } from './interceptors.js';

/** The numeric settings, capped (a later value above an earlier one is lowered to it). */
const NUMBERS = ['temperature', 'topP', 'maxOutputTokens'] as const;
/** The text settings, replaced (once: a later replacement of a replaced one is refused). */
const TEXTS = ['model', 'system'] as const;
const KEYS: ReadonlySet<string> = new Set<string>([...NUMBERS, ...TEXTS]);
/** Longest text setting accepted (a system prompt may be long). */
const MAX_TEXT = 1_000_000;

/** A model request's settings, or why a value is not one. */
export function readModelRequest(value: unknown): ModelRequest | string {
  if (!isRecord(value)) return 'model request settings are not an object';
  const out: ModelRequest = {};
  for (const [key, v] of Object.entries(value)) {
    if (!KEYS.has(key)) return `unknown model request setting ${JSON.stringify(key.slice(0, 40))}`;
    if (v === undefined) continue;
    if ((NUMBERS as readonly string[]).includes(key)) {
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) return `${key} is not a finite number >= 0`;
      if (key === 'maxOutputTokens' && !Number.isSafeInteger(v)) return 'maxOutputTokens is not an integer';
    } else if (typeof v !== 'string' || v.length > MAX_TEXT || !v.isWellFormed()) {
      return `${key} is not a string`;
    }
    (out as Record<string, unknown>)[key] = v;
  }
  return out;
}

/** The settings as the JSON the PDP reads (keys in one order: model, system, temperature, topP, maxOutputTokens). */
export function modelRequestJson(r: ModelRequest): string {
  const ordered: Record<string, unknown> = {};
  for (const key of [...TEXTS, ...NUMBERS]) if (r[key] !== undefined) ordered[key] = r[key];
  return JSON.stringify(ordered);
}

/**
 * `base` with `change` applied by the one rule: a number goes down only (`min`), a text is replaced
 * only where no earlier step replaced it. `replaced` names the texts replaced so far (updated).
 * @returns the merged settings, or the text setting a second replacement tried to change
 */
export function capModelRequest(
  base: ModelRequest,
  change: ModelRequest,
  replaced: Set<string>,
): { ok: true; request: ModelRequest } | { ok: false; key: string } {
  const out: ModelRequest = { ...base };
  for (const key of NUMBERS) {
    const v = change[key];
    if (v === undefined) continue;
    const was = base[key];
    out[key] = was === undefined ? v : Math.min(was, v);
  }
  for (const key of TEXTS) {
    const v = change[key];
    if (v === undefined || v === base[key]) continue;
    if (replaced.has(key)) return { ok: false, key };
    replaced.add(key);
    out[key] = v;
  }
  return { ok: true, request: out };
}

/** How the `modelRequest` chain ended. */
export type ModelChainOutcome =
  | { kind: 'proceed'; request: ModelRequest; replaced: Set<string> }
  | { kind: 'deny'; name: string; reason: string }
  | { kind: 'failed'; name: string; why: string }
  | { kind: 'aborted' };

/** One interceptor's settled answer, judged. */
function judge(
  it: CompiledInterceptor,
  answer: unknown,
  running: { request: ModelRequest; replaced: Set<string> },
): ModelChainOutcome | undefined {
  if (!isRecord(answer)) return { kind: 'failed', name: it.name, why: 'answered something that is not a result' };
  const keys = Object.keys(answer);
  switch (answer.action) {
    case 'proceed':
      return keys.length === 1 ? undefined : { kind: 'failed', name: it.name, why: 'a malformed proceed' };
    case 'deny': {
      const reason = answer.reason;
      if (typeof reason !== 'string' || keys.length !== 2) {
        return { kind: 'failed', name: it.name, why: 'a deny without a string reason' };
      }
      return { kind: 'deny', name: it.name, reason };
    }
    case 'proceedWith': {
      if (keys.length !== 2 || !Object.hasOwn(answer, 'request')) {
        return { kind: 'failed', name: it.name, why: 'a malformed proceedWith' };
      }
      const change = readModelRequest(answer.request);
      if (typeof change === 'string') return { kind: 'failed', name: it.name, why: change };
      const merged = capModelRequest(running.request, change, running.replaced);
      if (!merged.ok)
        return { kind: 'failed', name: it.name, why: `replaced ${merged.key}, which an earlier interceptor set` };
      running.request = merged.request;
      return undefined;
    }
    default:
      return { kind: 'failed', name: it.name, why: 'an unknown action' };
  }
}

/**
 * Runs the `modelRequest` interceptors in registration order, each seeing the running settings as a
 * frozen copy, inside the decision's deadline. The first deny ends it; a throw, a rejection, a
 * malformed answer or one still pending at the deadline is `failed`. Never rejects.
 */
export async function runModelRequestChain(
  chain: readonly CompiledInterceptor[],
  start: ModelRequest,
  session: string,
  bounds: { deadlineAt: number; signal: AbortSignal | undefined },
): Promise<ModelChainOutcome> {
  const running = { request: start, replaced: new Set<string>() };
  for (const it of chain) {
    const hook = it.modelRequest as NonNullable<CompiledInterceptor['modelRequest']>;
    let answer: ModelRequestResult | typeof LATE | typeof ABORTED;
    try {
      answer = await race(
        hook(Object.freeze({ ...running.request }), Object.freeze({ session })),
        bounds.deadlineAt,
        bounds.signal,
      );
    } catch {
      return { kind: 'failed', name: it.name, why: 'threw or rejected' };
    }
    if (answer === LATE) return { kind: 'failed', name: it.name, why: 'was still pending at the deadline' };
    if (answer === ABORTED) return { kind: 'aborted' };
    let end: ModelChainOutcome | undefined;
    try {
      end = judge(it, answer, running);
    } catch {
      end = { kind: 'failed', name: it.name, why: 'threw or rejected' };
    }
    if (end !== undefined) return end;
  }
  return { kind: 'proceed', request: running.request, replaced: running.replaced };
}

/**
 * The settings a PDP decision lets go on: the chain's, capped further by a WARN's `transformedContent`
 * (the JSON of the capped settings), or why the decision cannot be enforced.
 */
export function afterPdp(
  decision: PolicyDecision,
  request: ModelRequest,
  replaced: Set<string>,
): { ok: true; request: ModelRequest } | { ok: false; why: string } {
  if (decision.verdict !== 'WARN' || decision.transformedContent === undefined) return { ok: true, request };
  let parsed: unknown;
  try {
    parsed = JSON.parse(decision.transformedContent);
  } catch {
    return { ok: false, why: 'a model_request WARN whose transformedContent is not JSON' };
  }
  const change = readModelRequest(parsed);
  if (typeof change === 'string') return { ok: false, why: `a model_request WARN: ${change}` };
  const merged = capModelRequest(request, change, replaced);
  return merged.ok
    ? merged
    : { ok: false, why: `a model_request WARN replaced ${merged.key}, which an interceptor set` };
}
