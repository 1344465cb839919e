/**
 * The telemetry option (CONTRACT.md section 10): its validation, the error when `@opentelemetry/api`
 * is missing, and containment: a tracer, meter or propagator that throws cannot change a decision.
 */
import { describe, expect, it } from 'vitest';
import { createPep, createPermitVerifier } from '../../src/index.js';
import { createTelemetry, validateTelemetry } from '../../src/telemetry.js';
import { makeOtel } from '../support/otel.js';

const BASE = { pdpUrl: 'http://127.0.0.1:9', agentId: 'a', session: 's' };

/**
 * Runs `body` with a global context manager whose `with` is `withImpl` (the rest does nothing), and
 * removes it after.
 */
async function underContextManager(
  withImpl: (ctx: unknown, fn: (...a: unknown[]) => unknown, thisArg: unknown, ...args: unknown[]) => unknown,
  body: () => Promise<void>,
): Promise<void> {
  const { context, ROOT_CONTEXT } = await import('@opentelemetry/api');
  const manager = {
    active: () => ROOT_CONTEXT,
    with: withImpl,
    bind: (_ctx: unknown, target: unknown) => target,
    enable() {
      return this;
    },
    disable() {
      return this;
    },
  };
  expect(context.setGlobalContextManager(manager as never)).toBe(true);
  try {
    await body();
  } finally {
    context.disable();
  }
}

function optionOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(TypeError);
    return (e as { option?: string }).option;
  }
  return undefined;
}

describe('the telemetry option is validated at construction', () => {
  it('names the offending path: a non-object, a tracer or meter that is not one, an unknown key', () => {
    expect(optionOf(() => createPep({ ...BASE, telemetry: 'yes' as never }))).toBe('telemetry');
    expect(optionOf(() => createPep({ ...BASE, telemetry: { tracer: {} as never } }))).toBe('telemetry.tracer');
    expect(optionOf(() => createPep({ ...BASE, telemetry: { meter: { createCounter() {} } as never } }))).toBe(
      'telemetry.meter',
    );
    expect(optionOf(() => createPep({ ...BASE, telemetry: { traces: true } as never }))).toBe('telemetry.traces');
    const verifier = { keys: { keys: [] }, issuer: 'i', audience: 'a' };
    expect(optionOf(() => createPermitVerifier({ ...verifier, telemetry: { meter: 1 } as never }))).toBe(
      'telemetry.meter',
    );
  });

  it('treats undefined and false as off, and accepts true and SDK tracers and meters', () => {
    const fail = (path: string): never => {
      throw new Error(path);
    };
    expect(validateTelemetry(undefined, fail)).toBeUndefined();
    expect(validateTelemetry(false, fail)).toBeUndefined();
    expect(validateTelemetry(true, fail)).toBe(true);
    const otel = makeOtel();
    const opt = { tracer: otel.tracer, meter: otel.meter };
    expect(validateTelemetry(opt, fail)).toBe(opt);
  });
});

describe('@opentelemetry/api is an optional peer dependency', () => {
  it('throws an Error naming the package to install when it cannot be loaded', () => {
    const missing = (): never => {
      throw Object.assign(new Error("Cannot find module '@opentelemetry/api'"), { code: 'MODULE_NOT_FOUND' });
    };
    expect(() => createTelemetry(true, {}, missing)).toThrow(/npm install @opentelemetry\/api/);
  });

  it('loads the same API whose global registry an ESM import sees (one Symbol.for registry)', async () => {
    const esm = await import('@opentelemetry/api');
    const otel = makeOtel();
    esm.trace.setGlobalTracerProvider(otel.tracerProvider);
    try {
      // createTelemetry loads the CommonJS build with createRequire; the provider was registered through the import
      const telemetry = createTelemetry(true);
      const span = telemetry.start();
      telemetry.end(span, { verdict: 'ALLOW', stage: 'input', requestId: 'r' }, 1, 0.001);
      expect(otel.exporter.getFinishedSpans().map((s) => s.name)).toEqual(['agent_pep.decision']);
    } finally {
      esm.trace.disable();
      await otel.shutdown();
    }
  });
});

