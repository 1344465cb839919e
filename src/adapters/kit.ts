/**
 * What every adapter shares (docs/adapters.md), so that an adapter file holds only the mapping to its
 * host's extension points: the enforcement layer of the client it is given, strict options, the keys and
 * bounds they share, a bounded memory of checked texts, and a tool result as the text a model reads. The
 * session of a call is `sessionOf`'s (internal/session.ts), from the host's thread id.
 * @internal
 */
import { LRUCache } from 'lru-cache';
import { type FailClosedCode, isTextStage, synthesizeBlock, type TextStage } from '../decision.js';
import type { Kernel, Ran, ResultCheck } from '../enforce/kernel.js';
import { kernelOf } from '../enforce/registry.js';
import { type ActionResult, type RefusalSite, type Refused, refusedBy } from '../enforce/results.js';
import { PolicyEnforcementError } from '../errors.js';
import { isSessionId } from '../internal/guards.js';
import { randomUUID } from '../internal/runtime.js';
import { sessionOf } from '../internal/session.js';
import { optionError, refuseUnknownKeys } from '../options/kit.js';
import type { Pep } from '../pep.js';

export type { ActionResult, FinishResult, Refused, TextResult } from '../enforce/results.js';
export { resultText } from '../enforce/text.js';

/**
 * The key a verified permit travels under beside a tool call: `params._meta['agent-pep/permit']` of an MCP
 * `tools/call` (the guarded client puts it there, a guarded server reads it), and the same key on LangChain's
 * `config.toolCall` (docs/adapters.md). The one home of the name; `agent-pep/mcp` exports it.
 * @remarks A server that does not use `guardMcpServer` (`agent-pep/mcp`) can read it from `extra._meta` and verify it
 * with `createPermitVerifier` against the tool name and the arguments it received, before acting.
 * @example
 * ```ts
 * const permit = extra._meta?.[PERMIT_META_KEY];
 * if (typeof permit !== 'string') return { isError: true, content: [{ type: 'text', text: 'no permit' }] };
 * await verifier.verify(permit, { tool: 'refund_payment', args: receivedArgs });
 * ```
 */
export const PERMIT_META_KEY = 'agent-pep/permit';

/**
 * The `params._meta` key a guarded client puts the policy session under (the session its PEP decided the
 * call in), and a guarded server reads it from (CONTRACT section 16). A response never changes it.
 * @remarks The session is the application's, never the transport's: `Mcp-Session-Id` and anything else
 * a server sends are ignored. A server that trusts no client to name its session passes
 * `guardMcpServer(pep, server, { session: (request, extra) => ... })` instead (from its own auth).
 */
export const SESSION_META_KEY = 'agent-pep/session';

/**
 * Most calls an adapter remembers as held (sent to a person for approval, or suspended) per client or
 * middleware, in `agent-pep/ai`, `agent-pep/mastra` and `agent-pep/langchain` alike: past it the call held
 * longest ago is forgotten, and its resume is refused or sent for approval again (never run unasked).
 */
export const MAX_HELD = 10_000;

/** The enforcement layer an adapter decides through: the client's own, or (a wrapper of a client) one over its public methods. */
export type Enforcement = Omit<Kernel, 'requirePermits'>;

/** Carries the verified args out of a `guardTool` body that must not run anything (a wrapper's fallback). */
class Carried {
  constructor(
    readonly args: Record<string, unknown>,
    readonly permitId: string | undefined,
    readonly decision: import('../decision.js').PolicyDecision,
    readonly signal: AbortSignal | undefined,
    /** The session the wrapped client decided in (`ctx.session` of its `guardTool`). */
    readonly session: unknown,
  ) {}
}

/** A refusal that nobody observes: only for an object that is not a client from `createPep`. */
function unobserved(site: RefusalSite, code: FailClosedCode, message: string, cause?: unknown): Refused {
  const decision = synthesizeBlock(site.stage, randomUUID(), code, message, 0);
  return refusedBy(decision, site.stage === 'action' ? site.tool : undefined, cause);
}

/** A model request decision a wrapper's client made: the settings it lets go on, or undefined (refused). */
function refusalOrPass(decision: import('../decision.js').PolicyDecision, original: Record<string, unknown>) {
  if (decision.verdict !== 'ALLOW' && decision.verdict !== 'WARN') return undefined;
  if (decision.simulated) return undefined;
  try {
    const t = decision.transformedContent;
    const request = t === undefined ? original : (JSON.parse(t) as Record<string, unknown>);
    return { kind: 'passed' as const, request, decision };
  } catch {
    return undefined;
  }
}

/**
 * A wrapper's verified action: the session it was decided in is `sessionOf` the call's option and the
 * session the wrapped client reported; none, or a malformed one, is a refusal (never a made-up session).
 */
