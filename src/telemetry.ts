/**
 * OpenTelemetry for every decision and every permit verification (docs/telemetry.md): one
 * `agent_pep.decision` span (kind CLIENT) per decision, the W3C `traceparent` sent to the PDP, and the
 * metrics `pep.decisions`, `pep.decision.duration` and `pep.permit.verifications`.
 *
 * The only importer of `@opentelemetry/api` (an optional peer dependency), and only when the
 * `telemetry` option is given: it is then loaded synchronously with `createRequire` (from
 * `process.getBuiltinModule`, so not even `node:module` is imported otherwise), so `createPep`
 * stays synchronous. The API keeps one global registry (`Symbol.for('opentelemetry.js.api.1')` on
 * `globalThis`), so its CommonJS build loaded here and an ESM copy loaded by the application share
 * the same registered tracer provider, meter provider and propagator.
 *
 * Never content, args, a permit, an API key or a reason in a span, an attribute or a metric: only the
 * stage, verdict, ids, codes, counts, the normalized tool name and the PDP's address.
 * Every call is contained: a tracer, meter or propagator that throws cannot change a decision.
 * @internal
 */
import type * as OtelApi from '@opentelemetry/api';
import type { PolicyDecision } from './decision.js';
import { normalizeToolName } from './internal/tool-name.js';
import { VERSION } from './version.js';

/**
 * The part of an OpenTelemetry `Tracer` agent-pep uses. Declared here (structurally) so that the
 * package's types never require `@opentelemetry/api`; pass `trace.getTracer(...)` or any `Tracer`.
 */
export interface TelemetryTracer {
  startSpan(name: string, options?: object, context?: unknown): unknown;
}

/** The part of an OpenTelemetry `Meter` agent-pep uses; pass `metrics.getMeter(...)` or any `Meter`. */
export interface TelemetryMeter {
  createCounter(name: string, options?: object): unknown;
  createHistogram(name: string, options?: object): unknown;
}

/**
 * The `telemetry` option of `createPep` and `createPermitVerifier`: `true` uses the globally
 * registered tracer and meter (`trace.getTracer('agent-pep')`, `metrics.getMeter('agent-pep')`);
 * an object uses the tracer and/or meter given, and the global one for the other.
 */
export type TelemetryOption = true | { tracer?: TelemetryTracer | undefined; meter?: TelemetryMeter | undefined };

/** The span name of one decision. */
export const SPAN_NAME = 'agent_pep.decision';
/** The instrumentation scope name of the tracer and meter. */
export const SCOPE_NAME = 'agent-pep';

/** Metric names (docs/telemetry.md). */
export const METRICS = Object.freeze({
  decisions: 'pep.decisions',
  duration: 'pep.decision.duration',
  permits: 'pep.permit.verifications',
});

/** Bucket boundaries of `pep.decision.duration`, in seconds (a decision takes about 1 ms to a few seconds). */
const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

type Api = typeof OtelApi;
type Require = (id: string) => unknown;

let cachedApi: Api | undefined;

/**
 * Loads `@opentelemetry/api` synchronously (its CommonJS build; the global registry is shared with
 * any ESM copy), or throws an `Error` naming the package to install.
 * @param load - how to load it (tests pass one that fails)
 * Not exported: the emitted types must never name `@opentelemetry/api` (a user without it would get
 * a type error from our `.d.ts`).
 */
function loadOtelApi(load?: Require): Api {
  if (load === undefined && cachedApi !== undefined) return cachedApi;
  let api: Api;
  try {
    // node:module is fetched here, not imported: the main entry imports nothing it does not need
    const req = load ?? process.getBuiltinModule('node:module').createRequire(import.meta.url);
    api = req('@opentelemetry/api') as Api;
  } catch (cause) {
    throw new Error(
      'agent-pep: the telemetry option needs the package @opentelemetry/api (^1.9): npm install @opentelemetry/api',
      { cause },
    );
  }
  if (load === undefined) cachedApi = api;
  return api;
}