describe('telemetry cannot change a decision', () => {
  it('decides as usual when the tracer, the span, the meter and the instruments all throw', async () => {
    const boom = (): never => {
      throw new Error('telemetry bug');
    };
    const tracer = { startSpan: boom };
    const meter = {
      createCounter: () => ({ add: boom }),
      createHistogram: () => ({ record: boom }),
    };
    const pep = createPep({ ...BASE, telemetry: { tracer, meter } });
    const d = await pep.authorizeAction('t', { d: new Date() } as never);
    expect(d.synthesized?.code).toBe('invalid_request');
    await pep.close();
  });

  it('decides as usual when span methods throw', async () => {
    const boom = (): never => {
      throw new Error('telemetry bug');
    };
    const span = { setAttributes: boom, setStatus: boom, end: boom, spanContext: boom };
    const pep = createPep({ ...BASE, telemetry: { tracer: { startSpan: () => span } } });
    const d = await pep.checkInput(1 as never);
    expect(d.synthesized?.code).toBe('invalid_request');
    await pep.close();
  });
});

describe('a span that records nothing gets no attributes (OpenTelemetry Trace API, Span IsRecording)', () => {
  const DECISION = {
    stage: 'action',
    verdict: 'BLOCK',
    requestId: 'r1',
    synthesized: { code: 'pdp_unavailable' },
  } as const;

  function doubles(recording: (() => boolean) | undefined) {
    const calls: string[] = [];
    const span: Record<string, unknown> = {
      setAttributes: () => calls.push('setAttributes'),
      setStatus: () => calls.push('setStatus'),
      end: () => calls.push('end'),
      spanContext: () => ({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 0 }),
    };
    if (recording) span.isRecording = recording;
    const meter = {
      createCounter: () => ({ add: (_v: number, a: Record<string, unknown>) => calls.push(`add ${a['pep.verdict']}`) }),
      createHistogram: () => ({
        record: (_v: number, a: Record<string, unknown>) => calls.push(`record ${a['pep.verdict']}`),
      }),
    };
    return { calls, telemetry: createTelemetry({ tracer: { startSpan: () => span }, meter }) };
  }

  it('a span whose isRecording() is false is ended, unannotated, and the metrics are recorded', () => {
    const { calls, telemetry } = doubles(() => false);
    telemetry.end(telemetry.start(), DECISION as never, 1, 0.01);
    expect(calls).toEqual(['end', 'record BLOCK', 'add BLOCK']);
  });

  it('a recording span, or one without isRecording, gets its attributes and the ERROR status', () => {
    for (const recording of [() => true, undefined]) {
      const { calls, telemetry } = doubles(recording);
      telemetry.end(telemetry.start(), DECISION as never, 1, 0.01);
      expect(calls).toEqual(['setStatus', 'setAttributes', 'end', 'record BLOCK', 'add BLOCK']);
    }
  });

  it("with the SDK's AlwaysOffSampler: no span is exported and both metric points are", async () => {
    const { AlwaysOffSampler, BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = await import(
      '@opentelemetry/sdk-trace-base'
    );
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      sampler: new AlwaysOffSampler(),
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    const otel = makeOtel();
    const telemetry = createTelemetry({ tracer: provider.getTracer('t'), meter: otel.meter });
    const span = telemetry.start();
    const headers: Record<string, string> = {};
    span.inject(headers);
    telemetry.end(span, DECISION as never, 1, 0.01);
    expect(exporter.getFinishedSpans()).toHaveLength(0);
    // an unsampled span still passes its trace on, flagged not sampled (W3C Trace Context)
    expect(headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    const names = (await otel.points()).map((p) => p.name).sort();
    expect(names).toEqual(['pep.decision.duration', 'pep.decisions']);
    await provider.shutdown();
    await otel.shutdown();
  });
});

describe('telemetry cannot change a decision: a span or context manager that fails while the request is sent', () => {
  /** The decision's verdict and fail-closed code, which telemetry must leave as they are. */
  const outcome = (d: { verdict: string; synthesized?: { code: string } | undefined }) =>
    `${d.verdict} ${d.synthesized?.code ?? '-'}`;

  async function decideWith(telemetry?: { tracer: { startSpan: () => unknown } }): Promise<string> {
    const pep = createPep({ ...BASE, retries: 0, ...(telemetry && { telemetry }) });
    try {
      return outcome(await pep.checkInput('hello'));
    } finally {
      await pep.close();
    }
  }

  it("decides as without telemetry when the span's spanContext throws or startSpan returns no span", async () => {
    const without = await decideWith();
    expect(without).toBe('BLOCK pdp_unreachable');
    const throwing = {
      isRecording: () => true,
      setAttributes() {},
      setStatus() {},
      end() {},
      spanContext(): never {
        throw new Error('telemetry bug');
      },
    };
    for (const span of [throwing, undefined, null, 'span']) {
      expect(await decideWith({ tracer: { startSpan: () => span } })).toBe(without);
    }
  });

  it('decides as without telemetry when the context manager throws after running the call', async () => {
    const without = await decideWith();
    await underContextManager(
      (_ctx, fn, thisArg, ...args) => {
        fn.apply(thisArg, args);
        throw new Error('context manager bug');
      },
      async () => {
        const otel = makeOtel();
        expect(await decideWith({ tracer: otel.tracer as never })).toBe(without);
        await otel.shutdown();
      },
    );
  });
});

describe('a span whose isRecording is broken is still ended and the decision metrics recorded (containment of finish)', () => {
  const DECISION = { stage: 'input', verdict: 'ALLOW', requestId: 'r1' } as const;

  it('isRecording not a function, throwing, a getter that throws, or a Proxy that throws on it', () => {
    const boom = (): never => {
      throw new Error('telemetry bug');
    };
    const broken: Record<string, (span: object) => object> = {
      'not a function': (span) => Object.assign(span, { isRecording: true }),
      throwing: (span) => Object.assign(span, { isRecording: boom }),
      'getter that throws': (span) => Object.defineProperty(span, 'isRecording', { get: boom }),
      'Proxy that throws on isRecording': (span) =>
        new Proxy(span, { get: (t, k) => (k === 'isRecording' ? boom() : Reflect.get(t, k)) }),
    };
    for (const [name, make] of Object.entries(broken)) {
      const calls: string[] = [];
      const span = make({ setAttributes() {}, setStatus() {}, end: () => calls.push('end') });
      const meter = {
        createCounter: () => ({ add: () => calls.push('add') }),
        createHistogram: () => ({ record: () => calls.push('record') }),
      };
      const telemetry = createTelemetry({ tracer: { startSpan: () => span }, meter });
      telemetry.end(telemetry.start(), DECISION as never, 1, 0.01);
      expect({ name, calls }).toEqual({ name, calls: ['end', 'record', 'add'] });
    }
  });
});

describe("a decision's call runs once, with its own outcome, whatever the context manager does", () => {
  const cases: Record<string, (fn: () => unknown) => unknown> = {
    'runs it twice': (fn) => {
      fn();
      return fn();
    },
    'never runs it': () => 'nothing',
    'answers something else': (fn) => {
      fn();
      return 'another value';
    },
    'throws before running it': () => {
      throw new Error('context manager bug');
    },
    'throws after running it': (fn) => {
      fn();
      throw new Error('context manager bug');
    },
    'runs it later, after answering': (fn) => {
      queueMicrotask(() => fn());
      setTimeout(() => fn(), 0);
    },
  };

  it.each(Object.keys(cases))('a context manager that %s', async (name) => {
    const behave = cases[name] as (fn: () => unknown) => unknown;
    await underContextManager(
      (_ctx, fn) => behave(fn as () => unknown),
      async () => {
        const otel = makeOtel();
        const span = createTelemetry({ tracer: otel.tracer, meter: otel.meter }).start();
        let runs = 0;
        expect(span.run(() => ++runs)).toBe(1);
        await new Promise((resolve) => setTimeout(resolve, 5));
        expect(runs).toBe(1);
        const failure = new Error('the call failed');
        expect(() =>
          span.run(() => {
            throw failure;
          }),
        ).toThrow(failure);
        await otel.shutdown();
      },
    );
  });
});
