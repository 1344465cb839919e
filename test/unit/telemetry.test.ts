/**
 * The telemetry option (CONTRACT.md section 10): its validation, the error when `@opentelemetry/api`
 * is missing, and containment: a tracer, meter or propagator that throws cannot change a decision.
 */
import { describe, expect, it } from 'vitest';
import { createPep, createPermitVerifier } from '../../src/index.js';
import { createTelemetry, validateTelemetry } from '../../src/telemetry.js';
import { makeOtel } from '../support/otel.js';

const BASE = { pdpUrl: 'http://127.0.0.1:9', agentId: 'a', session: 's' };

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