function carriedAction(name: string, e: Carried, opts: unknown): ActionResult {
  const session = sessionOf({
    call: (opts as { session?: unknown } | undefined)?.session,
    client: e.session as string,
  });
  if (!isSessionId(session)) {
    return unobserved({ stage: 'action', tool: name }, 'invalid_request', 'the wrapped client named no session');
  }
  return { kind: 'verified', args: e.args, permitId: e.permitId, decision: e.decision, signal: e.signal, session };
}

/**
 * The enforcement layer over a client's public `guardTool` and `guardText` (which are the layer's own):
 * for an object that wraps a client (`{ ...pep }`) and so is not registered. Its own refusals are not
 * observed; `finishAction` is refused (a wrapper's interceptors cannot be reached).
 */
function publicEnforcement(pep: Pep): Enforcement {
  return {
    async decideAction(name, args, opts) {
      try {
        const guarded = pep.guardTool(name, (a, ctx) => {
          throw new Carried(a, ctx.permitId, ctx.decision, ctx.signal, ctx.session);
        });
        const result = await guarded(args as Record<string, unknown>, opts as never);
        return { kind: 'substituted', result, decision: { verdict: 'BLOCK', stage: 'action', requestId: '' } };
      } catch (e) {
        if (e instanceof Carried) return carriedAction(name, e, opts);
        if (e instanceof PolicyEnforcementError) return refusedBy(e.decision, name);
        return unobserved({ stage: 'action', tool: name }, 'invalid_request', 'adapter error', e);
      }
    },
    async decideText(stage, text, opts) {
      try {
        const use = await pep.guardText(stage, text, opts as never);
        return { kind: 'passed', text: use, decision: { verdict: 'ALLOW', stage, requestId: '' } };
      } catch (e) {
        if (e instanceof PolicyEnforcementError) return refusedBy(e.decision, undefined);
        return unobserved({ stage }, 'invalid_request', 'adapter error', e);
      }
    },
    async decideModelRequest(request, opts) {
      if (typeof pep.checkModelRequest !== 'function') {
        return unobserved({ stage: 'context_egress' }, 'invalid_request', 'not a client from createPep');
      }
      try {
        const decision = await pep.checkModelRequest(request as never, opts as never);
        const r = refusalOrPass(decision, request as Record<string, unknown>);
        return r ?? refusedBy(decision, undefined);
      } catch (e) {
        return unobserved({ stage: 'context_egress' }, 'invalid_request', 'adapter error', e);
      }
    },
    hasModelRequestInterceptors: false,
    async finishAction(name) {
      return unobserved({ stage: 'action', tool: name }, 'invalid_request', 'not a client from createPep');
    },
    refuse: unobserved,
  };
}

/**
 * The enforcement layer of `pep`.
 * @throws TypeError when `pep` is not a client from `createPep` (or a wrapper with its `guardTool` and `guardText`)
 */
export function enforcementOf(pep: unknown, scope: string): Enforcement {
  const kernel = kernelOf(pep);
  if (kernel) return kernel;
  const p = pep as Partial<Pep> | null;
  if (typeof p !== 'object' || p === null || typeof p.guardTool !== 'function' || typeof p.guardText !== 'function') {
    throw new TypeError(`${scope}: pep must be a client from createPep`);
  }
  return publicEnforcement(p as Pep);
}

/**
 * Throws now, not at the first call, when the client cannot run tools (no `permits` option, or a
 * wrapper whose `guardTool` refuses).
 */
export function requirePermits(pep: Pep, scope: string): void {
  const kernel = kernelOf(pep);
  if (kernel) kernel.requirePermits(scope);
  else pep.guardTool('agent_pep_probe', () => undefined);
}

/** One option's check: a problem text, or undefined when the value is fine. */
export type OptionRule = (value: unknown) => string | undefined;

/** Common option rules. */
export const RULES = {
  boolean: (v: unknown) => (typeof v === 'boolean' ? undefined : 'expected a boolean'),
  session: (v: unknown) => (isSessionId(v) ? undefined : 'expected a non-empty string'),
  nonEmptyString: (v: unknown) =>
    typeof v === 'string' && v.trim() !== '' ? undefined : 'expected a non-empty string',
  count: (v: unknown) =>
    Number.isSafeInteger(v) && (v as number) >= 0 ? undefined : 'expected a non-negative integer',
  oneOf:
    (...values: string[]) =>
    (v: unknown) =>
      typeof v === 'string' && values.includes(v)
        ? undefined
        : `expected one of ${values.map((x) => `'${x}'`).join(', ')}`,
} as const;

/**
 * Reads an adapter's options strictly: `undefined` is `{}`; anything but an object, an unknown key or a
 * value its rule refuses is a `TypeError` whose `option` names the key (docs/api.md, docs/adapters.md "One rule everywhere").
 */
