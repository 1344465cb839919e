/**
 * The `interceptors` option (docs/interceptors.md): what an interceptor is, what it sees and answers,
 * and its validation at `createPep` (a `TypeError` with `err.option`). Running the chain is core's
 * (`core/interceptors.ts`).
 * @packageDocumentation
 */
import { isStage, type Stage } from '../decision.js';

/** What an interceptor sees: the running value of one step, as a deeply frozen snapshot. */
export interface Step {
  /** The stage being decided. */
  readonly stage: Stage;
  /** The session of this call. */
  readonly session: string;
  /** The normalized tool name (action; context_egress when the caller named the tool). */
  readonly tool?: string;
  /** The running args (action). Frozen: return `proceedWith` to change them. */
  readonly args?: Readonly<Record<string, unknown>>;
  /** The running content (text stages). */
  readonly content?: string;
}

/**
 * The answer of a `before` interceptor. `route` (action stage only) sends the action to the sandbox
 * registered as `to` in `createPep({ sandboxes })` instead of running the tool (docs/interceptors.md,
 * "Routes to a sandbox"): the chain goes on and the PDP is still asked; an ALLOW becomes a WARN with
 * the route. A later interceptor may not route elsewhere (`interceptor_failed`), nor may the PDP
 * (`ambiguous_decision`).
 */
export type BeforeResult =
  | { action: 'proceed' }
  | { action: 'proceedWith'; args?: Record<string, unknown>; content?: string }
  | { action: 'deny'; reason: string }
  | { action: 'substitute'; result: unknown }
  | { action: 'route'; to: string; profile?: string };

/** The answer of an `after` interceptor. */
export type AfterResult =
  | { action: 'proceed' }
  | { action: 'proceedWith'; result: unknown }
  | { action: 'deny'; reason: string };

/**
 * The scalar settings of one model request an adapter is about to send (docs/interceptors.md, "Model
 * requests"): what a `modelRequest` interceptor and the PDP (`purpose: 'model_request'`) may cap or replace.
 */
export interface ModelRequest {
  /** The model id. */
  model?: string;
  /** The system prompt (the AI SDK's system messages; LangChain's `systemPrompt`; OpenAI Agents' `instructions`). */
  system?: string;
  /** Sampling temperature. A cap: a later value only lowers it. */
  temperature?: number;
  /** Nucleus sampling. A cap: a later value only lowers it. */
  topP?: number;
  /** Most tokens the model may write. A cap: a later value only lowers it. */
  maxOutputTokens?: number;
}

/**
 * The answer of a `modelRequest` interceptor: go on, go on with settings changed (numbers only go
 * down; a text another interceptor set may not be replaced), or stop the model call.
 */
export type ModelRequestResult =
  | { action: 'proceed' }
  | { action: 'proceedWith'; request: ModelRequest }
  | { action: 'deny'; reason: string };

/**
 * A local check (docs/interceptors.md).
 * @example
 * ```ts
 * const noSystemPaths: Interceptor = {
 *   name: 'no-system-paths',
 *   stages: ['action'],
 *   before: (step) =>
 *     String(step.args?.path).startsWith('/etc/') ? { action: 'deny', reason: 'system paths' } : { action: 'proceed' },
 * };
 * ```
 */
export interface Interceptor {
  /** Unique within one client; a duplicate is a `TypeError` at `createPep` (option `interceptors`). */
  name: string;
  /** The stages it runs on. @defaultValue every stage */
  stages?: Stage[];
  /** Runs before the request is built, inside the decision's deadline, in registration order. */
  before?(step: Step): BeforeResult | Promise<BeforeResult>;
  /** Runs in `guardTool` (and the adapters) after the tool ran, in registration order (action stage only). */
  after?(step: Step, result: unknown): AfterResult | Promise<AfterResult>;
  /**
   * Runs before each model request the AI SDK, LangChain and OpenAI Agents adapters send (and
   * `pep.checkModelRequest`), in registration order, before the PDP is asked; sees the settings as a
   * frozen copy (docs/interceptors.md, "Model requests"). `stages` does not apply.
   */
  modelRequest?(
    request: Readonly<ModelRequest>,
    context: { readonly session: string },
  ): ModelRequestResult | Promise<ModelRequestResult>;
}

/** An interceptor after validation: which stages, and its two hooks. @internal */
export interface CompiledInterceptor {
  readonly name: string;
  readonly stages: ReadonlySet<Stage> | undefined;
  readonly before: Interceptor['before'];
  readonly after: Interceptor['after'];
  readonly modelRequest: Interceptor['modelRequest'];
}

const KNOWN_KEYS: ReadonlySet<string> = new Set(['name', 'stages', 'before', 'after', 'modelRequest']);

/**
 * Validates the `interceptors` option. `fail(path, problem)` throws the option `TypeError`.
 * @returns a frozen list of compiled interceptors (empty when the option is absent)
 * @internal
 */
export function validateInterceptors(
  raw: unknown,
  fail: (path: string, problem: string) => never,
): readonly CompiledInterceptor[] {
  if (raw === undefined) return Object.freeze([]);
  if (!Array.isArray(raw)) fail('interceptors', 'expected an array of interceptors');
  const names = new Set<string>();
  const out: CompiledInterceptor[] = [];
  raw.forEach((item: unknown, i) => {
    const at = `interceptors.${i}`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) fail(at, 'expected an interceptor object');
    for (const key of Object.keys(item)) {
      if (!KNOWN_KEYS.has(key)) fail(`${at}.${key.slice(0, 40)}`, 'unknown interceptor key');
    }
    const it = item as Partial<Interceptor>;
    if (typeof it.name !== 'string' || it.name.trim() === '' || !it.name.isWellFormed()) {
      fail(`${at}.name`, 'expected a non-empty string');
    }
    if (names.has(it.name)) fail('interceptors', `duplicate interceptor name ${JSON.stringify(it.name.slice(0, 40))}`);
    names.add(it.name);
    let stages: Set<Stage> | undefined;
    if (it.stages !== undefined) {
      if (!Array.isArray(it.stages) || it.stages.length === 0 || !it.stages.every(isStage)) {
        fail(`${at}.stages`, 'expected a non-empty list of stages');
      }
      stages = new Set(it.stages);
    }
    if (it.before !== undefined && typeof it.before !== 'function') fail(`${at}.before`, 'expected a function');
    if (it.after !== undefined && typeof it.after !== 'function') fail(`${at}.after`, 'expected a function');
    if (it.modelRequest !== undefined && typeof it.modelRequest !== 'function') {
      fail(`${at}.modelRequest`, 'expected a function');
    }
    if (it.before === undefined && it.after === undefined && it.modelRequest === undefined) {
      fail(at, 'expected a before, an after or a modelRequest function');
    }
    if (it.after !== undefined && stages !== undefined && !stages.has('action')) {
      fail(`${at}.after`, 'after runs on the action stage only; add it to stages');
    }
    out.push(
      Object.freeze({ name: it.name, stages, before: it.before, after: it.after, modelRequest: it.modelRequest }),
    );
  });
  return Object.freeze(out);
}
