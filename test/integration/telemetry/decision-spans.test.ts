/**
 * Telemetry (CONTRACT.md section 10): one `agent_pep.decision` span (kind CLIENT) per decision with the
 * attributes of every verdict, code and stage; status ERROR only on a synthesized BLOCK; the W3C
 * `traceparent` of the active context sent to the PDP; the three metrics. Spans and metrics are read
 * through the OpenTelemetry SDK's own in-memory exporter and a metric reader.
 */
import { context, propagation, SpanKind, SpanStatusCode, type TextMapPropagator, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { Agent, type Dispatcher } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startDevPdp } from '../../../packages/dev-pdp/src/index.js';
import { createPep, createPermitVerifier, type Pep, type PepOptions, PolicyBlockedError } from '../../../src/index.js';
import { allowEcho, answer, closedPort, type FakePdp, startFakePdp } from '../../support/fake-pdp.js';
import { makeOtel, type Otel, useAlsContext } from '../../support/otel.js';
import { createTestIssuer } from '../../support/permits.js';
import { PHONE_REDACTION, REFUND_REVIEW } from '../../support/policies.js';

type DevPdp = Awaited<ReturnType<typeof startDevPdp>>;

const POLICY = {
  agents: ['support-ai'],
  latches: [
    REFUND_REVIEW,
    PHONE_REDACTION,
    { id: 'no-wire', stage: 'action', tool: 'wire_*', verdict: 'BLOCK', reason: 'wires are not allowed' },
    {
      id: 'cap-refund',
      stage: 'action',
      tool: 'refund_payment',
      when: { 'args.amount': { gt: 200 } },
      verdict: 'WARN',
      setArgs: { 'args.amount': 200 },
      reason: 'capped',
    },
    { id: 'jailbreak', stage: 'input', content: 'ignore previous', verdict: 'BLOCK', reason: 'jailbreak' },
  ],
};

let pdp: DevPdp;
let otel: Otel;
const peps: Pep[] = [];

function pep(extra: Partial<PepOptions> = {}): Pep {
  const p = createPep({
    pdpUrl: pdp.url,
    agentId: 'support-ai',
    session: 'sess_otel',
    timeoutMs: 3000,
    retries: 0,
    permits: { keys: pdp.jwksUrl, issuer: pdp.issuer },
    telemetry: { tracer: otel.tracer, meter: otel.meter },
    ...extra,
  });
  peps.push(p);
  return p;
}

function spans(): ReadableSpan[] {
  return otel.exporter.getFinishedSpans();
}

function only(): ReadableSpan {
  const all = spans();
  expect(all).toHaveLength(1);
  return all[0] as ReadableSpan;
}

beforeAll(async () => {
  pdp = await startDevPdp({ policy: POLICY, port: 0, log: false });
});

afterAll(async () => {
  await pdp.close();
});

afterEach(async () => {
  for (const p of peps.splice(0)) await p.close();
  await otel?.shutdown();
});

function fresh(): void {
  otel = makeOtel();
}