export function readOptions<T extends object>(scope: string, opts: unknown, rules: Record<string, OptionRule>): T {
  if (opts === undefined) return {} as T;
  if (typeof opts !== 'object' || opts === null || Array.isArray(opts))
    optionError(scope, 'opts', 'expected an object');
  refuseUnknownKeys(scope, opts, new Set(Object.keys(rules)));
  for (const [key, rule] of Object.entries(rules)) {
    const value = (opts as Record<string, unknown>)[key];
    if (value === undefined) continue;
    const problem = rule(value);
    if (problem !== undefined) optionError(scope, key, problem);
  }
  return opts as T;
}

/** Per-call options for the enforcement layer, without undefined members. */
export function callOptions(o: {
  session?: string | undefined;
  signal?: unknown;
  tool?: string | undefined;
  simulated?: boolean;
}) {
  const out: { session?: string; signal?: AbortSignal; tool?: string; simulated?: true } = {};
  if (o.session !== undefined) out.session = o.session;
  if (o.signal instanceof AbortSignal) out.signal = o.signal;
  if (o.tool !== undefined && o.tool !== '') out.tool = o.tool;
  if (o.simulated === true) out.simulated = true;
  return out;
}

/**
 * A bounded memory of what was decided for texts an adapter already checked (a text seen again in a
 * later prompt is not sent again), on `lru-cache`: past `max` entries the one set longest ago is
 * forgotten (setting a key again renews it; reading does not). Forgetting only means checking again,
 * never passing unchecked. `max` 0 remembers nothing; nothing is allocated up front, so a large `max`
 * costs only what is stored.
 */
export class TextMemory<V extends {} | null> {
  // lru-cache's types refuse null values, which it stores as any other (only undefined means absent)
  readonly #entries: LRUCache<string, V & {}> | undefined;
  constructor(readonly max: number) {
    // maxSize with a size of 1 an entry, not `max`: lru-cache allocates `max` slots up front.
    this.#entries = max > 0 ? new LRUCache<string, V & {}>({ maxSize: max, sizeCalculation: () => 1 }) : undefined;
  }
  get(key: string | undefined): V | undefined {
    return key === undefined ? undefined : (this.#entries?.peek(key) as V | undefined);
  }
  set(key: string | undefined, value: V): void {
    if (key === undefined || this.#entries === undefined) return;
    this.#entries.set(key, value as V & {}); // a key set again counts as new
  }
  delete(key: string): void {
    this.#entries?.delete(key);
  }
  get size(): number {
    return this.#entries?.size ?? 0;
  }
}

export type { Ran, ResultCheck, TextStage };
/** Whether a stage is a text stage (re-exported for the adapters). */
export { isTextStage };

const JSON_TYPES: Record<string, (v: unknown) => boolean> = {
  string: (v) => typeof v === 'string',
  number: (v) => typeof v === 'number',
  integer: (v) => Number.isInteger(v),
  boolean: (v) => typeof v === 'boolean',
  null: (v) => v === null,
  array: (v) => Array.isArray(v),
  object: (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
};

function fitsType(schema: Record<string, unknown>, value: unknown): boolean {
  const declared = schema.type;
  const types = typeof declared === 'string' ? [declared] : Array.isArray(declared) ? declared : undefined;
  if (types === undefined) return true; // no type to compare (anyOf, a $ref): left to the tool's own parse
  return types.some((t) => typeof t === 'string' && JSON_TYPES[t]?.(value) !== false);
}

/**
 * The args a tool's body gets when the framework shows only a JSON Schema of its parameters (its own
 * parser hidden, docs/adapters.md "Schemas"): every `default` of an absent property filled in, so that the
 * PDP decides on what runs; a value whose JSON type differs from the declared one is refused, since the
 * hidden parser would coerce it to something the PDP never saw. To 32 levels of nested objects.
 * @returns the args to decide on, or the reason they are refused
 */
export function argsBySchema(
  schema: unknown,
  args: Record<string, unknown>,
  depth = 0,
): { kind: 'args'; args: Record<string, unknown> } | { kind: 'refused'; why: string } {
  const properties = (schema as { properties?: unknown } | null)?.properties;
  if (typeof properties !== 'object' || properties === null || depth > 32) return { kind: 'args', args };
  const out: Record<string, unknown> = { ...args };
  for (const [key, raw] of Object.entries(properties as Record<string, unknown>)) {
    if (typeof raw !== 'object' || raw === null) continue;
    const prop = raw as Record<string, unknown>;
    if (!Object.hasOwn(out, key)) {
      if (Object.hasOwn(prop, 'default')) out[key] = structuredClone(prop.default);
      continue;
    }
    if (!fitsType(prop, out[key])) return { kind: 'refused', why: "the args do not fit the tool's parameters" };
    const nested = out[key];
    if (JSON_TYPES.object?.(nested)) {
      const inner = argsBySchema(prop, nested as Record<string, unknown>, depth + 1);
      if (inner.kind === 'refused') return inner;
      out[key] = inner.args;
    }
  }
  return { kind: 'args', args: out };
}