/** A span in flight for one decision. */
export interface DecisionSpan {
  /** The normalized tool name, set once the request is built (`gen_ai.tool.name`). */
  tool: string | undefined;
  /**
   * Adds the trace context of this span to `headers` (`traceparent`, and what the registered propagator
   * adds), never replacing one that is there.
   */
  inject(headers: Record<string, string>): void;
  /**
   * Runs `fn` with this span as the active span, so that an HTTP client instrumentation (e.g. of
   * undici) nests its span under the decision's.
   */
  run<T>(fn: () => T): T;
}

/** The recorder one client or verifier holds when `telemetry` is on. @internal */
export interface Telemetry {
  /** Starts the span of one decision, a child of the active context. */
  start(): DecisionSpan;
  /** Adds the active context's trace context (W3C `traceparent`) to a request that carries several decisions. */
  injectActive(headers: Record<string, string>): void;
  /**
   * Ends the span with the decision's attributes and status, and records the decision metrics.
   * @param seconds - how long the decision took
   */
  end(span: DecisionSpan, decision: PolicyDecision, attempts: number, seconds: number): void;
  /**
   * A decision made without a span in flight (a guard helper's refusal after the PDP's answer):
   * a span from `startedAt` (a `performance.now()` value) to now, and the metrics.
   * @param tool - the tool name as given (normalized here)
   */
  record(decision: PolicyDecision, attempts: number, startedAt: number, tool: string | undefined): void;
  /** One permit verification: `'ok'` or the `PermitVerificationError` code. */
  permit(result: string): void;
  /** Counts the outcome of a permit verification promise and returns it unchanged. */
  countPermit<T>(verification: Promise<T>): Promise<T>;
}

/** Where the decisions go: the `server.address` and `server.port` attributes. */
export interface TelemetryTarget {
  /** The PDP's origin, e.g. `http://127.0.0.1:8787`. */
  origin?: string | undefined;
}

/** The option path and scope used in a `TypeError`. */
interface Scope {
  readonly scope: string;
  readonly fail: (path: string, problem: string) => never;
}

/**
 * Checks a `telemetry` option's shape (no import); `undefined` and `false` mean off.
 * @throws TypeError (through `fail`) naming `telemetry`, `telemetry.tracer`, `telemetry.meter` or an unknown key
 */
export function validateTelemetry(v: unknown, fail: Scope['fail']): TelemetryOption | undefined {
  if (v === undefined || v === false) return undefined;
  if (v === true) return true;
  if (typeof v !== 'object' || v === null) fail('telemetry', 'expected true or { tracer?, meter? }');
  for (const key of Object.keys(v)) {
    if (key !== 'tracer' && key !== 'meter') fail(`telemetry.${key.slice(0, 40)}`, 'unknown option');
  }
  const { tracer, meter } = v as { tracer?: unknown; meter?: unknown };
  if (tracer !== undefined && typeof (tracer as TelemetryTracer | null)?.startSpan !== 'function') {
    fail('telemetry.tracer', 'expected an OpenTelemetry Tracer');
  }
  if (
    meter !== undefined &&
    (typeof (meter as TelemetryMeter | null)?.createCounter !== 'function' ||
      typeof (meter as TelemetryMeter | null)?.createHistogram !== 'function')
  ) {
    fail('telemetry.meter', 'expected an OpenTelemetry Meter');
  }
  return v as TelemetryOption;
}

