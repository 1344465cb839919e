/**
 * OpenTelemetry test doubles from the SDK itself: spans through `InMemorySpanExporter`, metrics through
 * a `MetricReader` collected on demand, and an AsyncLocalStorage context manager (the SDK's own lives in
 * a package not installed here) so a test can make a span active around a decision.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { type Context, type ContextManager, context, ROOT_CONTEXT } from '@opentelemetry/api';
import { type DataPoint, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';

/** A reader that exports nothing by itself: `collect()` is called by the test. */
class TestReader extends MetricReader {
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

/** One collected metric data point, flattened. */
export interface Point {
  name: string;
  unit: string;
  attributes: Record<string, unknown>;
  value: unknown;
}

export interface Otel {
  tracerProvider: BasicTracerProvider;
  meterProvider: MeterProvider;
  exporter: InMemorySpanExporter;
  tracer: ReturnType<BasicTracerProvider['getTracer']>;
  meter: ReturnType<MeterProvider['getMeter']>;
  /** Every data point of every metric collected so far (cumulative). */
  points(): Promise<Point[]>;
  shutdown(): Promise<void>;
}

export function makeOtel(): Otel {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new TestReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    tracerProvider,
    meterProvider,
    exporter,
    tracer: tracerProvider.getTracer('test'),
    meter: meterProvider.getMeter('test'),
    async points() {
      const { resourceMetrics } = await reader.collect();
      const out: Point[] = [];
      for (const scope of resourceMetrics.scopeMetrics) {
        for (const m of scope.metrics) {
          for (const dp of m.dataPoints as DataPoint<unknown>[]) {
            out.push({
              name: m.descriptor.name,
              unit: m.descriptor.unit,
              attributes: { ...dp.attributes },
              value: dp.value,
            });
          }
        }
      }
      return out;
    },
    async shutdown() {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    },
  };
}

/** The smallest context manager on AsyncLocalStorage: enough for `context.with` across awaits. */
export class AlsContextManager implements ContextManager {
  private readonly als = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.als.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.als.run(ctx, () => fn.apply(thisArg, args));
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.als.disable();
    return this;
  }
}

/** Registers an {@link AlsContextManager} globally; returns the function that removes it. */
export function useAlsContext(): () => void {
  const manager = new AlsContextManager();
  context.setGlobalContextManager(manager);
  return () => {
    context.disable();
  };
}
