/**
 * Telemetry records no attribute from a refused input, and caps every attribute that comes from a
 * caller, a model or the PDP (docs/telemetry.md): a 200,007-character tool name never reaches a span.
 */
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPep, type Pep, type PepOptions } from '../../../src/index.js';
import { answer, type FakePdp, startFakePdp } from '../../support/fake-pdp.js';
import { makeOtel, type Otel } from '../../support/otel.js';

let pdp: FakePdp;
let otel: Otel;
const peps: Pep[] = [];

beforeAll(async () => {
  pdp = await startFakePdp();
});
afterAll(async () => {
  await pdp.close();
});
afterEach(async () => {
  for (const p of peps.splice(0)) await p.close();
  await otel?.shutdown();
});

function pep(extra: Partial<PepOptions> = {}): Pep {
  otel = makeOtel();
  const p = createPep({
    pdpUrl: pdp.url,
    agentId: 'support-ai',
    session: 's',
    retries: 0,
    permits: false,
    telemetry: { tracer: otel.tracer, meter: otel.meter },
    ...extra,
  });
  peps.push(p);
  return p;
}

function spans(): ReadableSpan[] {
  return otel.exporter.getFinishedSpans();
}

function longestAttribute(s: ReadableSpan): number {
  let max = 0;
  for (const v of Object.values(s.attributes)) {
    for (const x of Array.isArray(v) ? v : [v]) if (typeof x === 'string') max = Math.max(max, x.length);
  }
  return max;
}

const HUGE_TOOL = `t${'x'.repeat(200_006)}`;

describe('attributes from a refused input', () => {
  it('authorizeActions records no tool name for an invalid_request call', async () => {
    const [d] = await pep().authorizeActions([{ tool: HUGE_TOOL, args: {} }]);
    expect(d?.synthesized?.code).toBe('invalid_request');
    const [s] = spans();
    expect(s?.attributes['pep.fail_closed_code']).toBe('invalid_request');
    expect(s?.attributes['gen_ai.tool.name']).toBeUndefined();
    expect(longestAttribute(s as ReadableSpan)).toBeLessThanOrEqual(256);
  });

  it('authorizeAction records no tool name for an invalid_request call', async () => {
    const d = await pep().authorizeAction(HUGE_TOOL, {});
    expect(d.synthesized?.code).toBe('invalid_request');
    expect(spans()[0]?.attributes['gen_ai.tool.name']).toBeUndefined();
  });
});

describe('attributes from a caller or the PDP are capped at 256 characters', () => {
  it('an interceptor name and the PDP decisionId and latches', async () => {
    pdp.handler = (req, res) =>
      answer(res, {
        verdict: 'BLOCK',
        requestId: req.body.requestId,
        decisionId: 'd'.repeat(5000),
        latches: ['l'.repeat(5000), 'ok'],
      });
    const p = pep({
      interceptors: [{ name: 'i'.repeat(5000), stages: ['output'], before: () => ({ action: 'deny', reason: 'no' }) }],
    });
    await p.checkInput('x');
    await p.checkOutput('y');
    const [pdpBlock, denied] = spans();
    expect(pdpBlock?.attributes['pep.decision_id']).toBe('d'.repeat(256));
    expect(pdpBlock?.attributes['pep.latches']).toEqual(['l'.repeat(256), 'ok']);
    expect(denied?.attributes['pep.interceptor']).toBe('i'.repeat(256));
    for (const s of spans()) expect(longestAttribute(s)).toBeLessThanOrEqual(256);
  });
});