/** `00-<trace-id>-<span-id>-<flags>` (W3C Trace Context, level 1). */
function traceparentOf(sc: OtelApi.SpanContext): string {
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 1) === 1 ? '01' : '00'}`;
}

/** The HTTP status of the PDP's last answer, when the decision says it. */
function statusOf(d: PolicyDecision, attempts: number): number | undefined {
  const s = d.synthesized;
  if (s === undefined) return attempts > 0 ? 200 : undefined;
  if (s.status !== undefined) return s.status;
  // An ambiguous decision is only ever made from a whole status-200 answer.
  return s.code === 'ambiguous_decision' && attempts > 0 ? 200 : undefined;
}

/** Longest string attribute recorded, in characters (the longest tool name a request may carry). */
const MAX_ATTRIBUTE_CHARS = 256;
/** Most items of an array attribute recorded. */
const MAX_ATTRIBUTE_ITEMS = 64;

/** `s` cut to {@link MAX_ATTRIBUTE_CHARS} characters, never inside a surrogate pair. */
export function capped(s: string): string {
  if (s.length <= MAX_ATTRIBUTE_CHARS) return s;
  const cut = s.slice(0, MAX_ATTRIBUTE_CHARS);
  return cut.isWellFormed() ? cut : cut.slice(0, -1);
}

function safeTool(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  try {
    return normalizeToolName(name);
  } catch {
    return undefined;
  }
}

const NOOP_SPAN: DecisionSpan = {
  tool: undefined,
  inject: () => {},
  run: (fn) => fn(),
};

/**
 * Adds the trace context of `ctx` to `headers`: what the registered propagator writes, and the W3C
 * `traceparent` of `sc` when none did. Never replaces one of our own headers; never throws.
 */
function injectContext(
  api: Api,
  ctx: OtelApi.Context,
  sc: OtelApi.SpanContext | undefined,
  headers: Record<string, string>,
): void {
  try {
    const carrier: Record<string, unknown> = {};
    api.propagation.inject(ctx, carrier);
    // What a propagator adds can never replace one of our own headers (authorization, x-request-id, ...).
    for (const k in carrier) {
      const v = carrier[k];
      const key = k.toLowerCase();
      if (typeof v === 'string' && !Object.hasOwn(headers, key)) headers[key] = v;
    }
    // the SDK's ids are valid hex; a no-op tracer's are all zeros
    if (
      headers.traceparent === undefined &&
      sc &&
      sc.traceId !== api.INVALID_TRACEID &&
      sc.spanId !== api.INVALID_SPANID
    ) {
      headers.traceparent = traceparentOf(sc);
    }
  } catch {
    // a propagator that throws sends no (more) trace context; the decision goes on
  }
}

class Span implements DecisionSpan {
  tool: string | undefined = undefined;
  constructor(
    private readonly api: Api,
    readonly span: OtelApi.Span,
    private readonly ctx: OtelApi.Context,
  ) {}

  inject(headers: Record<string, string>): void {
    let sc: OtelApi.SpanContext | undefined;
    try {
      sc = this.span.spanContext();
    } catch {
      // a span whose context cannot be read sends only what the propagator writes
    }
    injectContext(this.api, this.ctx, sc, headers);
  }

  /**
   * Runs `fn` once, in this span's context when the context manager lets it: `fn`'s own result or
   * error always stands. A context manager that throws (before or after running `fn`), never runs it,
   * runs it twice or later, or returns something else cannot change what the call does.
   */
  run<T>(fn: () => T): T {
    let ran = false;
    let failed = false;
    let result: T | undefined;
    let error: unknown;
    const once = (): T | undefined => {
      if (!ran) {
        ran = true;
        try {
          result = fn();
        } catch (err) {
          failed = true;
          error = err;
        }
      }
      return result;
    };
    try {
      this.api.context.with(this.ctx, once);
    } catch {
      // the context manager's own failure: fn's outcome (or fn run without the context) stands
    }
    if (!ran) {
      // run without the context, and never again through a call the context manager kept for later
      ran = true;
      return fn();
    }
    if (failed) throw error;
    return result as T;
  }
}

/** `span.isRecording()`, true when the span has no such method or it fails (the span is then annotated). */
function isRecording(span: OtelApi.Span): boolean {
  try {
    return span.isRecording?.() !== false;
  } catch {
    return true;
  }
}

/** The three instruments of a recorder (docs/telemetry.md). */
interface Instruments {
  readonly decisions: OtelApi.Counter;
  readonly duration: OtelApi.Histogram;
  readonly permits: OtelApi.Counter;
}

function createInstruments(meter: OtelApi.Meter): Instruments {
  return {
    decisions: meter.createCounter(METRICS.decisions, {
      description: 'Decisions made by the PEP, by stage, verdict and fail-closed code',
      unit: '{decision}',
    }),
    duration: meter.createHistogram(METRICS.duration, {
      description: 'Time from a stage call to its decision',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    }),
    permits: meter.createCounter(METRICS.permits, {
      description: "Permit verifications, by result ('ok' or the PermitVerificationError code)",
      unit: '{verification}',
    }),
  };
}

/** The PDP's address and port (`server.address`, `server.port`), read once from its origin. */
interface Server {
  readonly address: string | undefined;
  readonly port: number | undefined;
}

function serverOf(target: TelemetryTarget): Server {
  if (target.origin === undefined) return { address: undefined, port: undefined };
  const url = new URL(target.origin);
  return {
    address: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80,
  };
}

/**
 * The metric attribute sets, one frozen object per stage, verdict and fail-closed code, made once:
 * a decision's metrics allocate nothing (the SDK may keep the object it is given, which is safe here).
 */
function metricAttributeSets(): (stage: string, verdict: string, code: string | undefined) => OtelApi.Attributes {
  const sets = new Map<string, OtelApi.Attributes>();
  return (stage, verdict, code) => {
    const key = code === undefined ? `${stage}|${verdict}` : `${stage}|${verdict}|${code}`;
    let set = sets.get(key);
    if (set === undefined) {
      set = Object.freeze(
        code === undefined
          ? { 'pep.stage': stage, 'pep.verdict': verdict }
          : { 'pep.stage': stage, 'pep.verdict': verdict, 'pep.fail_closed_code': code },
      );
      sets.set(key, set);
    }
    return set;
  };
}

/** The decision's attributes (docs/telemetry.md) and, for a synthesized BLOCK, status ERROR. */
function annotate(
  api: Api,
  server: Server,
  span: OtelApi.Span,
  d: PolicyDecision,
  attempts: number,
  tool: string | undefined,
): void {
  const attrs: OtelApi.Attributes = {
    'pep.stage': d.stage,
    'pep.verdict': d.verdict,
    'pep.request_id': d.requestId,
    'pep.synthesized': d.synthesized !== undefined,
    'pep.attempts': attempts,
  };
  if (server.address !== undefined) {
    attrs['server.address'] = server.address;
    attrs['server.port'] = server.port;
  }
  // Every attribute a caller, a model or the PDP chose is capped; a refused input records none.
  if (d.decisionId !== undefined) attrs['pep.decision_id'] = capped(d.decisionId);
  if (d.latches !== undefined) attrs['pep.latches'] = d.latches.slice(0, MAX_ATTRIBUTE_ITEMS).map(capped);
  if (d.interceptor !== undefined) attrs['pep.interceptor'] = capped(d.interceptor);
  if (tool !== undefined && d.synthesized?.code !== 'invalid_request') attrs['gen_ai.tool.name'] = capped(tool);
  const status = statusOf(d, attempts);
  if (status !== undefined) attrs['http.response.status_code'] = status;
  if (d.synthesized !== undefined) {
    attrs['pep.fail_closed_code'] = d.synthesized.code;
    attrs['error.type'] = d.synthesized.code;
    span.setStatus({ code: api.SpanStatusCode.ERROR, message: d.synthesized.code });
  }
  span.setAttributes(attrs);
}

/** Ends a decision's span and records its metrics. */
type Finish = (span: OtelApi.Span, d: PolicyDecision, attempts: number, tool: string | undefined, sec: number) => void;

function finisher(api: Api, instruments: Instruments, server: Server): Finish {
  const metricAttributes = metricAttributeSets();
  return (span, d, attempts, tool, sec) => {
    // A span that records nothing (`isRecording()` false: the sampler dropped it, or a no-op tracer's)
    // would discard its attributes and status: they are not built (OpenTelemetry Trace API, Span
    // IsRecording). A span without the method is given them.
    if (isRecording(span)) annotate(api, server, span, d, attempts, tool);
    span.end();
    instruments.duration.record(sec, metricAttributes(d.stage, d.verdict, undefined));
    instruments.decisions.add(1, metricAttributes(d.stage, d.verdict, d.synthesized?.code));
  };
}

/**
 * Makes the recorder of one client (`createPep`) or verifier (`createPermitVerifier`); loads
 * `@opentelemetry/api`.
 * @param load - how to load `@opentelemetry/api` (tests pass one that fails)
 * @throws Error naming `@opentelemetry/api` when it is not installed
 */
export function createTelemetry(option: TelemetryOption, target: TelemetryTarget = {}, load?: Require): Telemetry {
  const api = loadOtelApi(load);
  const given = option === true ? {} : option;
  const tracer = (given.tracer ?? api.trace.getTracer(SCOPE_NAME, VERSION)) as OtelApi.Tracer;
  const meter = (given.meter ?? api.metrics.getMeter(SCOPE_NAME, VERSION)) as OtelApi.Meter;
  const instruments = createInstruments(meter);
  return recorder(api, tracer, finisher(api, instruments, serverOf(target)), instruments.permits);
}

/** The {@link Telemetry} of a tracer: every call contained (telemetry cannot change a decision). */
function recorder(api: Api, tracer: OtelApi.Tracer, finish: Finish, permits: OtelApi.Counter): Telemetry {
  const countPermitResult = (result: string): void => {
    try {
      permits.add(1, { 'pep.permit.result': result });
    } catch {
      // telemetry cannot change a verification
    }
  };
  const startOptions: OtelApi.SpanOptions = { kind: api.SpanKind.CLIENT };
  return {
    start() {
      try {
        const parent = api.context.active();
        const span = tracer.startSpan(SPAN_NAME, startOptions, parent);
        // a tracer that answers no span: the decision goes on without one
        if (typeof span !== 'object' || span === null) return NOOP_SPAN;
        return new Span(api, span, api.trace.setSpan(parent, span));
      } catch {
        return NOOP_SPAN;
      }
    },
    injectActive(headers) {
      try {
        const active = api.context.active();
        injectContext(api, active, api.trace.getSpanContext(active), headers);
      } catch {
        // telemetry cannot change a decision
      }
    },
    end(handle, decision, attempts, seconds) {
      if (!(handle instanceof Span)) return;
      try {
        finish(handle.span, decision, attempts, handle.tool, seconds);
      } catch {
        // telemetry cannot change a decision
      }
    },
    record(decision, attempts, startedAt, tool) {
      try {
        const now = performance.now();
        const span = tracer.startSpan(
          SPAN_NAME,
          { kind: api.SpanKind.CLIENT, startTime: performance.timeOrigin + startedAt },
          api.context.active(),
        );
        // A refused input's tool name is not even normalized (it may be 200,000 characters).
        const named = decision.synthesized?.code === 'invalid_request' ? undefined : safeTool(tool);
        finish(span, decision, attempts, named, (now - startedAt) / 1000);
      } catch {
        // telemetry cannot change a decision
      }
    },
    permit: countPermitResult,
    countPermit(verification) {
      return verification.then(
        (v) => {
          countPermitResult('ok');
          return v;
        },
        (err: unknown) => {
          const code = (err as { code?: unknown } | null)?.code;
          countPermitResult(typeof code === 'string' ? code : 'error');
          throw err;
        },
      );
    },
  };
}