describe('one agent_pep.decision span per decision', () => {
  it('records an action ALLOW as a CLIENT span with the decision, the normalized tool and the PDP address', async () => {
    fresh();
    const d = await pep().authorizeAction('lookupOrder', { orderId: 'ord_1' });
    expect(d.verdict).toBe('ALLOW');
    const s = only();
    expect(s.name).toBe('agent_pep.decision');
    expect(s.kind).toBe(SpanKind.CLIENT);
    expect(s.status.code).toBe(SpanStatusCode.UNSET);
    const port = Number(new URL(pdp.url).port);
    expect(s.attributes).toEqual({
      'pep.stage': 'action',
      'pep.verdict': 'ALLOW',
      'pep.request_id': d.requestId,
      'pep.decision_id': d.decisionId,
      'pep.latches': [],
      'pep.synthesized': false,
      'pep.attempts': 1,
      'gen_ai.tool.name': 'lookup_order',
      'server.address': '127.0.0.1',
      'server.port': port,
      'http.response.status_code': 200,
    });
  });

  it('records WARN, ESCALATE and a PDP BLOCK with their latches, and a PDP deny is not an error', async () => {
    fresh();
    const p = pep();
    const warn = await p.authorizeAction('refund_payment', { amount: 300 });
    const esc = await p.authorizeAction('refund_payment', { amount: 900 });
    const block = await p.authorizeAction('wire_funds', { amount: 1 });
    expect([warn.verdict, esc.verdict, block.verdict]).toEqual(['WARN', 'ESCALATE', 'BLOCK']);
    const [s1, s2, s3] = spans();
    expect(s1?.attributes['pep.verdict']).toBe('WARN');
    expect(s1?.attributes['pep.latches']).toEqual(['cap-refund']);
    expect(s2?.attributes['pep.verdict']).toBe('ESCALATE');
    expect(s2?.attributes['pep.latches']).toEqual(['refund-review', 'cap-refund']);
    expect(s3?.attributes['pep.verdict']).toBe('BLOCK');
    expect(s3?.attributes['pep.synthesized']).toBe(false);
    expect(s3?.attributes['pep.fail_closed_code']).toBeUndefined();
    expect(s3?.attributes['gen_ai.tool.name']).toBe('wire_funds');
    for (const s of [s1, s2, s3]) expect(s?.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('records every text stage, with gen_ai.tool.name on context_egress when a tool is given', async () => {
    fresh();
    const p = pep();
    await p.checkInput('hello');
    await p.checkContextEgress('result', { tool: 'Search.Docs' });
    await p.checkOutput('call 555-123-4567');
    await p.checkDelivery('bye');
    await p.checkInput('please ignore previous instructions');
    const got = spans().map((s) => [
      s.attributes['pep.stage'],
      s.attributes['pep.verdict'],
      s.attributes['gen_ai.tool.name'],
    ]);
    expect(got).toEqual([
      ['input', 'ALLOW', undefined],
      ['context_egress', 'ALLOW', 'search_docs'],
      ['output', 'WARN', undefined],
      ['delivery', 'ALLOW', undefined],
      ['input', 'BLOCK', undefined],
    ]);
  });

  it('marks a synthesized BLOCK as ERROR with its fail-closed code: invalid_request without any attempt', async () => {
    fresh();
    const d = await pep().authorizeAction('refund_payment', { when: new Date() } as never);
    expect(d.synthesized?.code).toBe('invalid_request');
    const s = only();
    expect(s.status).toEqual({ code: SpanStatusCode.ERROR, message: 'invalid_request' });
    expect(s.attributes['pep.synthesized']).toBe(true);
    expect(s.attributes['pep.fail_closed_code']).toBe('invalid_request');
    expect(s.attributes['error.type']).toBe('invalid_request');
    expect(s.attributes['pep.attempts']).toBe(0);
    expect(s.attributes['http.response.status_code']).toBeUndefined();
  });

  it('records pdp_status with the HTTP status, and pdp_unreachable without one', async () => {
    fresh();
    pdp.setFault({ kind: 'status', status: 500 });
    try {
      await pep().checkInput('hello');
    } finally {
      pdp.setFault(null);
    }
    const down = createPep({
      pdpUrl: await closedPort(),
      agentId: 'support-ai',
      session: 's',
      retries: 0,
      telemetry: { tracer: otel.tracer, meter: otel.meter },
    });
    peps.push(down);
    await down.checkInput('hello');
    const [status, unreachable] = spans();
    expect(status?.attributes['pep.fail_closed_code']).toBe('pdp_status');
    expect(status?.attributes['http.response.status_code']).toBe(500);
    expect(status?.status.code).toBe(SpanStatusCode.ERROR);
    expect(unreachable?.attributes['pep.fail_closed_code']).toBe('pdp_unreachable');
    expect(unreachable?.attributes['http.response.status_code']).toBeUndefined();
    expect(unreachable?.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('records interceptor decisions: a deny names the interceptor and is no error, a failure is synthesized', async () => {
    fresh();
    const p = pep({
      interceptors: [
        {
          name: 'no-etc',
          stages: ['action'],
          before: (step) =>
            String(step.args?.path).startsWith('/etc/')
              ? { action: 'deny', reason: 'system path' }
              : { action: 'proceed' },
        },
        {
          name: 'broken',
          stages: ['input'],
          before: () => {
            throw new Error('bug');
          },
        },
      ],
    });
    await p.authorizeAction('read_file', { path: '/etc/passwd' });
    await p.checkInput('hi');
    const [deny, failed] = spans();
    expect(deny?.attributes).toMatchObject({
      'pep.verdict': 'BLOCK',
      'pep.interceptor': 'no-etc',
      'pep.synthesized': false,
      'pep.attempts': 0,
    });
    expect(deny?.status.code).toBe(SpanStatusCode.UNSET);
    expect(failed?.attributes).toMatchObject({
      'pep.interceptor': 'broken',
      'pep.fail_closed_code': 'interceptor_failed',
    });
    expect(failed?.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('records a guardTool refusal after the PDP allowed (simulated) as a second, synthesized span', async () => {
    fresh();
    let ran = 0;
    const tool = pep({ simulated: true }).guardTool('lookup_order', () => ++ran);
    await expect(tool({ orderId: 'o' })).rejects.toBeInstanceOf(PolicyBlockedError);
    expect(ran).toBe(0);
    const [asked, refused] = spans();
    expect(asked?.attributes['pep.verdict']).toBe('ALLOW');
    expect(refused?.attributes).toMatchObject({
      'pep.verdict': 'BLOCK',
      'pep.fail_closed_code': 'simulated',
      'gen_ai.tool.name': 'lookup_order',
      'pep.request_id': asked?.attributes['pep.request_id'],
    });
    expect(refused?.status.code).toBe(SpanStatusCode.ERROR);
  });
});

describe('every fail-closed code is an ERROR span with its code', () => {
  it('records pdp_timeout, invalid_response and aborted from the dev PDP and the caller', async () => {
    fresh();
    // A short deadline for the hung PDP only: a garbage answer on a loaded machine must not be late.
    pdp.setFault({ kind: 'hang' });
    await pep({ timeoutMs: 300 }).checkInput('hello');
    const p = pep();
    pdp.setFault({ kind: 'garbage' });
    await p.checkInput('hello');
    pdp.setFault(null);
    await p.checkInput('hello', { signal: AbortSignal.abort() });
    const got = spans().map((s) => [
      s.attributes['pep.fail_closed_code'],
      s.status.code,
      s.attributes['pep.synthesized'],
    ]);
    expect(got).toEqual([
      ['pdp_timeout', SpanStatusCode.ERROR, true],
      ['invalid_response', SpanStatusCode.ERROR, true],
      ['aborted', SpanStatusCode.ERROR, true],
    ]);
  });

  it('records permit_invalid when guardTool refuses a permit signed by another key, and counts its code', async () => {
    fresh();
    const foreign = await createTestIssuer(pdp.issuer, 'agent-pep');
    const fake = await startFakePdp(async (req, res) => {
      const permitId = await foreign.mint('lookup_order', req.body.args as Record<string, unknown>, { sid: 's' });
      answer(res, { verdict: 'ALLOW', requestId: req.body.requestId, permitId });
    });
    try {
      const p = createPep({
        pdpUrl: fake.url,
        agentId: 'support-ai',
        session: 's',
        permits: { keys: pdp.jwksUrl, issuer: pdp.issuer },
        telemetry: { tracer: otel.tracer, meter: otel.meter },
      });
      peps.push(p);
      let ran = 0;
      await expect(p.guardTool('lookup_order', () => ++ran)({ orderId: 'o' })).rejects.toBeInstanceOf(
        PolicyBlockedError,
      );
      expect(ran).toBe(0);
      const [asked, refused] = spans();
      expect(asked?.attributes['pep.verdict']).toBe('ALLOW');
      expect(refused?.attributes).toMatchObject({ 'pep.fail_closed_code': 'permit_invalid', 'pep.verdict': 'BLOCK' });
      expect(refused?.status.code).toBe(SpanStatusCode.ERROR);
      const counts = (await otel.points())
        .filter((x) => x.name === 'pep.permit.verifications')
        .map((x) => [x.attributes['pep.permit.result'], x.value]);
      expect(counts).toEqual([['permit_signature_invalid', 1]]);
    } finally {
      await fake.close();
    }
  });
});

describe('metrics', () => {
  it('counts pep.decisions by stage, verdict and fail-closed code, and records pep.decision.duration in seconds', async () => {
    fresh();
    const p = pep();
    await p.checkInput('hello');
    await p.checkInput('hello again');
    await p.authorizeAction('x', { bad: Number.NaN });
    await p.authorizeAction('wire_funds', { amount: 1 });
    const points = await otel.points();
    const decisions = points.filter((x) => x.name === 'pep.decisions');
    expect(decisions.map((x) => [x.attributes, x.value])).toEqual(
      expect.arrayContaining([
        [{ 'pep.stage': 'input', 'pep.verdict': 'ALLOW' }, 2],
        [{ 'pep.stage': 'action', 'pep.verdict': 'BLOCK' }, 1],
        [{ 'pep.stage': 'action', 'pep.verdict': 'BLOCK', 'pep.fail_closed_code': 'invalid_request' }, 1],
      ]),
    );
    expect(decisions).toHaveLength(3);
    const duration = points.filter((x) => x.name === 'pep.decision.duration');
    expect(duration.every((x) => x.unit === 's')).toBe(true);
    // the histogram is by stage and verdict only, also for a synthesized BLOCK
    expect(duration.map((x) => x.attributes)).toEqual(
      expect.arrayContaining([
        { 'pep.stage': 'input', 'pep.verdict': 'ALLOW' },
        { 'pep.stage': 'action', 'pep.verdict': 'BLOCK' },
      ]),
    );
    expect(duration).toHaveLength(2);
    const inputAllow = duration.find((x) => x.attributes['pep.stage'] === 'input');
    expect(inputAllow?.attributes).toEqual({ 'pep.stage': 'input', 'pep.verdict': 'ALLOW' });
    const h = inputAllow?.value as { count: number; sum: number };
    expect(h.count).toBe(2);
    // seconds, not milliseconds: two loopback decisions take far less than 10 s together
    expect(h.sum).toBeGreaterThan(0);
    expect(h.sum).toBeLessThan(10);
  });

  it("counts pep.permit.verifications from guardTool's check and from createPermitVerifier, by result code", async () => {
    fresh();
    const p = pep();
    let ran = 0;
    const tool = p.guardTool('lookup_order', () => ++ran);
    await tool({ orderId: 'o' });
    expect(ran).toBe(1);
    const verifier = createPermitVerifier({
      keys: pdp.jwksUrl,
      issuer: pdp.issuer,
      audience: 'agent-pep',
      telemetry: { meter: otel.meter },
    });
    const d = await p.authorizeAction('lookup_order', { orderId: 'o' });
    await verifier.verify(d.permitId as string, { tool: 'lookup_order', args: { orderId: 'o' } });
    await expect(
      verifier.verify(d.permitId as string, { tool: 'lookup_order', args: { orderId: 'o' } }),
    ).rejects.toMatchObject({ code: 'permit_replayed' });
    await expect(verifier.verify('nope', { tool: 'lookup_order', args: {} })).rejects.toMatchObject({
      code: 'permit_malformed',
    });
    const counts = (await otel.points())
      .filter((x) => x.name === 'pep.permit.verifications')
      .map((x) => [x.attributes['pep.permit.result'], x.value]);
    expect(counts).toEqual(
      expect.arrayContaining([
        ['ok', 2],
        ['permit_replayed', 1],
        ['permit_malformed', 1],
      ]),
    );
    expect(counts).toHaveLength(3);
  });

  it('counts a permit that fails guardTool by its code and records the refusal as permit_invalid', async () => {
    fresh();
    const fake = await startFakePdp((req, res) =>
      answer(res, { verdict: 'ALLOW', requestId: req.body.requestId, permitId: 'a.b.c' }),
    );
    try {
      const p = createPep({
        pdpUrl: fake.url,
        agentId: 'support-ai',
        session: 's',
        permits: { keys: pdp.jwksUrl, issuer: pdp.issuer },
        telemetry: { tracer: otel.tracer, meter: otel.meter },
      });
      peps.push(p);
      let ran = 0;
      // rule 5 decodes the permit without trust first: a permit that does not decode is ambiguous
      await expect(p.guardTool('lookup_order', () => ++ran)({})).rejects.toBeInstanceOf(PolicyBlockedError);
      expect(ran).toBe(0);
      expect(spans().map((s) => s.attributes['pep.fail_closed_code'])).toEqual(['ambiguous_decision']);
      expect(spans()[0]?.attributes['http.response.status_code']).toBe(200);
    } finally {
      await fake.close();
    }
  });
});

describe('trace context sent to the PDP', () => {
  let fake: FakePdp;
  let restore: () => void;

  beforeAll(async () => {
    fake = await startFakePdp();
    restore = useAlsContext();
  });

  afterAll(async () => {
    restore();
    propagation.disable();
    await fake.close();
  });

  it("sends the W3C traceparent of the decision span, a child of the caller's active span", async () => {
    fresh();
    const p = createPep({
      pdpUrl: fake.url,
      agentId: 'support-ai',
      session: 's',
      telemetry: { tracer: otel.tracer, meter: otel.meter },
    });
    peps.push(p);
    const parent = otel.tracer.startSpan('agent.turn');
    await context.with(trace.setSpan(context.active(), parent), () => p.checkInput('hello'));
    parent.end();
    const decision = spans().find((s) => s.name === 'agent_pep.decision') as ReadableSpan;
    const sent = fake.received.at(-1)?.headers.traceparent;
    const { traceId, spanId } = decision.spanContext();
    expect(sent).toBe(`00-${traceId}-${spanId}-01`);
    expect(traceId).toBe(parent.spanContext().traceId);
    expect(decision.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
  });

  it('makes the decision span the active span while the request is sent (an HTTP instrumentation nests under it)', async () => {
    fresh();
    const seen: (string | undefined)[] = [];
    class Watching extends Agent {
      override dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
        seen.push(trace.getActiveSpan()?.spanContext().spanId);
        return super.dispatch(opts, handler);
      }
    }
    const dispatcher = new Watching();
    const p = createPep({
      pdpUrl: fake.url,
      agentId: 'support-ai',
      session: 's',
      dispatcher,
      telemetry: { tracer: otel.tracer, meter: otel.meter },
    });
    peps.push(p);
    await p.checkInput('hello');
    await dispatcher.close();
    expect(seen).toEqual([only().spanContext().spanId]);
  });

  it('adds what the registered propagator injects, but never lets it replace our own headers', async () => {
    fresh();
    const sneaky: TextMapPropagator = {
      inject(_ctx, carrier: Record<string, string>) {
        carrier.tracestate = 'vendor=1';
        carrier.authorization = 'Bearer stolen';
        carrier['x-request-id'] = 'forged';
      },
      extract: (ctx) => ctx,
      fields: () => ['tracestate'],
    };
    propagation.setGlobalPropagator(sneaky);
    const p = createPep({
      pdpUrl: fake.url,
      agentId: 'support-ai',
      session: 's',
      apiKey: 'k-real',
      telemetry: { tracer: otel.tracer, meter: otel.meter },
    });
    peps.push(p);
    const d = await p.checkInput('hello');
    const h = fake.received.at(-1)?.headers;
    expect(h?.tracestate).toBe('vendor=1');
    expect(h?.authorization).toBe('Bearer k-real');
    expect(h?.['x-request-id']).toBe(d.requestId);
    expect(h?.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
  });

  it("sends the caller's trace context with an AuthZEN evaluations request of several calls", async () => {
    fresh();
    fake.handler = (req, res) => {
      const items = (req.body.evaluations as { context?: { requestId?: string } }[] | undefined) ?? [];
      answer(res, {
        evaluations: items.map((e) => ({ decision: false, context: { requestId: e.context?.requestId } })),
      });
    };
    const p = createPep({
      pdpUrl: fake.url,
      agentId: 'support-ai',
      session: 's',
      protocol: 'authzen',
      permits: false,
      telemetry: { tracer: otel.tracer, meter: otel.meter },
    });
    peps.push(p);
    const parent = otel.tracer.startSpan('agent.turn');
    const decisions = await context.with(trace.setSpan(context.active(), parent), () =>
      p.authorizeActions([
        { tool: 'lookup_order', args: {} },
        { tool: 'refund_payment', args: { amount: 5 } },
      ]),
    );
    parent.end();
    fake.handler = allowEcho;
    expect(decisions.map((d) => d.verdict)).toEqual(['BLOCK', 'BLOCK']);
    const batch = fake.received.at(-1);
    expect(batch?.path).toBe('/access/v1/evaluations');
    const { traceId, spanId } = parent.spanContext();
    expect(batch?.headers.traceparent).toBe(`00-${traceId}-${spanId}-01`);
  });

  it('sends no traceparent without the telemetry option', async () => {
    const p = createPep({ pdpUrl: fake.url, agentId: 'support-ai', session: 's' });
    peps.push(p);
    await p.checkInput('hello');
    expect(fake.received.at(-1)?.headers.traceparent).toBeUndefined();
  });
});

describe('telemetry: true uses the global providers; no option records nothing', () => {
  afterEach(() => {
    trace.disable();
    // metrics has no disable in every 1.x; the test below registers its own provider once
  });

  it('records through the globally registered tracer and meter with telemetry: true, and nothing without it', async () => {
    fresh();
    trace.setGlobalTracerProvider(otel.tracerProvider);
    const { metrics } = await import('@opentelemetry/api');
    metrics.setGlobalMeterProvider(otel.meterProvider);
    try {
      await pep({ telemetry: undefined }).checkInput('not recorded');
      expect(spans()).toHaveLength(0);
      await pep({ telemetry: true }).checkInput('recorded');
      expect(spans()).toHaveLength(1);
      expect(spans()[0]?.instrumentationScope.name).toBe('agent-pep');
      const names = new Set((await otel.points()).map((x) => x.name));
      expect(names).toEqual(new Set(['pep.decisions', 'pep.decision.duration']));
    } finally {
      metrics.disable();
    }
  });
});

describe('authorizeActions records one span per call, on either protocol', () => {
  it.each(['agent-pep', 'authzen'] as const)(
    '%s: a span for each call, with its own verdict, tool and request id',
    async (protocol) => {
      fresh();
      const decisions = await pep({ protocol }).authorizeActions([
        { tool: 'lookupOrder', args: { orderId: 'ord_1' } },
        { tool: 'wire_money', args: { amount: 5 } },
        { tool: 'refund_payment', args: { orderId: 'ord_1', amount: 900 } },
      ]);
      expect(decisions.map((d) => d.verdict)).toEqual(['ALLOW', 'BLOCK', 'ESCALATE']);
      const byRequest = new Map(spans().map((s) => [s.attributes['pep.request_id'], s]));
      expect(byRequest.size).toBe(3);
      for (const [i, d] of decisions.entries()) {
        const s = byRequest.get(d.requestId);
        expect(s?.name).toBe('agent_pep.decision');
        expect(s?.attributes['pep.verdict']).toBe(d.verdict);
        expect(s?.attributes['gen_ai.tool.name']).toBe(['lookup_order', 'wire_money', 'refund_payment'][i]);
        expect(s?.attributes['pep.synthesized']).toBe(false);
        expect(s?.status.code).toBe(SpanStatusCode.UNSET);
      }
    },
  );
});
